"""The ONNX encoder (guard.onnx_encoder), passes per decision, cache hits, and the latency budget."""

from __future__ import annotations

from typing import Any

import pytest

from tests.semantic._support import require, tool

require()
pytest.importorskip("onnxruntime", reason="the ONNX backend needs onnxruntime (the semantic extra)")

import numpy as np  # noqa: E402

from guard import Guard  # noqa: E402
from guard import semantic as sem  # noqa: E402
from guard.onnx_encoder import OnnxEmbedder  # noqa: E402
from guard.policy import Policy  # noqa: E402

TEXTS = ["I need to find flights from Berlin to Paris next Friday, and book a hotel", "book a hotel", "Pick up dry cleaning"]


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    return OnnxEmbedder(variant="fp32")  # built from the packaged weights at first use, offline


def test_fp32_onnx_gives_the_torch_models_vectors(onnx: OnnxEmbedder, embedder: Any) -> None:
    cos = (onnx.encode(TEXTS) * embedder.encode(TEXTS)).sum(axis=1)
    assert cos.min() > 0.99999


def test_fp32_onnx_pools_the_same_spans(onnx: OnnxEmbedder, embedder: Any) -> None:
    for (spans, vectors), (want_spans, want) in zip(onnx.encode_spans(TEXTS, 6), embedder.encode_spans(TEXTS, 6)):
        assert spans == want_spans
        assert (vectors * want).sum(axis=1).min() > 0.99999


def test_sentences_ride_along_in_the_span_pass(onnx: OnnxEmbedder) -> None:
    passes = onnx.passes
    spans = onnx.encode_spans(["picking up my dry cleaning today"], 6, sentences=["launder my suit"])
    assert onnx.passes == passes + 1 and spans[0][0]
    assert onnx.cached("launder my suit")
    onnx.encode(["launder my suit"])
    assert onnx.passes == passes + 1  # served from the cache


def test_texts_packed_into_one_call_get_the_vectors_each_gets_alone(onnx: OnnxEmbedder) -> None:
    # a decision's texts of every length run in one model call, several to a row (a row of more
    # than PACK_TOKENS splits into rows); each text's vector is the one it gets when run alone
    from guard.onnx_encoder import PACK_TOKENS

    texts = [f"{t} ({i})" for i, t in enumerate(TEXTS * 12)] + ["word " * 120, "hi"]
    runs = onnx.runs
    together = onnx._forward(texts)
    assert onnx.runs <= runs + 2
    alone = np.stack([onnx._forward([t])[0] for t in texts])
    assert (together * alone).sum(axis=1).min() > 0.99999
    assert sum(len(e.ids) for e in onnx._tokenizer.encode_batch(texts)) > 2 * PACK_TOKENS  # several rows


def test_int8_is_close_to_fp32() -> None:
    fp32, int8 = OnnxEmbedder(variant="fp32"), OnnxEmbedder(variant="int8")
    cos = (fp32.encode(TEXTS) * int8.encode(TEXTS)).sum(axis=1)
    assert cos.min() > 0.97


def test_the_backend_is_chosen_by_policy_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARD_SEMANTIC_BACKEND", "torch")
    assert sem.default_backend() == "torch"
    monkeypatch.delenv("GUARD_SEMANTIC_BACKEND")
    # int8 where the CPU multiplies 8-bit integers in one instruction, fp32 elsewhere
    monkeypatch.setattr(sem, "int8_dot_product", lambda: True)
    assert sem.default_backend() == "onnx-int8"
    monkeypatch.setattr(sem, "int8_dot_product", lambda: False)
    assert sem.default_backend() == "onnx"
    with pytest.raises(ValueError, match="unknown semantic backend"):
        sem._embedder.__wrapped__(None, "tensorflow")


def test_the_cpu_features_that_make_int8_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy._core._multiarray_umath as umath

    sem.int8_dot_product.cache_clear()
    try:
        monkeypatch.setattr(umath, "__cpu_features__", {"AVX2": True, "AVX512VNNI": True})
        assert sem.int8_dot_product()
        sem.int8_dot_product.cache_clear()
        monkeypatch.setattr(umath, "__cpu_features__", {"ASIMD": True, "ASIMDDP": True})  # Arm's dot product
        assert sem.int8_dot_product()
        sem.int8_dot_product.cache_clear()
        monkeypatch.setattr(umath, "__cpu_features__", {"AVX2": True, "AVX512F": True, "AVX512VNNI": False})
        monkeypatch.setattr("builtins.open", _cpuinfo("flags\t\t: fpu sse2 avx2 avx512f avx512bw\n"))
        assert not sem.int8_dot_product()  # AVX-512 without VNNI: its int8 sums saturate
        sem.int8_dot_product.cache_clear()
        monkeypatch.setattr("builtins.open", _cpuinfo("flags\t\t: fpu sse2 avx2 avx_vnni\n"))
        assert sem.int8_dot_product()  # a numpy that does not name AVX-VNNI: Linux's flags do
    finally:
        sem.int8_dot_product.cache_clear()


def test_a_benchmark_run_names_the_backend_its_model_ran_on() -> None:
    from types import SimpleNamespace

    from guard_bench.metrics import semantic_costs

    assert OnnxEmbedder(variant="int8").backend == "onnx-int8"
    assert OnnxEmbedder(variant="fp32").backend == "onnx"
    assert sem.MiniLMEmbedder.backend == "torch"
    cases = [SimpleNamespace(semantic={"passes": 1, "tokens": 12, "backend": "onnx-int8"}),
             SimpleNamespace(semantic={"passes": 0, "tokens": 0, "backend": "onnx-int8"})]
    costs = semantic_costs(cases)
    assert costs["backend"] == "onnx-int8" and costs["decisions_without_model"] == 0.5


def _cpuinfo(text: str) -> Any:
    import io

    def fake_open(path: str, *args: Any, **kwargs: Any) -> Any:
        assert path == "/proc/cpuinfo"
        return io.StringIO(text)

    return fake_open


def test_the_policys_thread_count_reaches_the_model_and_leaves_its_vectors_alone(onnx: OnnxEmbedder) -> None:
    one = sem.semantic_for(Policy.model_validate({"checks": {"semantic": {"enabled": True, "backend": "onnx", "threads": 1}}}).checks.semantic)
    two = sem.semantic_for(Policy.model_validate({"checks": {"semantic": {"enabled": True, "backend": "onnx", "threads": 2}}}).checks.semantic)
    assert one.embedder._session.get_session_options().intra_op_num_threads == 1
    assert two.embedder._session.get_session_options().intra_op_num_threads == 2
    assert (one.embedder.threads, two.embedder.threads) == (1, 2)
    assert (two.embedder._forward(TEXTS) * onnx._forward(TEXTS)).sum(axis=1).min() > 0.99999
    with pytest.raises(ValueError):
        Policy.model_validate({"checks": {"semantic": {"threads": 0}}})


# --- passes per decision and the caches --------------------------------------------------------

TOOLS = [
    tool("add_task", "Add a task to the user's to-do list", ("title",), title="what to do"),
    tool("send_email", "Send an e-mail to someone", ("to", "body"), to="recipient address", body="text of the mail"),
]


def _messages(title: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Remind me that I am picking up my dry cleaning after work, please."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "add_task", "args": {"title": title}}]},
    ]


def _guard(onnx: OnnxEmbedder, **config: Any) -> tuple[Guard, sem.SemanticGuard]:
    semantic = sem.SemanticGuard(onnx, caches=sem.SemanticCaches.new(), **config)
    return Guard(TOOLS, Policy(), semantic=semantic), semantic


def test_a_decision_over_new_text_costs_one_pass(onnx: OnnxEmbedder) -> None:
    guard, semantic = _guard(onnx)
    before = semantic.stats()  # the tools were embedded when the guard was built
    messages = _messages("Pick up dry cleaning")
    decision = guard.check(messages[-1]["tool_calls"][0], messages[:-1])
    after = semantic.stats()
    assert decision.runs, decision.findings
    assert after["passes"] - before["passes"] == 1  # the message's clauses, the value and the requests together


def test_the_same_thread_again_is_served_from_the_caches(onnx: OnnxEmbedder) -> None:
    guard, semantic = _guard(onnx)
    messages = _messages("Pick up dry cleaning")
    guard.check(messages[-1]["tool_calls"][0], messages[:-1])
    before = semantic.stats()
    guard.check(messages[-1]["tool_calls"][0], messages[:-1])
    after = semantic.stats()
    assert after["passes"] == before["passes"]
    assert after["hits"] - before["hits"] == after["lookups"] - before["lookups"] > 0


def test_tools_are_embedded_when_the_guard_is_built(onnx: OnnxEmbedder) -> None:
    _, semantic = _guard(onnx)
    assert semantic.registry_encodes == 1


# --- the latency budget ------------------------------------------------------------------------


def test_over_the_budget_the_lexical_verdict_stands_and_says_so(onnx: OnnxEmbedder) -> None:
    guard, semantic = _guard(onnx, budget_ms=0.001)
    before = semantic.stats()
    messages = _messages("Pick up dry cleaning")
    decision = guard.check(messages[-1]["tool_calls"][0], messages[:-1])
    after = semantic.stats()
    ungrounded = [f for f in decision.findings if f.category.value == "ungrounded_value"]
    assert ungrounded and "budget_ms" in ungrounded[0].evidence["semantic"]
    assert after["passes"] == before["passes"]  # nothing was embedded
    assert after["budget_skips"] > before["budget_skips"]


def test_within_the_budget_nothing_changes(onnx: OnnxEmbedder) -> None:
    guard, _ = _guard(onnx, budget_ms=10_000)
    messages = _messages("Pick up dry cleaning")
    decision = guard.check(messages[-1]["tool_calls"][0], messages[:-1])
    assert decision.runs and not any("semantic" in f.evidence for f in decision.findings)


def test_the_budget_is_read_from_the_policy() -> None:
    config = Policy(checks={"semantic": {"enabled": True, "budget_ms": 25}}).checks.semantic
    assert sem.semantic_for(config).budget_ms == 25


def test_the_cost_meter_follows_the_measured_passes() -> None:
    meter = sem.CostMeter(ms_per_token=0.1, ms_per_pass=0.5)
    meter.record(0.0105, 100)  # 10.5 ms for 100 tokens
    assert meter.estimate_ms(100) == pytest.approx(10.5)
    assert meter.estimate_ms(0) == 0.0


# --- caches bounded in bytes -------------------------------------------------------------------


def test_span_caches_are_bounded_in_bytes() -> None:
    lru: sem.LRU[str, Any] = sem.LRU(1_000, max_bytes=10_000, weigh=sem._weight)
    for i in range(20):
        lru.put(str(i), sem._Spans(("x",), np.zeros((4, 384), dtype=np.float32), (1,)))  # ~6 kB each
    assert lru.bytes <= 10_000 and len(lru) == 1
    assert "19" in lru and "0" not in lru


def test_the_selection_check_reads_each_part_of_a_request_once(onnx: OnnxEmbedder) -> None:
    users = ["Find flights from Berlin to Paris next Friday.", "Then book a hotel near the station"]
    plan = sem._selection_plan(users)
    texts = [t for t, _ in plan]
    assert texts[:2] == [users[-1], "\n".join(users)]  # the latest message, all of them, then each part
    pieces = sem._pieces(plan)
    assert len(pieces) == 2  # the model reads two parts, not the five texts that hold them
    semantic = sem.SemanticGuard(onnx, caches=sem.SemanticCaches.new())
    registry = Guard(TOOLS, Policy(), semantic=semantic).registry
    tools = semantic._tool_vectors(registry)
    before = onnx.forward_passes
    rows = sem._blended_rows(semantic, plan, registry, tools)
    assert onnx.forward_passes - before == 2
    assert rows.shape == (len(plan), len(tools.names))
    # the whole request is its parts pooled: close to the whole run through the model
    parts = onnx.encode(pieces)
    pooled = sem._unit(sum(sem.approx_tokens(p) * v for p, v in zip(pieces, parts))[None])[0]
    alone = onnx.encode([sem._request_text("\n".join(users))])[0]
    assert float(pooled @ alone) > 0.85
    whole = texts.index("\n".join(users))
    expected = sem._cosines(pooled[None], tools.vectors)[0]
    sem_part = np.clip((expected - semantic.relevance_floor) / (semantic.relevance_ceiling - semantic.relevance_floor), 0, 1)
    lex = np.array([sem._lexical_scores(semantic, texts[whole], registry).get(n, 0.0) for n in tools.names])
    assert np.allclose(rows[whole], semantic.semantic_weight * sem_part + (1 - semantic.semantic_weight) * lex, atol=1e-5)


def test_by_default_the_model_takes_two_threads_where_the_process_has_two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long pass (a dialogue's clauses) is a decision's slowest part: two cores run it ~1.5x faster."""
    monkeypatch.delenv(sem.THREADS_ENV, raising=False)
    monkeypatch.setattr(sem.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert sem.default_threads() == 2
    monkeypatch.setattr(sem.os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert sem.default_threads() == 1  # a process pinned to one core
    default = Policy.model_validate({"checks": {"semantic": {"enabled": True, "backend": "onnx"}}}).checks.semantic
    assert default.threads is None
    sem.semantic_for.cache_clear()  # a guard made earlier in this process kept the thread count of its making
    assert sem.semantic_for(default).embedder._session.get_session_options().intra_op_num_threads == 1
    sem.semantic_for.cache_clear()
    monkeypatch.setenv(sem.THREADS_ENV, "3")
    assert sem.default_threads() == 3
    monkeypatch.setenv(sem.THREADS_ENV, "none")  # not a count: the default
    assert sem.default_threads() == 1


def test_served_workers_share_the_cores_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from guard.service import _THREADS_ENV, _worker_threads

    assert _THREADS_ENV == sem.THREADS_ENV
    monkeypatch.setattr(sem.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert (_worker_threads(2), _worker_threads(4), _worker_threads(8), _worker_threads(16)) == (2, 2, 1, 1)
