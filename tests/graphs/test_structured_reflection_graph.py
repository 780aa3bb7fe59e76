"""Structured Reflection graph paths with scripted models on a tiny deterministic page env.

The fake env (tests/graphs/sr_support.py) stands in for MiniWoB where the logic, not the
browser, is under test. The real-MiniWoB tests live in test_structured_reflection_miniwob.py;
the options (reflection screens, Figure 7's ablations) in test_structured_reflection_options.py.
"""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from envs.sessions import SESSIONS
from graphs.structured_reflection import build_graph, result
from nodes.sr.context import SRContext
from tests.graphs.sr_support import fake_env, prompts_seen, run_sr, screen_in, scripted  # noqa: F401 (fixture)


async def run(spec: str, task: str, **options: Any) -> dict[str, Any]:
    """Plans here are written as a model writes them (list markers, "Your plan:"): they are read
    for their actions (``plan_reading="actions"``) unless a test asks for the code's reading."""
    return await run_sr(spec, task, "fakepage", **{"plan_reading": "actions", **options})


async def test_staged_plan_solves_a_screen_in_one_planning_call(tmp_path):
    spec = scripted(tmp_path, ["Your plan:\n1. click id=2\n2. `click id=3`\n3. click id=5.", "ticked B", "ticked C"])
    out = await run(spec, "boxes/0")
    assert out["success"] and out["status"] == "correct"
    assert result(out) == {
        "trials": 1,
        "status": "correct",
        "planning_calls": 1,
        "trial_records": [
            {
                "trial": 1,
                "status": "correct",
                "actions": ["click id=2", "click id=3", "click id=5"],
                "planning_calls": 1,
            }
        ],
    }
    assert out["usage"]["model_calls"] == 3  # one plan, two paraphrases (none after the winning click)


async def test_failed_trial_is_reflected_and_the_fix_enforced_without_a_model_call(tmp_path):
    spec = scripted(tmp_path, ["click id=1", "clicked Cancel", "For action index=1, you should click id=5."])
    out = await run(spec, "button/0")
    assert out["success"]
    statuses = [t["status"] for t in out["trials"]]
    assert statuses == ["failed", "correct"]
    assert out["trials"][1]["sources"] == ["enforce"] and out["trials"][1]["planning_calls"] == 0
    assert out["memory"]["entries"] == {
        "0": {
            "reflection": "For action index=1, you should click id=5.",
            "action": "click id=5",
            "failed": ["click id=1"],
            "disabled": ["1"],
        }
    }
    reflection_prompt = prompts_seen(spec)[2]
    assert "However, your actions did not complete the goal." in reflection_prompt
    assert "The index=1 screen:\n<screen>\n<div>Click on" in reflection_prompt
    assert "</screen>\nYour index=1 action: click id=1\n" in reflection_prompt  # the action, not its paraphrase


async def test_second_trial_replays_and_plans_at_a_with_the_lesson(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",  # trial 1: D instead of C
            "ticked B",
            "ticked D",
            "submitted",
            "For action index=2, you should tick the C checkbox instead.",  # prose: a lesson, not enforceable
            "click id=3\nclick id=5",  # trial 2, step 1: the planner follows the lesson
            "ticked C",
        ],
    )
    out = await run(spec, "boxes/0")
    assert out["success"]
    second = out["trials"][1]
    assert second["sources"] == ["replay", "plan", "plan"]
    assert second["actions"] == ["click id=2", "click id=3", "click id=5"]
    assert second["planning_calls"] == 1
    plan_at_a = prompts_seen(spec)[5]
    # B is prose, not a click on another element: the original code keeps the failed D's id
    assert '<checkbox id=4 value="false">D</checkbox>' in screen_in(plan_at_a)
    assert "- For action index=2, you should tick the C checkbox instead." in plan_at_a
    assert "Now, you need to follow the lessons to plan your next action." in plan_at_a
    assert "1st action: ticked B" in plan_at_a  # the replayed step keeps its paraphrase


async def test_b_that_already_failed_is_not_enforced_and_both_ids_are_disabled(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=1",
            "clicked Cancel",
            "For action index=1, you should click id=3.",
            "clicked Help",
            "For action index=1, you should click id=1.",  # B failed in trial 1
            "click id=5",
        ],
    )
    # the paper's setting: a failed B is not enforced, disabled ids leave the planner's screen
    out = await run(spec, "button/0", hide_failed_clicks="planning", enforce_failed=False)
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["enforce"], ["plan"]]
    assert out["success"] and out["memory"]["entries"]["0"]["disabled"] == ["1", "3"]
    shown = screen_in(prompts_seen(spec)[-1])
    assert "id=1" not in shown and "id=3" not in shown and ">Cancel</button>" in shown


async def test_an_earlier_correction_clears_later_entries(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=1\nclick id=3\nclick id=4\nclick id=5",  # trial 1: A, C, D
            "A",
            "C",
            "D",
            "submit",
            "For action index=3, you should click id=5.",  # trial 2: replay A, C; enforce submit
            "submit",
            "For action index=1, you should click id=2.",  # trial 3: enforce B, then plan
            "B",
            "click id=3\nclick id=5",
            "C",
        ],
    )
    out = await run(spec, "boxes/0")
    assert [t["status"] for t in out["trials"]] == ["failed", "failed", "correct"]
    assert out["trials"][1]["sources"] == ["replay", "replay", "enforce"]
    assert list(out["memory"]["entries"]) == ["0"]  # the entry for index=3 is outdated
    assert out["memory"]["replay"] == []
    assert out["trials"][2]["sources"] == ["enforce", "plan", "plan"]
    assert "<checkbox id=1 " in prompts_seen(spec)[-2]  # A is disabled at step 0 only


async def test_no_change_status_and_its_reflection_prompt(tmp_path):
    spec = scripted(tmp_path, ["click id=6", "clicked the instructions", "For action index=1, you should click id=5."])
    out = await run(spec, "button/0")
    assert out["trials"][0]["status"] == "no change"
    assert "did not cause anything to change" in prompts_seen(spec)[2]
    assert out["success"]


async def test_cycle_status(tmp_path):
    spec = scripted(tmp_path, ["click id=8\nclick id=7\nclick id=5", "opened tab 2"])
    out = await run(spec, "button/0", max_trials=1)
    assert out["trials"][0]["status"] == "cycle"
    assert out["trials"][0]["actions"] == ["click id=8", "click id=7"]  # halted before the submit
    assert out["stop_reason"] == "cycle after 1 trial(s)"


async def test_malformed_plan_line_becomes_exception_feedback(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick the C checkbox\nclick id=5",
            "ticked B",
            "I am not sure what went wrong.",  # a malformed reflection: memory unchanged
            "click id=2\nclick id=3\nclick id=5",
            "B",
            "C",
        ],
    )
    out = await run(spec, "boxes/0")
    first = out["trials"][0]
    assert first["status"] == "exception" and first["actions"] == ["click id=2", "click the C checkbox"]
    assert "reflection_error" in first and out["memory"]["entries"] == {}
    reflection_prompt = prompts_seen(spec)[2]
    assert "However, your last action is invalid." in reflection_prompt
    assert "Your index=2 action: click the C checkbox\n" in reflection_prompt
    refused = [s for s in out["trajectory"] if not s["valid"]]
    assert [s["action"] for s in refused] == ["click the C checkbox"]
    assert out["success"] and out["trials"][1]["status"] == "correct"


async def test_refused_env_action_is_an_exception(tmp_path):
    spec = scripted(tmp_path, ["click id=42"])
    out = await run(spec, "button/0", max_trials=1)
    assert out["trials"][0]["status"] == "exception"
    assert out["trajectory"][-1]["feedback"] == "no element with id=42 on the screen"


async def test_no_plan_is_incomplete_and_a_reflection_past_the_end_is_dropped_as_the_original(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=3",
            "B",
            "C",
            "The goal is fulfilled.",  # no further plan: incomplete
            "For action index=3, you should click id=5.",  # only 2 actions: dropped, as the paper's code does
            "click id=2\nclick id=3",
            "B",
            "C",
            "Done.",
        ],
    )
    out = await run(spec, "boxes/0", max_trials=2)
    assert [t["status"] for t in out["trials"]] == ["incomplete", "incomplete"]
    assert "outside the trajectory" in out["trials"][0]["reflection_error"] and out["memory"]["entries"] == {}


async def test_a_reflection_may_add_the_missing_action_as_an_option(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=3",
            "B",
            "C",
            "The goal is fulfilled.",  # no further plan: incomplete
            "For action index=3, you should click id=5.",
        ],
    )
    out = await run(spec, "boxes/0", reflect_past_end=True)
    assert out["trials"][0]["status"] == "incomplete"
    assert out["trials"][1]["sources"] == ["replay", "replay", "enforce"]
    assert out["success"] and out["usage"]["model_calls"] == 5


async def test_step_budget_gives_in_progress_as_the_paper(tmp_path):
    spec = scripted(tmp_path, ["click id=1\nclick id=2\nclick id=3\nclick id=5", "A", "B"])
    out = await run(spec, "boxes/0", max_trials=1, max_actions=2, budget_status="in_progress")
    assert out["trials"][0]["status"] == "in progress" and len(out["trials"][0]["actions"]) == 2


async def test_key_presses_need_no_paraphrase(tmp_path):
    spec = scripted(tmp_path, ['click id=2\nenter "hi" to id=9\npress ENTER\nclick id=5', "ticked B", "typed hi"])
    out = await run(spec, "boxes/0", max_trials=1)
    assert out["trials"][0]["status"] == "no change"  # ENTER changed nothing on this page
    assert out["usage"]["model_calls"] == 3  # the plan and two paraphrases


async def test_staged_planning_needs_fewer_planning_calls_than_iterative(tmp_path):
    staged = scripted(tmp_path, ["click id=2\nclick id=3\nclick id=5", "B", "C"])
    iterative = scripted(tmp_path, ["click id=2", "B", "click id=3", "C", "click id=5"])
    out_staged = await run(staged, "boxes/0")
    out_iterative = await run(iterative, "boxes/0", planning="iterative")
    assert out_staged["success"] and out_iterative["success"]
    calls = result(out_staged)["planning_calls"], result(out_iterative)["planning_calls"]
    assert calls == (1, 3)
    assert "plan the next atomic action" in prompts_seen(iterative)[0]


async def test_resumed_run_ends_like_an_uninterrupted_one(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "B",
            "D",
            "submit",
            "For action index=2, you should tick C.",
            "click id=3\nclick id=5",
            "C",
        ],
    )
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 500}
    # the paper's rule disables the failed click before a prose B: an id the rebuilt env must hide
    context = SRContext(model=spec, env="fakepage", disable_clicks="failed", hide_failed_clicks="planning")
    await graph.ainvoke({"task_id": "boxes/0"}, config, context=context, interrupt_before=["plan"])
    paused = await graph.ainvoke(None, config, context=context, interrupt_before=["plan"])
    assert paused["trial"] == 2 and len(paused["steps"]) == 1  # replayed, about to plan at A
    await SESSIONS.release(config["configurable"]["thread_id"])  # the process died: no live env
    out = await graph.ainvoke(None, config, context=context)
    assert out["success"] and out["trials"][1]["sources"] == ["replay", "plan", "plan"]
    assert "id=4" not in prompts_seen(spec)[5]  # the rebuilt env still hides the failed target
