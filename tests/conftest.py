"""Fixtures shared by every test package."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from nodes import llm


@pytest.fixture(scope="session", autouse=True)
def _cache_in_tmp(tmp_path_factory):
    """Derived data (the WebShop catalogue's cache) goes to a temporary folder, also for
    the subprocesses tests start, never to the user's cache."""
    os.environ["INTROSPECT_CACHE"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(autouse=True)
def _fresh_models():
    """Each test builds its own models (scripted models record their calls)."""
    llm.clear_models()
    yield
    llm.clear_models()


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[..., str]:
    """Write scripted replies to a JSONL file; returns the ``scripted:`` model spec."""
    counter = {"n": 0}

    def write(replies: list[dict[str, Any]], name: str | None = None) -> str:
        counter["n"] += 1
        path = tmp_path / (name or f"script{counter['n']}.jsonl")
        path.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
        return f"scripted:{path}"

    return write
