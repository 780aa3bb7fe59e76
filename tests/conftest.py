"""Fixtures shared by every test package."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from nodes.runtime import llm
from tests.support.openai_stub import OpenAIStub

STUB_KEY = "sk-introspect-test-4b1d9e7c2a"  # distinctive, so a leak is found by grepping for it


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="also run the tests marked long (each many minutes; CI runs a shorter test of each kind)",
    )


@pytest.hookimpl(wrapper=True)  # the groups set before pytest-xdist reads them, their suffix checked after
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """A test marked ``long`` is skipped, saying how to run it, unless ``--long`` is given.

    Under ``--dist loadgroup`` (.ci/setup) a test file runs on one worker, so its module
    fixtures (a LangGraph server, a reference run) start once; a test that names its own
    ``xdist_group`` (each small benchmark) may go to any worker. The groups that hold a
    real-model or slow test go first (workers take groups in collection order): started last,
    the longest of them ran alone at the end while the other workers stood idle."""
    rank: dict[str, int] = {}  # 0: a real model's (the longest), 1: slow, 2: the rest
    skip_long = pytest.mark.skip(reason="long: many minutes (CI runs a shorter one of its kind); pytest --long runs it")
    for item in items:
        if item.get_closest_marker("long") and not config.getoption("--long"):
            item.add_marker(skip_long)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        weight = 0 if item.get_closest_marker("local") else 1 if item.get_closest_marker("slow") else 2
        rank[group_of(item)] = min(rank.get(group_of(item), 2), weight)
    items.sort(key=lambda item: rank[group_of(item)])  # stable: a group's tests keep their order
    yield
    if getattr(config.option, "loadgroup", False):  # a pytest-xdist worker under --dist loadgroup
        name_the_groups(items)


def name_the_groups(items: list[pytest.Item]) -> None:
    """The group in each test's node id (``ID@GROUP``), which is all pytest-xdist's scheduler reads.
    pytest-xdist 3.8 writes it to ``item._nodeid``, which pytest 9.2 no longer reads (its node ids
    are structured; pytest-xdist issue 1386): every file's tests were spread over the workers, each
    starting the file's module fixtures (servers, reference runs) again. Written here when missing."""
    for item in items:
        node_id = getattr(item, "_id", None)
        if node_id is None or "@" in item.nodeid.rpartition("]")[2]:  # an older pytest, or xdist wrote it
            continue
        item._id = type(node_id).parse(f"{item.nodeid}@{group_of(item)}")


def group_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0] if marker and marker.args else marker.kwargs.get("name", "") if marker else "")


@pytest.fixture(scope="session", autouse=True)
def _cache_in_tmp(tmp_path_factory):
    """Derived data (the WebShop catalogue's cache) and what runs keep in INTROSPECT_HOME
    (checkpoints, journals) go to temporary folders, also for the subprocesses tests start,
    never to the user's cache or the checkout."""
    os.environ["INTROSPECT_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["INTROSPECT_HOME"] = str(tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session", autouse=True)
def _own_postgres_database():
    """Under pytest-xdist each worker gets a database of its own on the test PostgreSQL
    (INTROSPECT_TEST_POSTGRES), so that two workers' evaluations never meet in one checkpointer
    (the same task's thread, a run lock); the database is dropped when the worker ends."""
    base, worker = os.environ.get("INTROSPECT_TEST_POSTGRES"), os.environ.get("PYTEST_XDIST_WORKER")
    if not base or not worker:
        yield
        return
    import psycopg

    name = f"introspect_test_{worker}_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["INTROSPECT_TEST_POSTGRES"] = base.rsplit("/", 1)[0] + "/" + name
    try:
        yield
    finally:
        os.environ["INTROSPECT_TEST_POSTGRES"] = base
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


@pytest.fixture
def run_graph(write_script):
    """Run a graph of langgraph.json to its end with a script: ``await run_graph(graph,
    graph_input, replies, env=..., checkpointer=..., thread=..., **context)`` returns the
    ``introspect.runner.Outcome``. ``replies`` are scripted-model lines (or pass ``model=`` a
    spec). Method graphs go through ``introspect.runner.drive``, the CLI's own path (thread
    metadata, env sessions released at the end; ``on_update(node, update)`` hears each
    step); ``autoplan_training`` through its compiled graph. The checkpointer defaults to
    a fresh in-memory one."""
    from langgraph.checkpoint.memory import InMemorySaver

    from envs.sessions import SESSIONS
    from graphs import compiled, studio_graphs
    from introspect.runner import Outcome, drive

    async def run(
        graph: str,
        graph_input: dict[str, Any] | None,
        replies: list[dict[str, Any]] | None = None,
        *,
        model: str | None = None,
        env: str | None = None,
        checkpointer: Any = None,
        thread: str = "test-thread",
        on_update: Any = None,
        **context: Any,
    ) -> Outcome:
        method, attr = studio_graphs()[graph]
        context = method.context(model=model or write_script(replies or []), env=env or method.default_env, **context)
        saver = checkpointer or InMemorySaver()
        if attr == "graph":
            return await drive(method, context, thread, saver, graph_input, on_update)
        runner = compiled(method, attr).copy(update={"checkpointer": saver})
        config = {"configurable": {"thread_id": thread}, "recursion_limit": method.recursion_limit(context)}
        try:
            await runner.ainvoke(graph_input, config, context=context)
        finally:
            await SESSIONS.close_all()
        snapshot = await runner.aget_state(config)
        return Outcome(thread, method, dict(snapshot.values), finished=not snapshot.next)

    return run


@pytest.fixture
def openai_stub(monkeypatch):
    """The local OpenAI-compatible server (tests.support.openai_stub) for this test, with
    OPENAI_BASE_URL pointing at it and OPENAI_API_KEY set to ``STUB_KEY``; queue its
    ``replies`` and set its ``faults`` in the test."""
    with OpenAIStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", STUB_KEY)
        yield server
