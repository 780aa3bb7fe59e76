"""envs.syntax parses Python source one parse at a time and retries the spurious error CPython
3.11 raises when a parse outside the project overlapped one of ours (gh-106905)."""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor

import pytest

from envs import syntax
from envs.webarena.helpers import parse_call
from tests.support.threads import Overlap

SPURIOUS = "AST constructor recursion depth mismatch (before=24, after=16)"


def test_provenance_and_webarena_helpers_never_parse_at_once(monkeypatch):
    parse = Overlap(ast.parse)
    monkeypatch.setattr(ast, "parse", parse)
    with ThreadPoolExecutor(6) as pool:
        calls = [pool.submit(parse_call, "reddit_get_post_url('__last_url__')") for _ in range(20)]
        trees = [pool.submit(syntax.parse, b"x = 1\n") for _ in range(20)]
        assert all(c.result() == ("reddit_get_post_url", ["__last_url__"]) for c in calls)
        assert all(isinstance(t.result(), ast.Module) for t in trees)
    assert parse.most == 1


def test_the_spurious_error_is_retried_and_any_other_raised(monkeypatch):
    real = ast.parse
    failures = [SystemError(SPURIOUS)]

    def flaky(*args, **kwargs):
        if failures:
            raise failures.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", flaky)
    assert syntax.literal("(1, 'a', None)") == (1, "a", None)
    assert not failures

    failures[:] = [SystemError(SPURIOUS)] * 3  # a parse that keeps failing is not hidden
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        syntax.parse("x = 1")
    failures[:] = [SystemError("something else")]
    with pytest.raises(SystemError, match="something else"):
        syntax.parse("x = 1")


def test_literals_only():
    assert syntax.literal("[1, {'a': 2}]") == [1, {"a": 2}]
    with pytest.raises(ValueError):
        syntax.literal("__import__('os')")
    with pytest.raises(SyntaxError):
        syntax.literal("(")
