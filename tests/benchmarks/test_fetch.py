"""``guard bench fetch`` through its real download path, against a loopback HTTP mirror.

The mirror (``GUARD_DATA_MIRROR``) serves what GitHub would: repository archives at
``/codeload/OWNER/REPO/tar.gz/REV`` (one top folder ``REPO-REV/``, the files at their paths in the
repository) and single files at ``/raw/OWNER/REPO/REV/PATH``, built here from the bundled samples.
The samples are not the upstream files, so the tests pin the samples' sha256 with a lock made from
them (``guard_bench.fetch.LOCK_FILE`` patched for the test only); the production lock is checked
against the upstream copies where this machine has them.
"""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guard_bench import fetch
from guard_bench.cli import SAMPLES
from guard.cli import app

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "datasets"


class Mirror:
    """A loopback server with the archives and files of every source, from the bundled samples."""

    def __init__(self, root: Path = SAMPLES) -> None:
        self.root = root
        self.requests: list[str] = []
        self.tamper: dict[str, bytes] = {}  # upstream path -> bytes served instead
        self.extra: dict[str, bytes] = {}  # upstream path -> bytes added to the archive only
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                mirror.requests.append(self.path)
                body = mirror.answer(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def files(self, repo: str, revision: str) -> dict[str, bytes]:
        """Path in the repository -> bytes, for every source of ``repo``@``revision``."""
        out: dict[str, bytes] = {}
        for s in fetch.SOURCES.values():
            folder = self.root / s.dest
            if (s.repo, s.revision) != (repo, revision) or not folder.is_dir():
                continue
            for p in folder.rglob("*"):
                if p.is_file():
                    rel = p.relative_to(folder).as_posix()
                    out[f"{s.upstream}/{rel}" if s.upstream else rel] = p.read_bytes()
        return out | self.tamper

    def answer(self, path: str) -> bytes | None:
        parts = path.strip("/").split("/")
        if parts[0] == "codeload" and len(parts) == 5 and parts[3] == "tar.gz":
            repo, revision = f"{parts[1]}/{parts[2]}", parts[4]
            files = self.files(repo, revision) | self.extra
            if not files:
                return None
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                for name, data in sorted(files.items()):
                    info = tarfile.TarInfo(f"{parts[2]}-{revision}/{name}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
            return buf.getvalue()
        if parts[0] == "raw" and len(parts) > 4:
            repo, revision, inner = f"{parts[1]}/{parts[2]}", parts[3], "/".join(parts[4:])
            return self.files(repo, revision).get(inner)
        return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Mirror]:
    """The mirror, the environment pointing at it, and a lock pinning the samples' hashes."""
    server = Mirror()
    lock = tmp_path / "samples.lock.json"
    lock.write_text(json.dumps(fetch.make_lock(SAMPLES)), encoding="utf-8")
    monkeypatch.setattr(fetch, "LOCK_FILE", lock)
    monkeypatch.setenv(fetch.MIRROR_ENV, server.url)
    monkeypatch.setenv(fetch.DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.setattr(fetch, "TIMEOUT_SECONDS", 5)
    yield server
    server.close()


def _invoke(*args: str) -> object:
    return CliRunner().invoke(app, list(args))


def test_fetch_then_run_gives_the_figures_of_the_fetched_data(mirror: Mirror, tmp_path: Path) -> None:
    """The README's two commands on a machine with no data folder: fetch ACEBench and Fail-TaLMs
    through the real download path, then run them; the figures are those of the same files read in place."""
    data = tmp_path / "data"
    fetched = _invoke("bench", "fetch", "acebench", "fail-talms")
    assert fetched.exit_code == 0, fetched.output
    assert f"downloaded, every sha256 checked (chenchen0103/ACEBench@56dd66cf) -> {data / 'acebench' / 'data_en'}" in fetched.output
    assert "next: guard bench run acebench fail-talms\n" in fetched.output
    # archives, not file by file: one request per repository and commit
    assert sorted(r.split("/tar.gz/")[0] for r in mirror.requests) == ["/codeload/EduardoTrevino/Fail-TaLMs",
                                                                         "/codeload/chenchen0103/ACEBench"]
    assert (data / "acebench/data_en/data_special_incomplete.json").read_bytes() == \
        (SAMPLES / "acebench/data_en/data_special_incomplete.json").read_bytes()
    assert (data / "fail-talms/benchmark/Original/Books/query_1.json").is_file()
    assert (data / "fail-talms/outputs").is_dir()

    # the second command, as fetch printed it (the data folder is the fetch folder: no --data-dir)
    run = _invoke("bench", "run", "acebench", "fail-talms", "--split", "all", "--out", str(tmp_path / "out"))
    assert run.exit_code == 0, run.output
    got = json.loads((tmp_path / "out" / "results.json").read_text())
    assert got["suite"] == "acebench,fail-talms" and list(got["suites"]) == ["acebench", "fail-talms"]
    assert got["data"] == {"dir": str(data.resolve()), "bundled_samples": False}
    assert f"report: {tmp_path / 'out' / 'report.md'}" in run.output
    same = _invoke("bench", "run", "acebench", "fail-talms", "--split", "all", "--data-dir", str(SAMPLES),
                   "--out", str(tmp_path / "samples"))
    assert same.exit_code == 0, same.output
    want = json.loads((tmp_path / "samples" / "results.json").read_text())
    assert want["data"]["bundled_samples"] is True
    for suite in ("acebench", "fail-talms"):
        assert got["suites"][suite]["n_cases"] == want["suites"][suite]["n_cases"] > 0
        assert got["suites"][suite]["paper_metrics"] == want["suites"][suite]["paper_metrics"]


def test_a_second_fetch_checks_the_files_and_downloads_nothing(mirror: Mirror) -> None:
    assert _invoke("bench", "fetch", "acebench").exit_code == 0
    mirror.requests.clear()
    again = _invoke("bench", "fetch", "acebench")
    assert again.exit_code == 0, again.output
    assert "already there, every sha256 checked" in again.output and mirror.requests == []


def test_a_file_that_does_not_match_its_sha256_is_never_written(mirror: Mirror, tmp_path: Path) -> None:
    mirror.tamper["data_all/data_en/data_special_incomplete.json"] = b'{"id": "tampered"}\n'
    result = _invoke("bench", "fetch", "acebench")
    assert result.exit_code == 1
    assert "does not match its pinned sha256" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "data" / "acebench").exists()
    assert not [p for p in (tmp_path / "data").iterdir() if p.name.startswith(".guard-fetch-")]


def test_archive_members_outside_the_pinned_files_are_not_extracted(mirror: Mirror, tmp_path: Path) -> None:
    mirror.extra["data_all/data_en/../../../escape.json"] = b"{}"
    mirror.extra["data_all/data_en/unpinned.json"] = b"{}"
    assert _invoke("bench", "fetch", "acebench").exit_code == 0
    assert not (tmp_path / "data" / "acebench" / "data_en" / "unpinned.json").exists()
    assert not list(tmp_path.rglob("escape.json"))


def test_files_fetched_one_by_one_from_a_large_repository(mirror: Mirror, tmp_path: Path) -> None:
    """API-Bank lives in one folder of a large repository: its files come from the raw host, at two commits."""
    result = _invoke("bench", "fetch", "reflectool")
    assert result.exit_code == 0, result.output
    assert {r.split("/")[4] for r in mirror.requests} == {"1d769008", "483554ea"}
    assert all(r.startswith("/raw/AlibabaResearch/DAMO-ConvAI/") for r in mirror.requests)
    assert (tmp_path / "data/api-bank/test-data/level-1-api.json").is_file()
    assert "not published" in result.output  # ReflecTool-Bench's own data: said, not pretended


def test_unpinned_sources_are_skipped_unless_asked_and_then_hashes_are_printed(mirror: Mirror, tmp_path: Path) -> None:
    skipped = _invoke("bench", "fetch", "tool-reflection")
    assert skipped.exit_code == 0 and "no sha256 pinned" in skipped.output
    assert not (tmp_path / "data" / "tool-reflection").exists()
    # the sample's file under the upstream name, served by the mirror
    mirror.tamper["benchmark/test_qwen_1000.jsonl"] = next((SAMPLES / "tool-reflection").glob("*.jsonl")).read_bytes()
    taken = _invoke("bench", "fetch", "tool-reflection", "--allow-unpinned")
    assert taken.exit_code == 0, taken.output
    assert "unpinned" in taken.output and "sha256 " in taken.output
    assert (tmp_path / "data/tool-reflection/test_qwen_1000.jsonl").is_file()


def test_an_unreachable_mirror_is_a_short_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(fetch.MIRROR_ENV, "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv(fetch.DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.setattr(fetch, "ATTEMPTS", 1)
    result = _invoke("bench", "fetch", "acebench")
    assert result.exit_code == 1
    assert "GUARD_DATA_MIRROR" in result.output and "Traceback" not in result.output


def test_a_mirror_that_is_no_url_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(fetch.MIRROR_ENV, "file:///etc")
    monkeypatch.setenv(fetch.DATA_DIR_ENV, str(tmp_path / "data"))
    result = _invoke("bench", "fetch", "acebench")
    assert result.exit_code == 1 and "not an http(s) URL" in result.output


def test_a_lock_for_another_commit_is_refused_but_a_full_hash_of_the_same_one_is_not(
        mirror: Mirror, monkeypatch: pytest.MonkeyPatch) -> None:
    source = fetch.SOURCES["acebench"]
    lock = fetch.load_lock()
    lock["acebench"]["revision"] = "0123abcd"
    with pytest.raises(fetch.FetchError, match="make the lock again"):
        fetch.fetch_source(source, Path("unused"), lock)
    full = dataclasses.replace(source, revision=source.revision + "0" * 32)
    assert fetch._same_commit(fetch.load_lock()["acebench"]["revision"], full.revision)


def test_a_dest_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = _invoke("bench", "fetch", "acebench", "--dest", str(tmp_path / "file"))
    assert result.exit_code == 2 and "is not a folder" in result.stderr


def test_an_unknown_suite_gets_the_list_and_a_suggestion(tmp_path: Path) -> None:
    result = _invoke("bench", "fetch", "acebnch", "--dest", str(tmp_path))
    assert result.exit_code == 2
    assert "did you mean acebench?" in result.output and "fail-talms" in result.output


def test_every_suite_names_its_sources_and_what_its_loader_needs() -> None:
    from guard_bench.suites import SUITES

    assert set(fetch.SUITE_SOURCES) == set(SUITES) == set(fetch.SUITE_NEEDS)
    assert all(k in fetch.SOURCES for keys in fetch.SUITE_SOURCES.values() for k in keys)


def test_the_production_lock_pins_the_sources_revisions() -> None:
    lock = fetch.load_lock()
    assert {"acebench", "fail-talms", "api-bank-test-data", "api-bank-dialogues"} <= set(lock)
    for key, entry in lock.items():
        source = fetch.SOURCES[key]
        assert (entry["repo"], entry["revision"], entry["upstream"]) == (source.repo, source.revision, source.upstream)
        assert entry["files"] and all(len(h) == 64 for h in entry["files"].values())


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="no copy of the upstream files beside the project")
def test_the_production_lock_matches_the_upstream_files_where_they_are_here() -> None:
    lock = fetch.load_lock()
    for key, entry in lock.items():
        folder = UPSTREAM / fetch.SOURCES[key].dest
        for rel, digest in entry["files"].items():
            assert fetch.sha256_file(folder / rel) == digest, f"{key}: {rel}"


def test_the_fetched_folder_is_what_a_run_reads_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from guard_bench.cli import default_data_dir

    monkeypatch.setenv(fetch.DATA_DIR_ENV, str(tmp_path / "mine"))
    assert default_data_dir() == tmp_path / "mine"
    monkeypatch.delenv(fetch.DATA_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert fetch.default_dest() == tmp_path / "cache" / "guard" / "datasets"


def test_an_empty_data_folder_names_the_files_and_the_fetch_command(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _invoke("bench", "run", "acebench", "--data-dir", str(empty), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "acebench/data_en/data_special_incomplete.json" in result.output
    assert f"get them with: guard bench fetch acebench --dest {empty}" in result.output


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="no copy of the upstream files beside the project")
def test_the_production_lock_fetches_the_upstream_files_through_the_download_path(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The real lock, unpatched, against a mirror that serves the upstream copies at GitHub's layout:
    every pinned ACEBench and Fail-TaLMs file arrives and matches, and the loaders read the same cases."""
    from guard_bench.datasets import acebench, fail_talms

    server = Mirror(UPSTREAM)
    try:
        monkeypatch.setenv(fetch.MIRROR_ENV, server.url)
        result = _invoke("bench", "fetch", "acebench", "fail-talms", "--dest", str(tmp_path / "data"))
    finally:
        server.close()
    assert result.exit_code == 0, result.output
    assert "acebench: 34 files" in result.output and "fail-talms: 2304 files" in result.output
    for loader in (acebench, fail_talms):
        fetched, in_place = loader.load(tmp_path / "data"), loader.load(UPSTREAM)
        assert [c.id for c in fetched] == [c.id for c in in_place] and len(fetched) > 500


def test_a_partial_data_folder_says_what_is_missing_and_how_to_restore_it(tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    (partial / "acebench" / "data_en").mkdir(parents=True)
    name = "data_special_incomplete.json"
    (partial / "acebench" / "data_en" / name).write_bytes((SAMPLES / "acebench" / "data_en" / name).read_bytes())
    result = _invoke("bench", "run", "acebench", "--data-dir", str(partial), "--out", str(tmp_path / "out"))
    line = next(x for x in result.output.splitlines() if x.startswith("incomplete acebench: "))
    assert "33 file(s) of ACEBench (English) are missing" in line
    assert "acebench/data_en/data_agent_multi_step.json" in line and "and 30 more" in line
    assert line.endswith(f"guard bench fetch acebench --dest {partial} restores them")
    assert fetch.incomplete("acebench", SAMPLES.parent / "nowhere") == []
