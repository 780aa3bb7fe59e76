"""AutoPlan inference (the collection graph) with a scripted model on the toy household:
ReAct zero-shot with an empty plan, a given plan in the prompts, the formalizer, the step
cap, refused commands as feedback, greedy decoding and the per-task cost."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.base import EnvError
from graphs import autoplan
from introspect.training import load_plan
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import model_for
from tests.graphs.test_autoplan_kit import reply, step_replies, toy_alfworld  # noqa: F401 (fixture)

WIN = [
    *step_replies(
        "The egg must be heated.", "I think I'll warm up the egg 1 in the microwave 1", "heat egg 1 with microwave 1"
    ),
    *step_replies("Put it down.", "place the egg onto countertop 2", "put egg 1 in countertop 2"),
]


async def run(spec: str, task: str = "heat/2", thread: str = "inf-t", **overrides):
    values = dict(model=spec, env="alfworld")
    values.update(overrides)
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    return await runner.ainvoke({"task_id": task}, config, context=AutoPlanContext(**values))


def prompts_of(spec: str, temperature: float = 0.0) -> list[str]:
    return ["\n".join(str(m.content) for m in c["messages"]) for c in model_for(spec, temperature, 512).calls]


async def test_react_zero_shot_is_the_collection_with_an_empty_plan(toy_alfworld, write_script):
    spec = write_script(WIN)
    state = await run(spec)
    assert state["success"] and state["done"] and state["actions"] == 2
    first = prompts_of(spec)[0]
    assert "Game Plan:" not in first and "Identify which step of plan" not in first
    assert first.rstrip().endswith("Show your thought about the next action.")
    # P_j states the objective; o_0 is the original code's state summary: every place to go to
    assert (
        "Game Starts:\nGame Objective: heat some egg and put it in countertop 2.\n"
        "You arrive at the middle of a room.\n"
        "You have not been to microwave 1, countertop 1, countertop 2, countertop 3.\n"
        "You are taking nothing with you.\n"
    ) in first
    assert "Your task is to" not in first and "Looking quickly around you" not in first
    assert model_for(spec, 1.0, 512).calls == []  # inference decodes greedily
    extra = autoplan.result(state)
    assert extra["model_calls"] == 6 and extra["with_plan"] is False
    assert extra["input_tokens"] > 0 and extra["cost_usd"] is None  # scripted models are unpriced


async def test_a_given_plan_is_in_every_thought_prompt(toy_alfworld, write_script):
    spec = write_script(WIN)
    plan = "1. heat egg 1 with microwave 1\n2. put egg 1 in/on the target countertop"
    state = await run(spec, plan=plan)
    assert state["success"] and autoplan.result(state)["with_plan"] is True
    thoughts = [p for p in prompts_of(spec) if p.rstrip().endswith("faithful to the plan step.")]
    assert len(thoughts) == 2 and all(f"Game Plan:\n{plan}" in p for p in thoughts)


async def test_the_formalizer_turns_a_free_form_action_into_a_command(toy_alfworld, write_script):
    spec = write_script(WIN)
    state = await run(spec)
    assert [s["action"] for s in state["trajectory"]] == ["heat egg 1 with microwave 1", "put egg 1 in/on countertop 2"]
    assert all(s["valid"] for s in state["trajectory"])
    formalizer = [p for p in prompts_of(spec) if "Formalized First Action:" in p]
    assert (
        formalizer[0]
        .rstrip()
        .endswith("Action: I think I'll warm up the egg 1 in the microwave 1\nFormalized First Action:")
    )
    # ALFWorld's chat keeps the free-form reply (a'_t), as the original code; the env got a_t
    said = [t["content"] for t in state["messages"] if t["role"] == "assistant"]
    assert "I think I'll warm up the egg 1 in the microwave 1" in said and "heat egg 1 with microwave 1" not in said


async def test_the_step_cap_ends_a_collection(toy_alfworld, write_script):
    # at ALFWorld's step cap the original code asks one more thought, about the last observation
    spec = write_script([*step_replies("Look.", "look around", "look") * 3, reply("Still nothing.")])
    state = await run(spec, max_actions=3, after_look="continue")  # "look" would restart the episode
    assert state["actions"] == 3 and not state["success"]
    assert state["stop_reason"] == "max_actions"
    assert state["experiences"][0]["outcome"] == "Job failed. Maximum number of steps reached."
    assert autoplan.result(state)["model_calls"] == 10
    assert state["experiences"][0]["messages"][-1] == {"role": "assistant", "content": "Still nothing."}


async def test_the_papers_transcript_ends_a_collection_at_the_step_cap_without_a_thought(toy_alfworld, write_script):
    spec = write_script(step_replies("Look.", "look around", "look") * 3)
    state = await run(spec, max_actions=3, transcript="paper", after_look="continue")
    assert state["actions"] == 3 and state["stop_reason"] == "max_actions"
    assert autoplan.result(state)["model_calls"] == 9


async def test_a_refused_command_comes_back_as_feedback(toy_alfworld, write_script):
    spec = write_script([*step_replies("Hmm.", "no idea", "I don't know"), *WIN])
    state = await run(spec, max_actions=3)
    refused = state["trajectory"][0]
    assert refused["valid"] is False and "not a valid action" in refused["feedback"]
    second_thought = prompts_of(spec)[3]
    assert (
        "Observation: Action failed. System Message: i don't know is not a valid action in this household."
        in second_thought
    )
    assert state["success"]  # the run goes on after the refusal


async def test_react_few_shot_is_refused_where_react_wrote_no_examples(write_script):
    with pytest.raises(EnvError, match="few-shot examples for alfworld and hotpotqa only, not webshop"):
        await run(write_script(WIN), "0", env="webshop", few_shot="react")


async def test_module_api_for_the_cli(tmp_path):
    assert autoplan.METHOD.default_env == "alfworld" and autoplan.METHOD.envs == (
        "alfworld",
        "hotpotqa",
        "webshop",
        "miniwob",
        "webarena",
    )
    steps = AutoPlanContext.default("max_actions")
    assert (steps["alfworld"], steps["hotpotqa"]) == (35, 10)
    assert autoplan.recursion_limit(AutoPlanContext(env="alfworld")) >= 4 * 35 + 2
    assert set(autoplan.graph.get_graph().nodes) >= {"start", "think", "act", "formalize", "execute", "finish"}
    assert set(autoplan.training_graph.get_graph().nodes) >= {
        "sample_batch",
        "collect",
        "score_batch",
        "reflect",
        "plan",
    }
    bad = tmp_path / "bad.json"
    bad.write_text('{"plans": []}')
    with pytest.raises(ValueError, match="final_plan"):
        load_plan(bad)
    with pytest.raises(ValueError, match="not found"):
        load_plan(tmp_path / "missing.json")
