"""Structured Reflection as the paper specifies it, and its options, on the fake page env:
the reflection prompt of Appendix E (every screen) and of Sec. 7.5 (first screen only), cycles
within a stage (the paper's code), and Figure 7's ablations (Sec. 7.1 and 7.2)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from nodes.runtime.context import ContextError
from nodes.sr.context import SRContext
from tests.graphs.sr_support import (  # noqa: F401
    FakePageEnv,
    fake_env,
    prompts_seen,
    run_sr,
    screen_in,
    scripted,
)

SUGGESTION = (
    "However, your actions did not complete the goal. Now, you need to identify the earliest critical "
    "step where you made a mistake, and suggest a correction. Your suggestion should be in this format: "
    '"For action index=A, you should B.", where A is the action index, and B is the suggested action you '
    "should have taken.\nYour suggestion:"
)


async def run(spec: str, task: str, **options: Any) -> dict[str, Any]:
    """Plans here are written as a model writes them (list markers, "Your plan:"): they are read
    for their actions (``plan_reading="actions"``) unless a test asks for the code's reading."""
    return await run_sr(spec, task, "fakepage", **{"plan_reading": "actions", **options})


async def screens_after(task: str, *actions: str) -> list[str]:
    """The fake env's screens: the first, then the one after each action."""
    env = FakePageEnv()
    screens = [(await env.reset(task)).text]
    for action in actions:
        screens.append((await env.step(action)).observation.text)
    return screens


def hidden(screen: str, *ids: int) -> str:
    for i in ids:
        screen = screen.replace(f" id={i}>", ">").replace(f" id={i} ", " ")
    return screen


# --- Appendix E: the screen before every action ------------------------------------------------


async def test_reflection_prompt_is_appendix_e_every_screen_then_its_action(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "ticked B",
            "ticked D",
            "submitted",
            "For action index=2, you should click id=3.",
            "ticked C",
            "click id=5",
        ],
    )
    out = await run(spec, "boxes/0")
    first, after_b, after_d, _ = await screens_after("boxes/0", "click id=2", "click id=4", "click id=5")
    assert [t["status"] for t in out["trials"]] == ["failed", "correct"]
    assert prompts_seen(spec)[4] == (
        "You are operating a computer for a task: boxes. You went over a series of screens and executed actions to "
        "fulfill a top-level goal.\nYour action trajectory is as follows:\n"
        f"The index=1 screen:\n<screen>\n{first}\n</screen>\nYour index=1 action: click id=2\n\n"
        f"The index=2 screen:\n<screen>\n{after_b}\n</screen>\nYour index=2 action: click id=4\n\n"
        f"The index=3 screen:\n<screen>\n{after_d}\n</screen>\nYour index=3 action: click id=5\n\n"
        "\nYou conducted the above actions for the top-level goal: Select B, C and click Submit.\n\n" + SUGGESTION
    )
    assert first != after_b != after_d  # each step's own screen, not the first one three times


async def test_each_screen_has_its_own_steps_disabled_ids_removed(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "B",
            "D",
            "submit",
            "For action index=2, you should click id=3.",  # trial 2: replay B, enforce C with D (4) disabled at step 2
            "C",
            "click id=1\nclick id=5",
            "A",
            "submit",  # then a wrong tick: failed again
            "For action index=3, you should click id=5.",
        ],
    )
    out = await run(spec, "boxes/0", max_trials=3)
    assert [t["status"] for t in out["trials"]] == ["failed", "failed", "correct"]
    reflection = prompts_seen(spec)[9]
    screens = dict(re.findall(r"The index=(\d) screen:\n<screen>\n(.*?)\n</screen>", reflection, re.S))
    first, after_b, after_c, after_a, _ = await screens_after(
        "boxes/0", "click id=2", "click id=3", "click id=1", "click id=5"
    )
    assert screens == {"1": first, "2": hidden(after_b, 4), "3": after_c, "4": after_a}
    assert '<checkbox value="false">D</checkbox>' in screens["2"] and "id=4" in screens["3"]


async def test_first_screen_only_is_an_option(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "ticked B",
            "ticked D",
            "submitted",
            "For action index=2, you should click id=3.",
            "ticked C",
            "click id=5",
        ],
    )
    await run(spec, "boxes/0", reflection_screens="first")
    first = (await screens_after("boxes/0"))[0]
    reflection = prompts_seen(spec)[4]
    assert (
        f"Your action trajectory is as follows:\n<screen>\n{first}\n</screen>\nYour index=1 action: click id=2\n"
        "Your index=2 action: click id=4\nYour index=3 action: click id=5\n\nYou conducted"
    ) in reflection
    assert reflection.count("<screen>") == 1 and "The index=" not in reflection


def test_options_are_checked():
    assert SRContext().reflection_screens == "every"
    assert (SRContext().structured_memory, SRContext().action_constraint) == (True, True)
    with pytest.raises(ContextError, match="reflection_screens='all' is not allowed: expected one of every, first"):
        SRContext(reflection_screens="all")
    with pytest.raises(ContextError, match="structured_memory='false' is not allowed: expected true or false"):
        SRContext(structured_memory="false")


# --- cycles within a stage ---------------------------------------------------------------------


async def test_a_screen_from_an_earlier_stage_is_not_a_cycle(tmp_path):
    # three stages: open tab 2; back to tab 1 (the first stage's screen again); submit
    spec = scripted(tmp_path, ["click id=8", "opened tab 2", "click id=7", "opened tab 1", "click id=5"])
    out = await run(spec, "button/0", max_trials=1)
    assert out["success"] and out["trials"][0]["actions"] == ["click id=8", "click id=7", "click id=5"]
    assert out["trials"][0]["planning_calls"] == 3


async def test_replayed_steps_keep_their_stages(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=8",
            "tab 2",
            "click id=7",
            "tab 1",
            "click id=1",
            "cancelled",
            "For action index=3, you should click id=5.",
        ],
    )
    out = await run(spec, "button/0")
    assert [t["status"] for t in out["trials"]] == ["failed", "correct"]
    assert out["trials"][1]["sources"] == ["replay", "replay", "enforce"]
    assert [s["stage"] for s in out["steps"]] == [0, 1, 2]


# --- Figure 7: without structured memory (Sec. 7.1) ----------------------------------------------


async def test_without_structured_memory_nothing_is_enforced_or_disabled_and_lessons_stick(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "B",
            "D",
            "submit",  # trial 1: D instead of C
            "For action index=2, you should click id=3.",
            "click id=4",
            "D again",
            "click id=5",
            "submit",  # trial 2: the planner decides at A, and repeats D
            "For action index=2, you should click id=3.",
            "click id=3\nclick id=5",
            "C",  # trial 3
        ],
    )
    out = await run(spec, "boxes/0", structured_memory=False)
    assert [t["status"] for t in out["trials"]] == ["failed", "failed", "correct"]
    assert out["trials"][1]["sources"] == ["replay", "plan", "plan"]  # B at A is not enforced
    assert out["trials"][1]["actions"] == ["click id=2", "click id=4", "click id=5"]  # the failed D is allowed
    shown = prompts_seen(spec)
    lesson = "Here are some lessons you learnt in your previous trials:\nFor action index=2, you should click id=3.\n\n"
    assert "<checkbox id=4 " in screen_in(shown[5]) and lesson + "Now, you need to follow the lessons" in shown[5]
    assert lesson + "Now, you need to plan actions that are executable on and only on this screen" in shown[7]
    assert (
        "For action index=2, you should click id=3.\n\n\nHowever, your actions did not complete the goal." in shown[9]
    ) and "There are some failed attempts you learnt in your previous trials:\n" in shown[9]
    assert "id=4" in re.findall(r"The index=2 screen:\n<screen>\n(.*?)\n</screen>", shown[9], re.S)[0]
    assert lesson.replace("click id=3.\n", "click id=3.\nFor action index=2, you should click id=3.\n") in shown[10]


async def test_with_structured_memory_the_same_reflection_is_enforced(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "B",
            "D",
            "submit",
            "For action index=2, you should click id=3.",
            "C",
            "click id=5",
        ],
    )
    out = await run(spec, "boxes/0")
    assert out["trials"][1]["sources"] == ["replay", "enforce", "plan"]
    assert "lessons" not in prompts_seen(spec)[6] and "There are some failed" not in prompts_seen(spec)[4]


# --- Figure 7: without action constraint (Sec. 7.2) ----------------------------------------------


@pytest.mark.parametrize("constraint, third", [(True, "exception"), (False, "failed")])
async def test_without_action_constraint_failed_ids_stay_on_the_screen_and_in_the_env(tmp_path, constraint, third):
    spec = scripted(
        tmp_path,
        [
            "click id=1",
            "clicked Cancel",
            "For action index=1, you should click id=3.",
            "clicked Help",
            "For action index=1, you should click id=1.",  # B failed before: the planner decides
            "click id=1",  # Cancel, a third time
        ],
    )
    # the paper's setting: the planner's screen and the env lose the failed ids, a failed B is not enforced
    out = await run(
        spec,
        "button/0",
        max_trials=3,
        action_constraint=constraint,
        hide_failed_clicks="planning",
        enforce_failed=False,
    )
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["enforce"], ["plan"]]  # B is still enforced
    assert [t["status"] for t in out["trials"]] == ["failed", "failed", third]
    shown = prompts_seen(spec)
    reflection_screen, last_plan_screen = screen_in(shown[4]), screen_in(shown[5])
    assert (">Cancel</button>" in reflection_screen) and ("id=1>Cancel" in reflection_screen) is not constraint
    assert ("id=1>Cancel" in last_plan_screen) is not constraint and ("id=3>Help" in last_plan_screen) is not constraint
    assert out["memory"]["entries"]["0"]["disabled"] == ["1", "3"]  # remembered either way
