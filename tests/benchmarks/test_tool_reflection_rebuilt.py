"""The Tool-Reflection protocol rebuilt on API-Bank dialogues, on a tiny self-written fixture in
API-Bank's formats (a level-1 record describing the APIs, one dialogue a file)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from guard_bench import labels
from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import api_bank
from guard_bench.datasets import tool_reflection_rebuilt as trr
from guard_bench.runner import CaseResult, run_cases
from guard_bench.suites import suite
from guard.policy import Policy

APIS = [
    {"name": "GetUserToken", "description": "Returns a session token for a user.",
     "input_parameters": {"username": {"type": "str", "description": "The user's name."},
                          "password": {"type": "str", "description": "The user's password."}},
     "output_parameters": {"token": {"type": "str", "description": "The session token."}}},
    {"name": "AddReminder", "description": "Adds a reminder with a text and a due time.",
     "input_parameters": {"token": {"type": "str", "description": "The session token."},
                          "content": {"type": "str", "description": "What to be reminded of."},
                          "time": {"type": "str", "description": "The due time. Format: %Y-%m-%d %H:%M:%S"}},
     "output_parameters": {"status": {"type": "str", "description": "success or failed"}}},
]
REMIND = [
    {"role": "User", "text": "Remind me to feed the cat on June 2nd at 8 am."},
    {"role": "AI", "text": "What are your username and password?"},
    {"role": "User", "text": "My username is otto and my password is quill77."},
    {"role": "API", "api_name": "GetUserToken", "param_dict": {"username": "otto", "password": "quill77"},
     "result": {"output": {"token": "zz81kk"}, "exception": None}},
    {"role": "API", "api_name": "AddReminder",
     "param_dict": {"token": "zz81kk", "content": "feed the cat", "time": "2023-06-02 08:00:00"},
     "result": {"output": "success", "exception": None}},
    {"role": "AI", "text": "Done."},
]
#: A call whose values nobody gave (the token is not in any result): clean only.
ORPHAN = [
    {"role": "User", "text": "Add a reminder please."},
    {"role": "API", "api_name": "AddReminder",
     "param_dict": {"token": "nobody-knows", "content": "something", "time": "2023-01-01 00:00:00"},
     "result": {"output": "success", "exception": None}},
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    level1 = root / api_bank.LEVEL1
    level1.parent.mkdir(parents=True)
    instruction = "The current year is 2023.\nAPI descriptions:\n" + "\n".join(json.dumps(a) for a in APIS)
    level1.write_text(json.dumps([{"file": "AddReminder-GetUserToken-level-2-1.jsonl", "id": 0,
                                   "instruction": instruction, "input": "", "expected_output": ""}]))
    dialogues = root / api_bank.DIALOGUES
    dialogues.mkdir(parents=True)
    for name, turns in (("AddReminder-GetUserToken-level-2-1", REMIND), ("AddReminder-level-1-1", ORPHAN)):
        (dialogues / f"{name}.jsonl").write_text("\n".join(json.dumps(t) for t in turns))
    return root


@pytest.fixture(scope="module")
def built(data_dir: Path) -> api_bank.Built:
    return trr.build(data_dir)


@pytest.fixture(scope="module")
def cases(built: api_bank.Built) -> dict:
    return {c.id: c for c in built.cases}


def test_every_traceable_argument_of_every_recorded_call_gives_a_faulty_case(built, cases, data_dir):
    assert trr.available(data_dir) and suite(trr.NAME) is trr
    assert Counter(c.subset for c in built.cases) == {"clean": 3, "faulty_user": 4, "faulty_result": 1}
    assert sorted(cases) == [
        "AddReminder-GetUserToken-level-2-1/call0/clean", "AddReminder-GetUserToken-level-2-1/call0/password",
        "AddReminder-GetUserToken-level-2-1/call0/username", "AddReminder-GetUserToken-level-2-1/call1/clean",
        "AddReminder-GetUserToken-level-2-1/call1/content", "AddReminder-GetUserToken-level-2-1/call1/time",
        "AddReminder-GetUserToken-level-2-1/call1/token", "AddReminder-level-1-1/call0/clean",
    ]
    assert built.skipped == {"no argument traceable to an earlier result or the user's words": ["AddReminder-level-1-1/call0"]}
    assert cases["AddReminder-GetUserToken-level-2-1/call1/token"].subset == "faulty_result"
    assert all(c.split == split_of(c.family) for c in built.cases)


def test_the_conversation_keeps_the_earlier_call_and_its_result(cases):
    case = cases["AddReminder-GetUserToken-level-2-1/call1/token"]
    assert case.messages[0] == {"role": "system", "content": "The current year is 2023."}
    tool = next(m for m in case.messages if m["role"] == "tool")
    assert json.loads(tool["content"]) == {"token": "zz81kk"} and tool["name"] == "GetUserToken"
    assert case.gold_calls == [{"name": "AddReminder", "args": {"token": "zz81kk", "content": "feed the cat",
                                                               "time": "2023-06-02 08:00:00"}}]
    assert case.human.values == {}  # the human knows nothing: any repair is the guard's own


def test_each_faulty_case_breaks_exactly_its_argument_with_the_seeded_fault(cases):
    for case in cases.values():
        gold = case.gold_calls[0]["args"]
        if case.subset == "clean":
            assert case.calls[0]["args"] == gold and case.expected.label == labels.OK
            continue
        param, fault = case.meta["param"], case.meta["fault"]
        bad = case.calls[0]["args"][param]
        assert {k: v for k, v in case.calls[0]["args"].items() if k != param} == {k: v for k, v in gold.items() if k != param}
        assert (fault, bad) == trr.inject(gold[param], {"type": "string"}, param, random.Random(f"{trr.NAME}:{case.id}"))
        assert case.expected.label == (labels.INVALID_ARGUMENT if fault == "wrong_type" else labels.MISSING_INFO)
        assert case.expected.params == [param] and bad != gold[param]


def test_injected_values_are_a_null_a_sentinel_or_a_type_the_schema_refuses():
    seen = [trr.inject("abc", {"type": "string"}, "token", random.Random(i)) for i in range(60)]
    faults = {f for f, _ in seen}
    assert faults == {"null", "sentinel", "wrong_type"}
    assert {json.dumps(v) for f, v in seen if f == "sentinel"} <= {'"string"', '"none"', '"<token>"', "-1"}
    assert {json.dumps(v) for f, v in seen if f == "wrong_type"} <= {"true", "[]", "{}", "0"}
    assert all(v is not True for f, v in (trr.inject(True, {"type": "boolean"}, "on", random.Random(i))
                                          for i in range(40)) if f == "wrong_type")


def test_the_replay_detects_and_repairs_the_broken_token_and_leaves_clean_calls_alone(built):
    results = {r.id: r for r in run_cases(built.cases, Policy(), AgentSource("reference"))}
    assert not any(r.error for r in results.values())
    token = results["AddReminder-GetUserToken-level-2-1/call1/token"]
    assert token.action == "repair" and token.recovered is True
    assert token.executed[-1]["args"]["token"] == "zz81kk"
    clean = [r for r in results.values() if r.subset == "clean"]
    assert not any(r.action == "repair" for r in clean)
    metrics = trr.paper_metrics(list(results.values()))
    assert metrics["detect_result"] == metrics["repair_at_1_result"] == 1.0
    assert metrics["over_completion_clean"] == 0.0


def _result(subset: str, action: str, recovered: bool, completed: bool = False) -> CaseResult:
    findings = [{"rule": "null", "evidence": {"fault": "null", "source": "user"}}] if completed else []
    return CaseResult(id=f"{subset}-{action}-{recovered}-{completed}", suite=trr.NAME, subset=subset, split="test",
                      expected={}, action=action, flagged=action not in ("allow", "repair"), recovered=recovered,
                      findings=findings)


def test_paper_metrics_count_interventions_repairs_and_false_alarms():
    results = [
        _result("faulty_result", "repair", True, completed=True),
        _result("faulty_user", "repair", False, completed=True),  # completed with the wrong value
        _result("faulty_user", "retry", False),
        _result("faulty_user", "allow", False),
        _result("clean", "allow", True),
        _result("clean", "ask_human", False),
        _result("clean", "repair", True, completed=True),
    ]
    m = trr.paper_metrics(results)
    assert m["detect"] == 3 / 4 and m["repair_at_1"] == 1 / 4
    assert m["detect_result"] == 1.0 and m["repair_at_1_user"] == 0.0 and m["detect_user"] == 2 / 3
    assert m["false_alarms_clean"] == 2 / 3 and m["over_completion_clean"] == 1 / 3
    assert m["wrong_completion"] == 1 / 4
    assert all(f.rebuilt for f in trr.PAPER) and {f.metric for f in trr.PAPER} == {"repair_at_1"}
