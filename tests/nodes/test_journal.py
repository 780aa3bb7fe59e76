"""Each model reply is kept in the checkpointer the moment it arrives (nodes.runtime.journal): a step that
did not finish (it failed after its replies came back, or was cancelled with a call under way)
and runs again takes its replies from there, so the model server is asked exactly as often as
in an uninterrupted run. The server is the local OpenAI stub, through the real client; the
checkpointer the SQLite file every run uses by default."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from typing import Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from introspect.checkpoint import open_checkpointer
from nodes.runtime.calls import whole
from nodes.runtime.context import Context
from nodes.runtime.journal import CHANNEL, journaled
from nodes.runtime.llm import Caller, caller_for, clear_models
from nodes.runtime.node import model_node
from nodes.runtime.usage import Usage
from tests.support.openai_stub import Reply


class State(TypedDict, total=False):
    task_id: str
    answers: list[str]
    usage: Usage
    calls: list[Any]


class Crash(RuntimeError):
    """What kills the step after its replies came back (a SIGKILL, a browser crash)."""


def two_call_graph(crashes: list[bool], checkpointer: Any) -> Any:
    """One model node asking twice, then failing while ``crashes`` holds a True."""

    @model_node(caller_for)
    async def ask(state: State, runtime: Runtime[Context], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
        first = await llm([HumanMessage("first question")])
        second = await llm([HumanMessage(f"second question after {first.text}")])
        if crashes and crashes.pop(0):
            raise Crash("the step died after its replies came back")
        return {"answers": [first.text, second.text]}

    builder = StateGraph(State, context_schema=Context)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


@pytest.fixture(params=["sqlite", "postgres"])
def sqlite_url(request, tmp_path) -> str:
    """The checkpointer: a SQLite file, or the test PostgreSQL (INTROSPECT_TEST_POSTGRES)."""
    clear_models()
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'checkpoints.sqlite'}"
    if not os.environ.get("INTROSPECT_TEST_POSTGRES"):
        pytest.skip("no PostgreSQL for tests (INTROSPECT_TEST_POSTGRES; .ci/setup starts one)")
    return os.environ["INTROSPECT_TEST_POSTGRES"]


RUN = uuid.uuid4().hex[:8]  # a Postgres database outlives the test: thread ids of this run only


async def _run(graph: Any, thread: str, first_input: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": f"{thread}-{RUN}"}}
    result: dict[str, Any] = await graph.ainvoke(first_input, config, context=Context(), durability="sync")
    return result


def test_a_step_run_again_asks_the_model_nothing_twice(openai_stub, sqlite_url):
    openai_stub.replies.extend([Reply("one"), Reply("two")] * 2)

    async def go() -> tuple[dict[str, Any], dict[str, Any], int, list[Any]]:
        async with open_checkpointer(sqlite_url) as saver:
            straight = await _run(two_call_graph([], saver), "straight", {"task_id": "t"})
            uninterrupted = len(openai_stub.requests)
            graph = two_call_graph([True], saver)
            with pytest.raises(Crash):
                await _run(graph, "crashed", {"task_id": "t"})
            resumed = await _run(graph, "crashed", None)
            head = await saver.aget_tuple({"configurable": {"thread_id": f"crashed-{RUN}"}})
            assert head is not None
            parent = await saver.aget_tuple(head.parent_config)  # the step's own checkpoint, with its writes
            kept = [value for _, channel, value in (parent.pending_writes if parent else []) if channel == CHANNEL]
            return straight, resumed, uninterrupted, kept

    straight, resumed, uninterrupted, kept = asyncio.run(go())
    assert uninterrupted == 2
    assert len(openai_stub.requests) == 2 * uninterrupted  # the crashed thread's two calls, once each
    assert resumed["answers"] == straight["answers"] == ["one", "two"]
    assert resumed["usage"]["model_calls"] == 2 and [c["position"] for c in resumed["calls"]] == [0, 1]
    assert [c["content"] for c in kept] == ["one", "two"]  # the journal: the step's replies, by position
    assert "sk-" not in json.dumps(kept)  # redacted as the call log is


def test_a_call_under_way_when_the_step_is_cancelled_is_received_and_kept(openai_stub, sqlite_url):
    """A server stopping (SIGTERM) cancels its runs: the reply being answered is still taken
    and kept, and the resumed step does not ask for it again."""
    openai_stub.replies.extend([Reply("one", delay=1.0), Reply("two")])

    async def go() -> dict[str, Any]:
        async with open_checkpointer(sqlite_url) as saver:
            graph = two_call_graph([], saver)
            run = asyncio.ensure_future(_run(graph, "stopped", {"task_id": "t"}))
            while not openai_stub.requests:
                await asyncio.sleep(0.05)
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            return await _run(graph, "stopped", None)

    resumed = asyncio.run(go())
    assert resumed["answers"] == ["one", "two"]
    assert len(openai_stub.requests) == 2  # "one" was asked once, though its step was cancelled


def test_a_changed_request_is_asked_again(openai_stub, sqlite_url):
    """A kept reply answers only the request it was given for: a step that asks something else
    when it runs again (its input changed) gets a fresh answer."""
    openai_stub.replies.extend([Reply("one"), Reply("two"), Reply("uno"), Reply("dos")])
    questions = iter(["first question", "primera pregunta"])

    @model_node(caller_for)
    async def ask(state: State, runtime: Runtime[Context], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
        first = await llm([HumanMessage(next(questions))])
        second = await llm([HumanMessage(f"then {first.text}")])
        if second.text == "two":
            raise Crash("died")
        return {"answers": [first.text, second.text]}

    async def go() -> dict[str, Any]:
        async with open_checkpointer(sqlite_url) as saver:
            builder = StateGraph(State, context_schema=Context)
            builder.add_node("ask", ask)
            builder.add_edge(START, "ask")
            builder.add_edge("ask", END)
            graph = builder.compile(checkpointer=saver)
            with pytest.raises(Crash):
                await _run(graph, "changed", {"task_id": "t"})
            return await _run(graph, "changed", None)

    assert asyncio.run(go())["answers"] == ["uno", "dos"]
    assert len(openai_stub.requests) == 4


def test_the_call_log_keeps_each_call_once_in_the_journal(openai_stub, sqlite_url):
    """The state's call log holds a journaled call without its messages (checkpoints do not grow
    with them), and where the journal keeps them: the whole record is read back from there."""
    openai_stub.replies.extend([Reply("one"), Reply("two")])

    async def go() -> tuple[list[Any], list[Any]]:
        async with open_checkpointer(sqlite_url) as saver:
            final = await _run(two_call_graph([], saver), "logged", {"task_id": "t"})
            kept = await journaled(saver, f"logged-{RUN}")
            return final["calls"], [whole(call, kept) for call in final["calls"]]

    logged, wholes = asyncio.run(go())
    assert [c["position"] for c in logged] == [0, 1] and all("kept" in c for c in logged)
    assert not any(key in c for c in logged for key in ("request", "content", "tool_calls"))
    assert [c["content"] for c in wholes] == ["one", "two"]
    assert wholes[0]["request"]["messages"][0]["content"] == "first question"
    assert wholes[1]["request"]["messages"][0]["content"] == "second question after one"
