"""Completion from provenance: a broken value filled in from an earlier tool result or the user's words."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from guard import Guard
from guard.taxonomy import Action, Category
from tests.support import FAST, ai_call, tool_messages
from tests.test_node import agent_for, run

CHECKSUM = {
    "name": "calculate_file_checksum",
    "parameters": {"type": "object", "properties": {"file_path": {"type": "string", "description": "Path to the file."}},
                   "required": ["file_path"]},
}
DELETE_USER = {
    "name": "delete_user",
    "parameters": {"type": "object", "properties": {"user_id": {"type": "integer"}, "reason": {"type": "string"}},
                   "required": ["user_id"]},
}
BOOK = {
    "name": "book_room",
    "parameters": {"type": "object", "properties": {
        "guest_name": {"type": "string"},
        "adult_count": {"type": "integer", "description": "Number of adults"},
    }, "required": ["guest_name", "adult_count"]},
}
TOOLS = [CHECKSUM, DELETE_USER, BOOK]


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": "c9"}


def result(tool_name: str, content: Any, call_id: str = "r1") -> list[dict[str, Any]]:
    text = content if isinstance(content, str) else json.dumps(content)
    return [{"role": "assistant", "content": "", "tool_calls": [{"name": tool_name, "args": {}, "id": call_id}]},
            {"role": "tool", "content": text, "tool_call_id": call_id, "name": tool_name}]


DOWNLOAD = [("user", "Download the blocklist and check its checksum."),
            *result("download_file", {"results": {"file_path": "/tmp/blocklist.txt", "size": 10}})]


def provenance(decision) -> list:
    return [f for f in decision.findings if f.check == "provenance"]


def test_one_candidate_in_a_tool_result_is_completed_with_evidence_naming_message_and_field():
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": None}), DOWNLOAD)
    assert decision.action is Action.REPAIR
    assert decision.call_to_run.args == {"file_path": "/tmp/blocklist.txt"}
    (finding,) = provenance(decision)
    assert finding.category is Category.PLACEHOLDER_VALUE and finding.repair.before is None
    assert finding.evidence == {"fault": "null", "source": "tool_result", "message_index": 2, "tool_call_id": "r1",
                                "tool": "download_file", "field": "results.file_path", "match": "name"}
    assert "results.file_path" in decision.feedback  # the repaired note says where the value came from


def test_a_sentinel_is_completed_and_the_placeholder_check_does_not_flag_the_completed_value():
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": "<file_path>"}), DOWNLOAD)
    assert decision.action is Action.REPAIR
    assert [f.category for f in decision.findings] == [Category.PLACEHOLDER_VALUE]
    assert decision.findings[0].evidence["fault"] == "sentinel"


def test_a_near_field_name_in_context_counts_as_a_synonym():
    messages = [("user", "Delete the user Ann, she left."), *result("get_user", {"user": {"id": 42, "name": "Ann"}})]
    decision = Guard(TOOLS).check(call("delete_user", {"user_id": "unknown"}), messages)
    assert decision.action is Action.REPAIR and decision.call_to_run.args == {"user_id": 42}
    assert provenance(decision)[0].evidence["field"] == "user.id" and provenance(decision)[0].evidence["match"] == "near_name"


def test_an_id_of_another_kind_of_record_is_no_candidate():
    messages = [("user", "Delete the user Ann."), *result("get_order", {"order": {"id": 7}})]
    decision = Guard(TOOLS).check(call("delete_user", {"user_id": None}), messages)
    assert not provenance(decision) and decision.action is not Action.REPAIR


def test_several_candidates_are_listed_and_nothing_is_repaired():
    messages = [("user", "Check the checksums of both downloads."),
                *result("download_file", {"file_path": "/tmp/a.txt"}, "r1"),
                *result("download_file", {"file_path": "/tmp/b.txt"}, "r2")]
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": None}), messages)
    (finding,) = provenance(decision)
    assert finding.repair is None and finding.rule == "several_candidates"
    assert [c["value"] for c in finding.evidence["candidates"]] == ["/tmp/a.txt", "/tmp/b.txt"]
    assert decision.action is Action.ASK_HUMAN and decision.repaired_call is None
    assert "/tmp/a.txt" in decision.question and "/tmp/b.txt" in decision.question


def test_the_users_words_are_a_source_for_named_values_and_counted_numbers():
    messages = [("user", "Book a room for two adults. My guest name is Ann Lee, thanks.")]
    decision = Guard(TOOLS).check(call("book_room", {"guest_name": "string", "adult_count": None}), messages)
    assert decision.action is Action.REPAIR
    assert decision.call_to_run.args == {"guest_name": "Ann Lee", "adult_count": 2}
    spans = {f.path: f.evidence for f in provenance(decision)}
    assert spans["$.adult_count"] == {"fault": "null", "source": "user", "message_index": 0, "span": "two adults"}
    assert spans["$.guest_name"]["span"] == "guest name is Ann Lee"


def test_a_wrong_type_is_completed():
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": ["x"]}), DOWNLOAD)
    assert decision.action is Action.REPAIR and decision.call_to_run.args == {"file_path": "/tmp/blocklist.txt"}
    assert provenance(decision)[0].category is Category.TYPE_VIOLATION


def test_a_number_the_repairs_turned_into_text_is_completed_in_one_finding():
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": -1}), DOWNLOAD)
    assert decision.call_to_run.args == {"file_path": "/tmp/blocklist.txt"}
    (finding,) = [f for f in decision.findings if f.repair is not None]
    assert finding.check == "provenance" and finding.repair.before == -1


def test_nothing_is_done_when_the_value_is_fine():
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": "/tmp/blocklist.txt"}), DOWNLOAD)
    assert decision.action is Action.ALLOW and not decision.findings


def test_the_switch_off_leaves_the_decision_as_before():
    policy = {"repairs": {"from_provenance": False}}
    decision = Guard(TOOLS, policy).check(call("calculate_file_checksum", {"file_path": None}), DOWNLOAD)
    assert not provenance(decision) and decision.repaired_call is None
    assert decision.action is Action.RETRY and decision.categories == [Category.MISSING_ARGUMENT]


def test_a_tool_result_that_is_not_json_is_skipped_without_a_crash():
    messages = [("user", "Check the file."), *result("download_file", "saved to /tmp/blocklist.txt {oops")]
    decision = Guard(TOOLS).check(call("calculate_file_checksum", {"file_path": None}), messages)
    assert not provenance(decision) and decision.action is Action.RETRY


class _FieldEmbedder:
    """Embeds texts by the words they share with a fixed vocabulary: enough to rank field names."""

    vocabulary = ("path", "file", "local", "disk", "url", "remote", "size")

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[float(w in t.lower()) for w in self.vocabulary] for t in texts]) + 1e-3


class _Semantic:
    embedder = _FieldEmbedder()
    call_checks = ()

    def match(self, *args: Any) -> None:
        return None


def test_an_embedder_picks_the_field_that_stands_out_when_no_name_fits():
    messages = [("user", "Check the file."), *result("download_file", {"local_disk_path": "/tmp/a.txt", "remote_url": "http://x"})]
    spec = {**CHECKSUM, "parameters": {**CHECKSUM["parameters"], "properties": {
        "file_path": {"type": "string", "description": "Local path of the file on disk."}}}}
    without = Guard([spec]).check(call("calculate_file_checksum", {"file_path": None}), messages)
    assert not provenance(without)
    decision = Guard([spec], semantic=_Semantic()).check(call("calculate_file_checksum", {"file_path": None}), messages)
    assert decision.call_to_run.args == {"file_path": "/tmp/a.txt"}
    assert provenance(decision)[0].evidence["field"] == "local_disk_path"
    assert provenance(decision)[0].evidence["match"] == "embedding"


def test_the_completed_call_is_the_one_that_runs_in_a_real_graph():
    ran: list[str] = []

    @tool
    def download_file(url: str) -> dict:
        """Download a file and say where it was saved."""
        return {"file_path": "/tmp/blocklist.txt"}

    @tool
    def calculate_file_checksum(file_path: str) -> str:
        """Calculate the checksum of a file."""
        ran.append(file_path)
        return "d41d8cd9"

    agent = agent_for([download_file, calculate_file_checksum], [
        ai_call("download_file", {"url": "https://example.org/blocklist"}, "c1"),
        ai_call("calculate_file_checksum", {"file_path": None}, "c2"),
    ], FAST)
    out = run(agent, {"messages": [HumanMessage("Download https://example.org/blocklist and checksum it.")]})
    assert ran == ["/tmp/blocklist.txt"]
    last = tool_messages(out)[-1]
    assert isinstance(last, ToolMessage) and last.content == "d41d8cd9"
    assert last.response_metadata["guard"]["action"] == "repair"
