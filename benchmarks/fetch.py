"""``guard bench fetch``: download the public datasets at pinned revisions, check them, lay them out.

Each **source** is one folder of one upstream repository at one commit. A pinned source has the
sha256 of every file it brings in ``benchmarks/datasets.lock.json``; a file that does not match is
never written (the download is staged in a temporary folder and moved into place only when every
file matched). Sources are downloaded from GitHub, either as the repository archive at the commit
(``codeload.github.com``: small repositories with many files) or file by file
(``raw.githubusercontent.com``: one folder of a large repository), and laid out under the
destination as the loaders read them (the same layout as ``docs/datasets.md``).

``GUARD_DATA_MIRROR=URL`` replaces both hosts: archives are then read from
``URL/codeload/OWNER/REPO/tar.gz/REV`` and files from ``URL/raw/OWNER/REPO/REV/PATH``. The tests
serve archives and files built from the bundled samples that way, on a loopback port.

The lock is made from a local copy of the upstream files with ``python -m guard_bench.fetch lock
DIR`` (DIR laid out as the destination is).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

LOCK_FILE = Path(__file__).with_name("datasets.lock.json")
MIRROR_ENV = "GUARD_DATA_MIRROR"
DATA_DIR_ENV = "GUARD_DATA_DIR"
CODELOAD = "https://codeload.github.com"
RAW = "https://raw.githubusercontent.com"
TIMEOUT_SECONDS = 60
ATTEMPTS = 3
#: Largest download accepted (an archive or one file), so a wrong URL cannot fill the disk.
MAX_BYTES = 2 * 1024**3


class FetchError(Exception):
    """A download that failed, or files that did not match their pinned sha256: nothing was written."""


@dataclass(frozen=True)
class Source:
    """One folder of one upstream repository at one commit, and where it goes under the destination."""

    key: str
    title: str
    repo: str  # owner/name on GitHub
    revision: str  # the commit, as the datasets' provenance records it
    upstream: str  # the folder inside the repository
    dest: str  # the folder under the destination
    licence: str
    method: str  # "archive" | "files"
    #: Files to take when no lock pins them (an unpinned source); a pinned source takes the lock's.
    names: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/tree/{self.revision}/{self.upstream}".rstrip("/")


_BFCL_DATA = tuple(f"BFCL_v4_{c}.json" for c in ("irrelevance", "live_irrelevance", "simple_python", "live_simple",
                                                   "multi_turn_miss_param", "multi_turn_miss_func"))
_BFCL_ANSWERS = tuple(f"possible_answer/BFCL_v4_{c}.json" for c in ("simple_python", "live_simple",
                                                                      "multi_turn_miss_param", "multi_turn_miss_func"))
_BFCL_DOCS = tuple(f"multi_turn_func_doc/{n}.json" for n in (
    "gorilla_file_system", "math_api", "message_api", "posting_api", "ticket_api", "trading_bot", "travel_booking",
    "vehicle_control", "web_search", "memory_kv", "memory_vector", "memory_rec_sum"))

SOURCES: dict[str, Source] = {s.key: s for s in (
    Source("acebench", "ACEBench (English)", "chenchen0103/ACEBench", "56dd66cf", "data_all/data_en",
           "acebench/data_en", "MIT", "archive"),
    # benchmark/ (the queries) and outputs/ (the published LLM runs' answers), from one archive
    Source("fail-talms", "Fail-TaLMs queries and recorded LLM answers", "EduardoTrevino/Fail-TaLMs", "d40a0e8f", "",
           "fail-talms", "MIT", "archive"),
    Source("api-bank-test-data", "API-Bank level-1 test set", "AlibabaResearch/DAMO-ConvAI", "1d769008",
           "api-bank/test-data", "api-bank/test-data", "Apache-2.0", "files"),
    Source("api-bank-dialogues", "API-Bank level-1 recorded dialogues", "AlibabaResearch/DAMO-ConvAI", "483554ea",
           "api-bank/lv1-lv2-samples/level-1-given-desc", "api-bank/lv1-lv2-samples/level-1-given-desc",
           "Apache-2.0", "files"),
    Source("bfcl", "BFCL v4 (the categories the suite reads)", "ShishirPatil/gorilla", "6ea57973",
           "berkeley-function-call-leaderboard/bfcl_eval/data", "bfcl", "Apache-2.0", "files",
           names=_BFCL_DATA + _BFCL_ANSWERS + _BFCL_DOCS),
    Source("tool-reflection", "Tool-Reflection-Bench test set", "MeiGen-AI/Tool-Reflection-Bench", "291bb3e6",
           "benchmark", "tool-reflection", "MIT", "files", names=("test_qwen_1000.jsonl",)),
)}

#: Suite -> the sources its loader reads.
SUITE_SOURCES: dict[str, tuple[str, ...]] = {
    "acebench": ("acebench",),
    "fail-talms": ("fail-talms",),
    "api-bank-ict": ("api-bank-test-data",),
    "critictool": ("acebench", "api-bank-test-data"),
    "reflectool": ("api-bank-test-data", "api-bank-dialogues"),
    "bfcl": ("bfcl",),
    "tool-reflection": ("tool-reflection",),
    "tool-reflection-rebuilt": ("api-bank-test-data", "api-bank-dialogues"),
}

#: Suite -> what its loader needs to run (paths under the data folder), for the "missing files" lines.
SUITE_NEEDS: dict[str, tuple[str, ...]] = {
    "acebench": ("acebench/data_en/data_special_incomplete.json", "acebench/data_en/data_*.json",
                 "acebench/data_en/possible_answer/data_*.json"),
    "fail-talms": ("fail-talms/benchmark/Original/", "fail-talms/benchmark/{Underspecified,Replaceable,Non-replaceable,No-tools}/",
                   "fail-talms/outputs/ (optional: the recorded LLM answers)"),
    "api-bank-ict": ("api-bank/test-data/level-1-api.json",),
    "critictool": ("critictool/**/*.json (the published files), or acebench/data_en/data_normal_*.json "
                   "or api-bank/test-data/level-1-api.json (the rebuilt cases)",),
    "reflectool": ("api-bank/test-data/level-1-api.json", "api-bank/lv1-lv2-samples/level-1-given-desc/*.jsonl"),
    "bfcl": ("bfcl/BFCL_v4_<category>.json (one of: irrelevance, live_irrelevance, simple_python, live_simple, "
             "multi_turn_miss_param, multi_turn_miss_func)", "bfcl/possible_answer/", "bfcl/multi_turn_func_doc/"),
    "tool-reflection": ("tool-reflection/*.jsonl",),
    "tool-reflection-rebuilt": ("api-bank/test-data/level-1-api.json", "api-bank/lv1-lv2-samples/level-1-given-desc/*.jsonl"),
}

#: What fetch cannot download, and why (said when such a suite is asked for).
NOT_FETCHED: dict[str, str] = {
    "critictool": ("CRITICTOOL's published files are released on the Hugging Face Hub (linked from "
                   "github.com/Shellorley0513/CriticTool); this project never had a copy, so no revision or "
                   "sha256 is pinned and fetch does not download them. Put them under DEST/critictool/ to run the "
                   "published cases; the rebuilt cases read the ACEBench and API-Bank files fetched here."),
    "reflectool": "ReflecTool-Bench's data is not published: the suite rebuilds its protocol on API-Bank (fetched here).",
    "api-bank-ict": ("the ICT paper's data is released only on a model hub and not pinned here: the suite rebuilds its "
                     "protocol on API-Bank level-1 (fetched here)."),
}


def default_dest() -> Path:
    """``$GUARD_DATA_DIR``, else ``$XDG_CACHE_HOME/guard/datasets`` (``~/.cache/guard/datasets``)."""
    if env := os.environ.get(DATA_DIR_ENV):
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "guard" / "datasets"


def load_lock(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The pinned sha256 of every file, by source: ``{source: {"files": {relpath: sha256}, "bytes": n}}``."""
    data = json.loads((path or LOCK_FILE).read_text(encoding="utf-8"))
    return data["sources"]


def sources_for(names: Iterable[str]) -> list[Source]:
    """The sources of the suites (or ``all``) asked for, each once, in order."""
    keys: list[str] = []
    for name in names:
        for key in (list(SOURCES) if name == "all" else SUITE_SOURCES[name]):
            if key not in keys:
                keys.append(key)
    return [SOURCES[k] for k in keys]


def mirror() -> str | None:
    value = os.environ.get(MIRROR_ENV, "").strip().rstrip("/")
    if value and urllib.parse.urlsplit(value).scheme not in ("http", "https"):
        raise FetchError(f"{MIRROR_ENV}={value!r} is not an http(s) URL")
    return value or None


def archive_url(source: Source) -> str:
    base = f"{m}/codeload" if (m := mirror()) else CODELOAD
    return f"{base}/{source.repo}/tar.gz/{source.revision}"


def file_url(source: Source, rel: str) -> str:
    base = f"{m}/raw" if (m := mirror()) else RAW
    path = urllib.parse.quote(f"{source.upstream}/{rel}" if source.upstream else rel)
    return f"{base}/{source.repo}/{source.revision}/{path}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Fetched:
    """What fetching one source did."""

    source: Source
    dest: Path
    files: int
    bytes: int
    status: str  # what was done, as printed
    hashes: dict[str, str]


def fetch_source(source: Source, dest_root: Path, lock: dict[str, dict[str, Any]] | None, *,
                 allow_unpinned: bool = False, progress: Callable[[int, int], None] | None = None) -> Fetched:
    """Download ``source`` into ``dest_root/source.dest``; raise ``FetchError`` (nothing written) on
    any failure or sha256 mismatch. A source already there with every file matching is not downloaded again."""
    pinned = (lock or {}).get(source.key)
    if pinned is None and not allow_unpinned:
        raise FetchError(f"{source.key}: no sha256 is pinned for it (this project had no copy of the full files); "
                         "--allow-unpinned downloads it unchecked and prints the hashes")
    if pinned and (pinned.get("repo") != source.repo or not _same_commit(str(pinned.get("revision")), source.revision)):
        raise FetchError(f"{source.key}: the lock pins {pinned.get('repo')}@{pinned.get('revision')}, not "
                         f"{source.repo}@{source.revision}: make the lock again")
    wanted: dict[str, str | None] = dict(pinned["files"]) if pinned else {n: None for n in source.names}
    target = dest_root / source.dest
    if pinned and _matches(target, wanted):
        return Fetched(source, target, len(wanted), _size(target, wanted), "already there, every sha256 checked", dict(wanted))  # type: ignore[arg-type]
    dest_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".guard-fetch-", dir=dest_root) as tmp:
        staging = Path(tmp)
        if source.method == "archive":
            got = _from_archive(source, wanted, staging, progress)
        else:
            got = _from_files(source, wanted, staging, progress)
        if missing := sorted(set(wanted) - set(got)):
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise FetchError(f"{source.key}: the download lacks {len(missing)} pinned file(s): {shown}")
        for rel in got:
            final = target / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, final)
    status = "downloaded, every sha256 checked" if pinned else "downloaded (unpinned: not checked)"
    return Fetched(source, target, len(got), _size(target, got), status, got)


def _same_commit(a: str, b: str) -> bool:
    """Whether two commit hashes, either abbreviated, name the same commit."""
    return bool(a) and bool(b) and (a.startswith(b) or b.startswith(a))


def _matches(target: Path, wanted: dict[str, str | None]) -> bool:
    return all((target / rel).is_file() and sha256_file(target / rel) == digest for rel, digest in wanted.items())


def _size(target: Path, files: Iterable[str]) -> int:
    return sum((target / rel).stat().st_size for rel in files)


def _safe_rel(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return bool(parts) and not PurePosixPath(rel).is_absolute() and ".." not in parts and "\\" not in rel


def _check(source: Source, rel: str, data_hash: str, wanted: dict[str, str | None]) -> None:
    expected = wanted[rel]
    if expected is not None and data_hash != expected:
        raise FetchError(f"{source.key}: {rel} does not match its pinned sha256 (expected {expected}, got {data_hash}); "
                         "nothing was written")


def _open(url: str) -> Any:
    """The response for ``url``, retried with backoff on connection errors and 5xx answers."""
    request = urllib.request.Request(url, headers={"User-Agent": "guard-bench-fetch"})
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS)  # noqa: S310 (http(s) only: checked)
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == ATTEMPTS:
                raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            if attempt == ATTEMPTS:
                reason = getattr(exc, "reason", exc)
                raise FetchError(f"{url}: {reason} (no network? {MIRROR_ENV} points fetch at a mirror)") from exc
        time.sleep(0.5 * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def _download(url: str, path: Path) -> str:
    """Stream ``url`` into ``path``; its sha256."""
    digest, size = hashlib.sha256(), 0
    with _open(url) as response, path.open("wb") as fh:
        for block in iter(lambda: response.read(1 << 20), b""):
            size += len(block)
            if size > MAX_BYTES:
                raise FetchError(f"{url}: larger than {MAX_BYTES} bytes")
            digest.update(block)
            fh.write(block)
    return digest.hexdigest()


def _from_archive(source: Source, wanted: dict[str, str | None], staging: Path,
                  progress: Callable[[int, int], None] | None) -> dict[str, str]:
    """The wanted files of the repository archive, checked, written under ``staging``."""
    archive = staging / ".archive.tar.gz"
    _download(archive_url(source), archive)
    prefix = source.upstream.strip("/") + "/" if source.upstream.strip("/") else ""
    got: dict[str, str] = {}
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                # Archives hold one top folder (REPO-SHA/); the path inside the repository follows it.
                inner = member.name.split("/", 1)[1] if "/" in member.name else ""
                if not member.isfile() or not inner.startswith(prefix):
                    continue
                rel = inner[len(prefix):]
                if rel not in wanted or not _safe_rel(rel):
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                data = fh.read()
                digest = hashlib.sha256(data).hexdigest()
                _check(source, rel, digest, wanted)
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).write_bytes(data)
                got[rel] = digest
                if progress:
                    progress(len(got), len(wanted))
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise FetchError(f"{source.key}: {archive_url(source)} is not a readable .tar.gz archive ({exc})") from exc
    finally:
        archive.unlink(missing_ok=True)
    return got


def _from_files(source: Source, wanted: dict[str, str | None], staging: Path,
                progress: Callable[[int, int], None] | None) -> dict[str, str]:
    """Each wanted file downloaded on its own (8 at a time), checked, written under ``staging``."""
    for rel in wanted:
        if not _safe_rel(rel):
            raise FetchError(f"{source.key}: refusing the path {rel!r}")

    def one(rel: str) -> tuple[str, str]:
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = _download(file_url(source, rel), path)
        _check(source, rel, digest, wanted)
        return rel, digest

    got: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for rel, digest in pool.map(one, sorted(wanted)):
            got[rel] = digest
            if progress:
                progress(len(got), len(wanted))
    return got


def incomplete(suite: str, data: Path, lock: dict[str, dict[str, Any]] | None = None) -> list[tuple[Source, list[str]]]:
    """The suite's pinned sources whose folder is in ``data`` but lacks some of the files fetch lays
    out there, each with the missing paths (relative to ``data``): a partial copy, which a loader
    would read as fewer cases without a word. A source whose folder is absent is not listed."""
    lock = load_lock() if lock is None else lock
    out = []
    for key in SUITE_SOURCES.get(suite, ()):
        pinned, source = lock.get(key), SOURCES[key]
        folder = Path(data) / source.dest
        if pinned is None or not folder.is_dir():
            continue
        if missing := [f"{source.dest}/{rel}" for rel in sorted(pinned["files"]) if not (folder / rel).is_file()]:
            out.append((source, missing))
    return out


def make_lock(root: Path, sources: Iterable[Source] | None = None) -> dict[str, Any]:
    """The lock for a local copy of the upstream files laid out as the destination is (``root``):
    every file of each pinned source's folder, with its sha256 and the folder's size. A source whose
    folder is missing (or, for one with ``names``, lacks one of them) is left out: it stays unpinned."""
    out: dict[str, Any] = {}
    for source in sources or SOURCES.values():
        folder = root / source.dest
        if not folder.is_dir():
            continue
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        if source.names and set(source.names) - set(files):
            continue
        files = [f for f in files if not source.names or f in source.names]
        out[source.key] = {"repo": source.repo, "revision": source.revision, "upstream": source.upstream,
                           "bytes": sum((folder / f).stat().st_size for f in files),
                           "files": {f: sha256_file(folder / f) for f in files}}
    return {"about": "sha256 of every file each source brings in; made with python -m guard_bench.fetch lock DIR",
            "sources": out}


def main(argv: list[str] | None = None) -> None:
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "lock":
        raise SystemExit("usage: python -m guard_bench.fetch lock DIR   (DIR laid out as guard bench fetch writes it)")
    lock = make_lock(Path(args[1]))
    LOCK_FILE.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {LOCK_FILE}: " + ", ".join(f"{k} ({len(v['files'])} files)" for k, v in lock["sources"].items()))


if __name__ == "__main__":
    main()
