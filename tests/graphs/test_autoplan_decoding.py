"""How AutoPlan's calls decode, seen in the requests the real ChatOpenAI client sends to the
local OpenAI-compatible stub. Sampling (paper 4.2): while training, the thought and action
calls use nucleus sampling (top_p 0.9, temperature 1.0) and so does the formalizer (the original
code's); the SIR reflection and the plan update are greedy; inference is greedy; --temperature /
--set top_p change the acting calls (and the formalizer) only.
Length (the original code; the paper is silent): stop sequences and token
limits per call kind, and replies cut at the stop even when a server ignores it."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import autoplan
from nodes.autoplan.context import AutoPlanContext
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


# max_actions=1 ends these games at the step cap, where the original code (the default transcript)
# asks one more thought, about the last observation
CAP_THOUGHT = "Now I put the egg down."


def one_step(*after: str) -> list[Reply]:
    return [
        Reply(content=c)
        for c in ("I will heat the egg.", "heat the egg 1 with microwave 1", "heat egg 1 with microwave 1", *after)
    ]


async def train_once(**overrides) -> dict:
    values = dict(model="openai:gpt-4o-mini", env="alfworld", batch_size=1, iterations=1, max_actions=1)
    values.update(overrides)
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sampling"}, "recursion_limit": 100}
    return await runner.ainvoke({"task_ids": ["heat/1"]}, config, context=AutoPlanContext(**values))


async def infer(task_id: str = "heat/1", **overrides) -> dict:
    values = dict(model="openai:gpt-4o-mini", env="alfworld", max_actions=1)
    values.update(overrides)
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sampling-inf"}, "recursion_limit": 100}
    return await runner.ainvoke({"task_id": task_id}, config, context=AutoPlanContext(**values))


async def test_training_samples_the_acting_calls_and_decodes_the_rest_greedily(toy_alfworld, stub):
    stub.replies.extend(one_step(CAP_THOUGHT, "SUMMARY", "FLAW", "1. heat the egg"))
    state = await train_once()
    assert state["plans"] == ["", "1. heat the egg"]
    assert sampling(stub) == [
        ("thought", 1.0, 0.9),
        ("action", 1.0, 0.9),  # nucleus sampling, p=0.9 (paper 4.2)
        ("formalize", 1.0, 0.9),  # the original samples its formalizer with the run's settings
        ("thought", 1.0, 0.9),  # the original's thought at the step cap
        ("summary", 0.0, None),
        ("flaw", 0.0, None),
        ("update", 0.0, None),
    ]


async def test_train_temperature_and_top_p_set_the_acting_calls_only(toy_alfworld, stub):
    stub.replies.extend(one_step(CAP_THOUGHT, "SUMMARY", "FLAW", "REVISION", "1. heat the egg"))
    await train_once(train_temperature=0.7, train_top_p=0.5, temperature=0.2, plan="1. find the egg")
    assert sampling(stub) == [
        ("thought", 0.7, 0.5),
        ("action", 0.7, 0.5),
        ("formalize", 0.7, 0.5),
        ("thought", 0.7, 0.5),
        ("summary", 0.0, None),
        ("flaw", 0.0, None),
        ("revision", 0.0, None),
        ("update", 0.0, None),
    ]


async def test_inference_is_greedy(toy_alfworld, stub):
    stub.replies.extend(one_step(CAP_THOUGHT))
    await infer(plan="1. heat the egg")
    assert sampling(stub) == [
        ("thought", 0.0, None),
        ("action", 0.0, None),
        ("formalize", 0.0, None),
        ("thought", 0.0, None),
    ]
    stub.requests.clear()
    stub.replies.extend(one_step(CAP_THOUGHT))
    await infer(temperature=0.3)
    assert sampling(stub) == [
        ("thought", 0.3, None),
        ("action", 0.3, None),
        ("formalize", 0.3, None),
        ("thought", 0.3, None),
    ]


async def test_a_greedy_formalizer_is_an_option(toy_alfworld, stub):
    stub.replies.extend(one_step(CAP_THOUGHT, "SUMMARY", "FLAW", "1. heat the egg"))
    await train_once(formalizer_sampling="greedy")
    assert sampling(stub)[:3] == [("thought", 1.0, 0.9), ("action", 1.0, 0.9), ("formalize", 0.0, None)]


def limits(stub: OpenAIStub) -> list[tuple[str, list[str] | None, int | None]]:
    return [(kind(r), r.get("stop"), r.get("max_completion_tokens")) for r in stub.requests]


async def test_alfworld_calls_stop_and_are_limited_as_the_original(toy_alfworld, stub):
    # the stub ignores stop sequences, as some servers do: the client still cuts the replies
    stub.replies.extend(
        [
            Reply(content="I will heat the egg.\nThen I will put it down."),
            Reply(content="heat the egg 1 with microwave 1\nthen go to countertop 1"),
            Reply(content="heat egg 1 with microwave 1\ngo to countertop 1"),
            Reply(content="Now put it down.\nThat ends the job."),
            Reply(content="put egg 1 in/on countertop 1"),
            Reply(content="put egg 1 in/on countertop 1"),
            Reply(content="SUMMARY\nmore"),
            Reply(content="FLAW"),
            Reply(content="1. heat\n2. put"),
        ]
    )
    state = await train_once(max_actions=2, max_tokens=300)
    assert limits(stub) == [
        ("thought", None, 300),  # the opening thought: no stop, Context.max_tokens
        ("action", ["\n"], 50),
        ("formalize", ["\n"], 300),
        ("thought", ["\n"], 100),  # every later thought
        ("action", ["\n"], 50),
        ("formalize", ["\n"], 300),
        ("summary", None, 300),
        ("flaw", None, 300),
        ("update", None, 300),
    ]
    said = [t["content"] for t in state["experiences"][0]["messages"] if t["role"] == "assistant"]
    assert said[0] == "I will heat the egg.\nThen I will put it down."
    assert said[2] == "Now put it down."  # cut at the newline
    formalized = stub.requests[2]["messages"][-1]["content"]
    assert formalized.rstrip().endswith("Action: heat the egg 1 with microwave 1\nFormalized First Action:")
    assert state["plans"][-1] == "1. heat\n2. put"  # the plan update is not cut


async def test_hotpotqa_calls_stop_at_a_newline(stub):
    stub.replies.extend(
        [
            Reply(content="Search Scott Derrickson.\nThen Ed Wood."),
            Reply(content="search him"),
            Reply(content="search[Scott Derrickson]\nsearch[Ed Wood]"),
        ]
    )
    state = await infer(
        env="hotpotqa", max_actions=1, task_id="5a8b57f25542995d1e6f1371", env_options={"backend": "local"}
    )
    assert limits(stub) == [("thought", ["\n"], 512), ("action", ["\n"], 512), ("formalize", ["\n"], 512)]
    assert state["thought"] == "Search Scott Derrickson."
    assert [s["action"] for s in state["trajectory"]] == ["search[Scott Derrickson]"]
