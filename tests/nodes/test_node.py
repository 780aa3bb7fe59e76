"""model_node: a model-calling node gets its Caller and its usage reaches state whatever path
it returns by, so a scripted model's next reply is the next line; a failed call still reports
what the node spent; a node cannot write usage itself."""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import add_nodes, add_sent_node
from nodes.runtime import llm
from nodes.runtime.channels import log
from nodes.runtime.context import Context
from nodes.runtime.llm import Caller, ModelCallError, caller_for
from nodes.runtime.node import UsageWritten, model_node
from nodes.runtime.state import RunState


class AskState(RunState, total=False):
    replies: Annotated[list[str], log()]


class Question(TypedDict):
    """What a Send gives a node instead of the graph's state."""

    question: str


def asking(count: int):
    """A model node asking ``count`` questions; it returns early when there are none. Its
    update never names usage."""

    @model_node(caller_for)
    async def ask(state: AskState, runtime: Runtime[Context], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
        if not count:
            return {"replies": []}
        return {"replies": [(await llm([HumanMessage("next?")])).text for _ in range(count)]}

    return ask


@model_node(caller_for)
async def writes_usage(state: AskState, runtime: Runtime[Context], config: RunnableConfig, llm: Caller) -> dict:
    await llm([HumanMessage("next?")])
    return {"usage": llm.usage}


def graph(*nodes: tuple[str, Any]):
    builder = StateGraph(AskState, context_schema=Context)
    add_nodes(builder, dict(nodes))
    names = [name for name, _ in nodes]
    for before, after in zip([START, *names], [*names, END]):
        builder.add_edge(before, after)
    return builder.compile()


@pytest.fixture
def script(tmp_path):
    """A context whose scripted model answers "reply 0", "reply 1", ... (six lines)."""
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps({"content": f"reply {i}"}) + "\n" for i in range(6)))
    yield Context(model=f"scripted:{path}")
    llm.clear_models()


async def test_each_model_node_reads_the_next_reply_though_none_returns_usage(script):
    """Three model nodes (two calls, none, one) whose updates never name usage: each one's
    Caller starts where the last one stopped, so no reply is repeated."""
    state = await graph(("first", asking(2)), ("second", asking(0)), ("third", asking(1))).ainvoke(
        {"task_id": "t"}, context=script
    )
    assert state["replies"] == ["reply 0", "reply 1", "reply 2"]
    assert state["usage"]["model_calls"] == 3


async def test_every_call_is_logged_in_state_as_made(script):
    """The state's call log (nodes.runtime.calls) holds each call: its node and position, the messages
    sent, the reply, its tokens, time and retries."""
    state = await graph(("first", asking(2)), ("second", asking(0)), ("third", asking(1))).ainvoke(
        {"task_id": "t"}, context=script
    )
    calls = state["calls"]
    assert [(c["node"], c["position"], c["task_id"]) for c in calls] == [
        ("first", 0, "t"),
        ("first", 1, "t"),
        ("third", 2, "t"),
    ]
    assert [c["content"] for c in calls] == ["reply 0", "reply 1", "reply 2"]
    assert all(c["request"]["messages"] == [{"role": "human", "content": "next?"}] for c in calls)
    assert all(c["usage"]["input_tokens"] > 0 and c["seconds"] >= 0 and c["retries"] == 0 for c in calls)


async def test_no_key_enters_the_call_log(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    path = tmp_path / "script.jsonl"
    path.write_text(json.dumps({"content": "my key is sk-test-0123456789"}) + "\n")
    state = await graph(("first", asking(1))).ainvoke({"task_id": "t"}, context=Context(model=f"scripted:{path}"))
    llm.clear_models()
    assert "sk-test-0123456789" not in json.dumps(state["calls"]) and state["calls"][0]["content"] == "my key is ***"


async def test_a_node_without_calls_writes_no_usage(script):
    """The middle node above asks nothing: its update carries no usage at all; the others' do."""
    nodes = graph(("first", asking(1)), ("second", asking(0)))
    updates = [update async for update in nodes.astream({"task_id": "t"}, context=script, stream_mode="updates")]
    assert updates[0]["first"]["usage"]["model_calls"] == 1
    assert updates[1] == {"second": {"replies": []}}


async def test_a_failed_call_reports_the_calls_made_before_it(tmp_path):
    path = tmp_path / "short.jsonl"
    path.write_text(json.dumps({"content": "only reply"}) + "\n")
    with pytest.raises(ModelCallError) as failed:
        await graph(("first", asking(2))).ainvoke({"task_id": "t"}, context=Context(model=f"scripted:{path}"))
    llm.clear_models()
    assert failed.value.usage["model_calls"] == 1  # the first reply's call; the state never got it
    assert failed.value.usage["input_tokens"] > 0


async def test_a_model_node_cannot_write_usage_itself(script):
    with pytest.raises(UsageWritten, match="writes_usage"):
        await graph(("first", writes_usage)).ainvoke({"task_id": "t"}, context=script)


def test_langgraph_reads_a_model_nodes_own_input_type():
    """LangGraph takes a node's input schema from its ``state`` annotation (a Send target's own
    input); the wrapper shows it the wrapped node's."""

    @model_node(caller_for)
    async def answer(state: Question, runtime: Runtime[Context], config: RunnableConfig, llm: Caller) -> dict:
        return {"replies": [(await llm([HumanMessage(state["question"])])).text]}

    builder = StateGraph(AskState, context_schema=Context)
    add_sent_node(builder, "answer", answer)
    assert builder.nodes["answer"].input_schema is Question
