"""AutoPlan training with a scripted model on the toy household: the batch collected in
parallel through Send, SIR reflection per experience, the plan update, and the next
iteration reading the new plan; train() writes the plan file that load_plan reads."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.sessions import SESSIONS
from graphs import autoplan
from introspect.training import load_plan, train
from nodes.autoplan.batch import send_collections
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import clear_models, model_for
from tests.graphs.test_autoplan_kit import reply, step_replies, toy_alfworld  # noqa: F401 (fixture)

PLAN_1 = "PLAN-1: heat egg 1 with microwave 1, then put it in/on the target countertop."
PLAN_2 = "PLAN-2: go to microwave 1 first."


def iteration_script(new_plan: str, tag: str, revision: bool = True) -> list[dict]:
    """One iteration for the pool heat/1 + heat/2 (cap 3 actions): both branches read the
    same lines; heat/1 is won at step 2, heat/2 (countertop 2) runs into the cap at step 3,
    where the original code (the default transcript) asks one more thought. The Rev prompt is
    asked only when the iteration has a plan (``revision``)."""
    return [
        *step_replies(
            "I should heat the egg first.",
            "I will heat the egg 1 using the microwave 1",
            "Formalized First Action: heat egg 1 with microwave 1",
        ),
        *step_replies(
            "Now put the egg on countertop 1.", "put the egg 1 on the countertop 1", "put egg 1 on countertop 1"
        ),
        *step_replies("Maybe look around.", "look around the room", "look"),
        reply("The egg is still not on countertop 2."),  # the thought at the step cap
        reply(f"SUMMARY-{tag}"),
        reply(f"FLAW-{tag}"),
        *([reply(f"REVISION-{tag}")] if revision else []),
        reply(f"New Game Plan:\n{new_plan}"),
    ]


def two_iterations_script() -> list[dict]:
    """Iteration 0 (no plan: no revision) on lines 0-12, iteration 1 (PLAN_1) on lines 13-26."""
    return iteration_script(PLAN_1, "0", revision=False) + iteration_script(PLAN_2, "1")


CALLS = (6 + 10 + 2 * 2 + 1) + (6 + 10 + 2 * 3 + 1)  # collection, reflection, update per iteration


def calls_at(spec: str, temperature: float, position: int, top_p: float | None = None) -> list[dict]:
    return [c for c in model_for(spec, temperature, 512, top_p).calls if c["position"] == position]


def prompt_text(call: dict) -> str:
    return "\n".join(str(m.content) for m in call["messages"])


@pytest.fixture
def two_iterations(write_script):
    return write_script(two_iterations_script())


def context(spec: str, **overrides) -> AutoPlanContext:
    # the loop, not the reading: a labelled reply is cleaned and "look" goes on, as these scripts expect
    values = dict(model=spec, env="alfworld", batch_size=2, iterations=2, max_actions=3, seed=7)
    values.update(command_reading="normalized", after_look="continue")
    values.update(reflect_model="run")  # the script answers the reflections too (the code asks gpt-4-0314)
    values.update(overrides)
    return AutoPlanContext(**values)


async def run_training(spec: str, thread: str = "train-t", **overrides):
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    state = await runner.ainvoke({"task_ids": ["heat/1", "heat/2"]}, config, context=context(spec, **overrides))
    return runner, config, state


async def test_batch_is_collected_in_parallel_branches_with_own_sessions(toy_alfworld, two_iterations):
    runner, config, state = await run_training(two_iterations)
    history = [snap async for snap in runner.aget_state_history(config)]
    parallel = [snap for snap in history if snap.next == ("collect", "collect")]
    assert len(parallel) == 2  # one superstep per iteration runs both collections
    sessions = sorted(item["session"] for item in parallel[-1].values["batch"])
    assert sessions == ["train-t/0/heat/1", "train-t/0/heat/2"]
    played = sorted(env.task for env in toy_alfworld.created)
    assert played == ["heat/1", "heat/1", "heat/2", "heat/2"]  # a fresh env per branch and iteration
    assert not any(key.startswith("train-t/") for key in SESSIONS._sessions)  # every branch released


async def test_one_iteration_yields_two_reflections_and_a_plan_the_next_iteration_reads(toy_alfworld, two_iterations):
    _, _, state = await run_training(two_iterations)
    assert state["plans"] == ["", PLAN_1, PLAN_2]
    first = [r for r in state["reflections"] if r["iteration"] == 0]
    assert [(r["summary"], r["flaw"], r["revision"]) for r in first] == [("SUMMARY-0", "FLAW-0", "")] * 2
    second = [r for r in state["reflections"] if r["iteration"] == 1]
    assert [(r["summary"], r["flaw"], r["revision"]) for r in second] == [("SUMMARY-1", "FLAW-1", "REVISION-1")] * 2
    outcomes = {
        e["task_id"]: (e["success"], e["steps"], e["stop_reason"]) for e in state["experiences"] if e["iteration"] == 0
    }
    assert outcomes == {"heat/1": (True, 2, "done"), "heat/2": (False, 3, "max_actions")}
    assert state["scores"] == [{"iteration": 0, "successes": 1, "size": 2}, {"iteration": 1, "successes": 1, "size": 2}]

    # iteration 0 starts from the empty plan: ReAct's plain thought prompt, no plan section
    opening = calls_at(two_iterations, 1.0, 0, 0.9)  # training samples: nucleus, p=0.9
    assert len(opening) == 2 and all("Game Plan:" not in prompt_text(c) for c in opening)
    assert "Show your thought about the next action." in prompt_text(opening[0])
    # iteration 1 (script line 13) opens both games with PLAN_1 and Table 2's Thought-prompt
    reopening = calls_at(two_iterations, 1.0, 13, 0.9)
    assert len(reopening) == 2
    for call in reopening:
        assert f"Game Plan:\n{PLAN_1}" in prompt_text(call)
        assert "Identify which step of plan you are at." in prompt_text(call)


async def test_reflection_and_update_prompts_carry_the_batch(toy_alfworld, two_iterations):
    _, _, state = await run_training(two_iterations)
    summaries = calls_at(two_iterations, 0.0, 10)
    assert len(summaries) == 2
    texts = sorted(prompt_text(c) for c in summaries)
    assert any(
        "Job failed. Maximum number of steps reached. Summarize the interaction history in steps." in t for t in texts
    )
    assert any("Job succeeded. Summarize the interaction history in steps." in t for t in texts)
    update = prompt_text(calls_at(two_iterations, 0.0, 12)[0])
    assert "Current Game Plan:\nNone" in update
    for label in (
        "Job 0:",
        "Job 1:",
        "Summary of Job 1:\nSUMMARY-0",
        "Flawed Actions of Job 0:\nFLAW-0",
        "Succeeded",
        "Failed",
    ):  # jobs numbered from 0, as the original numbers them
        assert label in update
    assert "Job 2:" not in update
    assert "Suggested Revision" not in update  # no plan yet: nothing was revised (the original)
    revision = calls_at(two_iterations, 0.0, 25)[0]
    assert "FLAW-1" in prompt_text(revision)  # the revision reads the flaws it continues from
    second_update = prompt_text(calls_at(two_iterations, 0.0, 26)[0])
    assert f"Current Game Plan:\n{PLAN_1}" in second_update
    assert "Suggested Revision of Plan from Job 1:\nREVISION-1" in second_update
    # every call counted for cost: collection, reflection and update of both iterations
    assert state["usage"]["model_calls"] == CALLS == 44


async def test_positions_are_counters_not_fields(toy_alfworld, two_iterations):
    """No scripted-only fields: the run keeps no position, a branch no offset; the lockstep
    positions come from the experiences' counters (heat/2's 10 calls, from line 0 and line 13)."""
    _, _, state = await run_training(two_iterations)
    assert "position" not in state
    sends = send_collections({**state, "plans": state["plans"][:2], "batch": state["batch"]})
    assert [set(send.arg["branch"]) for send in sends] == [{"session", "iteration", "index"}] * 2
    assert [send.arg["usage"]["model_calls"] for send in sends] == [13, 13]  # iteration 1's lines start at 13
    counters = sorted((e["iteration"], e["usage"]["model_calls"]) for e in state["experiences"])
    assert counters == [(0, 6), (0, 10), (1, 19), (1, 23)]


async def test_reflection_without_flaw_and_revision(toy_alfworld, write_script):
    script = [*iteration_script(PLAN_1, "0")[:10], reply("SUMMARY-ONLY"), reply(PLAN_1)]
    spec = write_script(script)
    _, _, state = await run_training(spec, iterations=1, reflect_flaw_revision=False)
    assert [(r["summary"], r["flaw"], r["revision"]) for r in state["reflections"]] == [("SUMMARY-ONLY", "", "")] * 2
    update = prompt_text(calls_at(spec, 0.0, 11)[0])
    assert "Flawed Actions of Job 0:\nN/A" in update and "SUMMARY-ONLY" in update
    assert state["plans"] == ["", PLAN_1]


async def test_train_writes_every_plan_and_load_plan_reads_the_final_one(toy_alfworld, two_iterations, tmp_path):
    out = tmp_path / "plans" / "heat.json"
    record = await train(
        autoplan.METHOD,
        context(two_iterations),
        task_ids=["heat/1", "heat/2"],
        plan_out=out,
        checkpointer=InMemorySaver(),
        thread_id="cli-train",
    )
    written = json.loads(out.read_text())
    assert written["plans"] == ["", PLAN_1, PLAN_2] and written["final_plan"] == PLAN_2
    assert [h["iteration"] for h in written["history"]] == [0, 1]
    assert {j["summary"] for j in written["history"][0]["jobs"]} == {"SUMMARY-0"}
    assert written["usage"]["model_calls"] == CALLS and record == written
    assert out.with_suffix(".txt").read_text().strip() == PLAN_2
    assert load_plan(out) == PLAN_2
    assert load_plan(out.with_suffix(".txt")) == PLAN_2


async def test_a_run_killed_mid_batch_resumes_to_the_same_plans(toy_alfworld, write_script, tmp_path):
    full = two_iterations_script()
    spec = write_script(full[:16], name="resume.jsonl")  # dies inside iteration 1's collections
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "resume-t"}, "recursion_limit": 200}
    with pytest.raises(Exception, match="replies"):
        await runner.ainvoke({"task_ids": ["heat/1", "heat/2"]}, config, context=context(spec))
    assert (await runner.aget_state(config)).values["plans"] == ["", PLAN_1]
    write_script(full, name="resume.jsonl")
    clear_models()
    state = await runner.ainvoke(None, config, context=context(spec))
    assert state["plans"] == ["", PLAN_1, PLAN_2]
    assert state["usage"]["model_calls"] == CALLS  # nothing counted twice, nothing lost
    assert len(state["experiences"]) == 4 and len(state["reflections"]) == 4


async def test_train_resumes_a_failed_run_and_closes_its_sessions(toy_alfworld, write_script, tmp_path):
    full = two_iterations_script()
    spec = write_script(full[:16], name="train-resume.jsonl")
    saver, out = InMemorySaver(), tmp_path / "plan.json"
    with pytest.raises(Exception, match="replies"):
        await train(
            autoplan.METHOD,
            context(spec),
            task_ids=["heat/1", "heat/2"],
            plan_out=out,
            checkpointer=saver,
            thread_id="tr",
        )
    assert not out.exists()
    assert not any(key.startswith("tr/") for key in SESSIONS._sessions)  # the dead batch's envs closed
    write_script(full, name="train-resume.jsonl")
    clear_models()
    record = await train(
        autoplan.METHOD, context(spec), task_ids=[], plan_out=out, checkpointer=saver, thread_id="tr", resume=True
    )
    assert record["plans"] == ["", PLAN_1, PLAN_2] and json.loads(out.read_text())["final_plan"] == PLAN_2


async def test_train_refuses_an_empty_pool(tmp_path):
    with pytest.raises(ValueError, match="at least one task"):
        await train(
            autoplan.METHOD, AutoPlanContext(env="alfworld"), task_ids=[], plan_out=tmp_path / "p.json", thread_id="x"
        )
