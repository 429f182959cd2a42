"""Every loader skips and counts a record it cannot read, and a run reports the count.

Each test copies the bundled samples, breaks one record the way real files break (a line that is no
JSON, a ``<tool_call>`` block in the ground truth that is no JSON object, a record without the field
the loader reads) and checks that the loader reads the rest and counts the one it skipped.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from guard_bench.agents import AgentSource
from guard_bench.execute import run_suites
from guard_bench.suites import suite
from guard.policy import Policy

SAMPLES = Path(__file__).resolve().parents[2] / "benchmarks" / "samples"


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES, tmp_path / "data")
    return tmp_path / "data"


def _append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def malformed_ground_truth(data: Path) -> None:
    """A Tool-Reflection record whose ground truth holds a ``<tool_call>`` that is no JSON (the
    real ``test_qwen_1000.jsonl`` has such records)."""
    path = data / "tool-reflection" / "test_sample.jsonl"
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    record["ground_truth"] = '<reflect>fix it</reflect>\n<tool_call>\n{"name": "book_hotel", "arguments": {"hotel_id": "H-204",}\n</tool_call>'
    _append(path, json.dumps(record))


def _level1_record_without_fields(data: Path) -> None:
    path = data / "api-bank" / "test-data" / "level-1-api.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps([*records, {"file": "Broken-level-1-1.jsonl", "id": 0}]), encoding="utf-8")


def _broken_dialogue(data: Path) -> None:
    folder = data / "api-bank" / "lv1-lv2-samples" / "level-1-given-desc"
    _append(next(iter(sorted(folder.glob("*.jsonl")))), '{"role": "User", "text": "unterminated')


def _critictool_record_without_prompt(data: Path) -> None:
    path = data / "critictool" / "internal_error" / "base_data_wo_cot.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**records, "broken": {"ground_truth": "x"}}), encoding="utf-8")


def _fail_talms_bad_file(data: Path) -> None:
    (data / "fail-talms" / "benchmark" / "Original" / "Books" / "query_9.json").write_text("[{\"query\": ", encoding="utf-8")


BREAKS = {
    # suite: (how to break one record, cases lost: the broken record's own cases)
    "acebench": (lambda d: _append(d / "acebench" / "data_en" / "data_special_incomplete.json", "{not json"), 0),
    "fail-talms": (_fail_talms_bad_file, 0),
    "api-bank-ict": (_level1_record_without_fields, 0),
    "critictool": (_critictool_record_without_prompt, 0),
    "reflectool": (_broken_dialogue, None),
    "bfcl": (lambda d: _append(d / "bfcl" / "BFCL_v4_irrelevance.json", '{"id": "irrelevance_9", "question": '), 0),
    "tool-reflection": (malformed_ground_truth, 0),
    "tool-reflection-rebuilt": (_broken_dialogue, None),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_loader_skips_and_counts_a_record_it_cannot_read(name, data):
    module = suite(name)
    before = module.load(SAMPLES)
    assert before.total_skipped() == 0
    break_one, lost = BREAKS[name]
    break_one(data)
    after = module.load(data)  # never raises
    assert after.total_skipped() == 1, dict(after.skipped)
    if lost is not None:
        assert [c.id for c in after] == [c.id for c in before]
    else:  # the broken dialogue's cases are gone, every other dialogue's are kept
        assert 0 < len(after) < len(before) and {c.id for c in after} < {c.id for c in before}


def test_the_malformed_tool_call_is_counted_by_file_and_error(data):
    malformed_ground_truth(data)
    loaded = suite("tool-reflection").load(data)
    assert dict(loaded.skipped) == {"test_sample.jsonl: JSONDecodeError": 1}


def test_a_run_reports_skipped_records_in_results_and_report(data, tmp_path):
    malformed_ground_truth(data)
    out = tmp_path / "out"
    run = run_suites("tool-reflection", {"tool-reflection": suite("tool-reflection")}, data, "all", Policy(),
                     AgentSource("reference"), out, "guard bench run tool-reflection", console=Console(quiet=True))
    assert run is not None
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["skipped_records"] == {"total": 1, "reasons": {"test_sample.jsonl: JSONDecodeError": 1}}
    assert "1 records skipped, unreadable (test_sample.jsonl: JSONDecodeError 1)" in (out / "report.md").read_text(encoding="utf-8")
