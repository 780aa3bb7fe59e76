"""How AutoPlan's calls decode (paper 4.2), seen in the requests the real ChatOpenAI client
sends to the local OpenAI-compatible stub: while training, the thought and action calls use
nucleus sampling (top_p 0.9, temperature 1.0); the formalizer, the SIR reflection and the
plan update are greedy; inference is greedy; --temperature / --set top_p change the acting
calls only."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import autoplan
from graphs.context import Context
from tests.graphs.test_autoplan_kit import toy_alfworld  # noqa: F401 (fixture)
from tests.support.openai_stub import OpenAIStub, Reply

MARKS = (  # how each request is recognised: the end of its last message
    ("Show your thought about the next action.", "thought"),
    ("faithful to the plan step.", "thought"),
    ("Formalized First Action:", "formalize"),
    ("Action:", "action"),
    ("Summarize the interaction history in steps.", "summary"),
    ("Identify all flawed parts", "flaw"),
    ("Only the flawed part.", "revision"),
    ("New Game Plan:", "update"),
)


def kind(request: dict) -> str:
    last = request["messages"][-1]["content"].rstrip()
    return next(name for mark, name in MARKS if last.endswith(mark) or last.startswith(mark))


def sampling(stub: OpenAIStub) -> list[tuple[str, float | None, float | None]]:
    return [(kind(r), r.get("temperature"), r.get("top_p")) for r in stub.requests]


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def one_step(*after: str) -> list[Reply]:
    return [Reply(content=c) for c in ("I will heat the egg.", "heat the egg 1 with microwave 1",
                                       "heat egg 1 with microwave 1", *after)]


async def train_once(**overrides) -> dict:
    values = dict(model="openai:gpt-4o-mini", env="alfworld", batch_size=1, iterations=1, max_actions=1)
    values.update(overrides)
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sampling"}, "recursion_limit": 100}
    return await runner.ainvoke({"task_ids": ["heat/1"]}, config, context=Context(**values))


async def infer(**overrides) -> dict:
    values = dict(model="openai:gpt-4o-mini", env="alfworld", max_actions=1)
    values.update(overrides)
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sampling-inf"}, "recursion_limit": 100}
    return await runner.ainvoke({"task_id": "heat/1"}, config, context=Context(**values))


async def test_training_samples_the_acting_calls_and_decodes_the_rest_greedily(toy_alfworld, stub):
    stub.replies.extend(one_step("SUMMARY", "FLAW", "1. heat the egg"))
    state = await train_once()
    assert state["plans"] == ["", "1. heat the egg"]
    assert sampling(stub) == [
        ("thought", 1.0, 0.9), ("action", 1.0, 0.9),  # nucleus sampling, p=0.9 (paper 4.2)
        ("formalize", 0.0, None), ("summary", 0.0, None), ("flaw", 0.0, None), ("update", 0.0, None),
    ]


async def test_temperature_and_top_p_set_the_acting_calls_only(toy_alfworld, stub):
    stub.replies.extend(one_step("SUMMARY", "FLAW", "REVISION", "1. heat the egg"))
    await train_once(temperature=0.7, top_p=0.5, plan="1. find the egg")
    assert sampling(stub) == [
        ("thought", 0.7, 0.5), ("action", 0.7, 0.5),
        ("formalize", 0.0, None), ("summary", 0.0, None), ("flaw", 0.0, None), ("revision", 0.0, None),
        ("update", 0.0, None),
    ]


async def test_inference_is_greedy(toy_alfworld, stub):
    stub.replies.extend(one_step())
    await infer(plan="1. heat the egg")
    assert sampling(stub) == [("thought", 0.0, None), ("action", 0.0, None), ("formalize", 0.0, None)]
    stub.requests.clear()
    stub.replies.extend(one_step())
    await infer(temperature=0.3)
    assert sampling(stub) == [("thought", 0.3, None), ("action", 0.3, None), ("formalize", 0.0, None)]
