"""Comparing the states of two runs of the same script: every field but each call's wall time
(the ``calls`` log records how long each model call took, which no two runs share) and where the
reply journal keeps it (a checkpoint id, which no two runs share either)."""

from __future__ import annotations

from typing import Any


def timeless(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with each logged model call's ``seconds`` and ``kept`` left out."""
    calls = [{k: v for k, v in call.items() if k not in ("seconds", "kept")} for call in state.get("calls") or []]
    return {**state, "calls": calls}
