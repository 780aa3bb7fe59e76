"""Python source parsed safely from any thread.

CPython 3.11 keeps the AST builder's recursion depth in state that all threads share (CPython
issue gh-106905). Two threads building syntax trees at once can make either of them fail with
"SystemError: AST constructor recursion depth mismatch", though the source is fine. The project
parses in two places that can overlap: provenance hashes the modules a run imports, in worker
threads, for several ablation forks at once; WebArena's evaluation reads a helper call's literal
arguments on the event loop. Both parse here, one at a time. A parse outside the project can
still collide with one of ours (Python's traceback module parses a source line to place its
carets), so that one error is retried.

Why in ``envs``: it is the lowest layer that parses Python source, and the app above it imports
from it.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_PARSING = threading.Lock()
_SPURIOUS = "AST constructor recursion depth mismatch"
_TRIES = 3


def parse(source: str | bytes) -> ast.Module:
    """The syntax tree of a module's source."""
    tree = _parsed(source, "exec")
    assert isinstance(tree, ast.Module)  # what mode "exec" builds
    return tree


def literal(source: str) -> Any:
    """The value of a Python literal expression (``ast.literal_eval``; ValueError when it is not
    a literal, SyntaxError when it is not Python)."""
    return ast.literal_eval(_parsed(source, "eval"))


def _parsed(source: str | bytes, mode: str) -> ast.AST:
    """``ast.parse``, never at the same time as another parse of ours, and again when a parse
    elsewhere made it fail spuriously."""
    for attempt in range(1, _TRIES + 1):
        with _PARSING:
            try:
                return ast.parse(source, mode=mode)
            except SystemError as error:
                if _SPURIOUS not in str(error) or attempt == _TRIES:
                    raise
    raise AssertionError("unreachable")
