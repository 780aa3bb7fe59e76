"""Structured Reflection on the real MiniWoB++ env in Chromium, driven by scripted models.

Each script is built from the task's real first screen (ids are found by their text), so the
tests follow the env: the seeds fix the tasks (same seed, same utterance and screen).
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.miniwob import MiniWoBEnv
from envs.sessions import SESSIONS
from graphs.structured_reflection import build_graph, result
from nodes.sr.context import SRContext
from tests.graphs.sr_support import id_of, prompts_seen, run_sr, screen_in, scripted

pytestmark = pytest.mark.browser

SCRIPTS = Path(__file__).parent / "scripts" / "sr"


@pytest.fixture(scope="module")
async def peek():
    """A separate env that reads a task's first screen (the graph runs its own env)."""
    env = MiniWoBEnv()

    async def first_screen(task_id: str) -> tuple[str, str]:
        obs = await env.reset(task_id)
        return obs.text, obs.info["goal"]

    yield first_screen
    await env.close()


async def run(spec: str, task: str, **options: Any) -> dict[str, Any]:
    return await run_sr(spec, task, "miniwob", **options)


async def test_failed_trial_reflected_then_replayed_enforced_and_solved(tmp_path, peek):
    screen, goal = await peek("click-checkboxes/2")
    assert goal == "Select fzzqo, NYYyS82 and click Submit."
    first, second, submit = id_of(screen, "fzzqo"), id_of(screen, "NYYyS82"), id_of(screen, "Submit")
    (wrong,) = set(re.findall(r'id=(\d+) type="checkbox"', screen)) - {first, second}
    spec = scripted(
        tmp_path,
        [
            f"click id={first}\nclick id={wrong}\nclick id={submit}",
            "ticked fzzqo",
            "ticked the wrong box",
            "submitted",
            f"For action index=2, you should click id={second}.",
            "ticked NYYyS82",  # the enforced action is paraphrased; the replayed one keeps its text
            f"click id={submit}",
        ],
    )
    # the paper's setting: the failed box loses its id on the screens the model sees at A
    out = await run(spec, "click-checkboxes/2", hide_failed_clicks="planning")
    assert out["success"] and [t["status"] for t in out["trials"]] == ["failed", "correct"]
    trial2 = out["trials"][1]
    assert trial2["sources"] == ["replay", "enforce", "plan"]
    assert trial2["actions"] == [f"click id={first}", f"click id={second}", f"click id={submit}"]
    assert out["memory"]["entries"]["1"]["disabled"] == [wrong]
    shown = prompts_seen(spec)
    # Appendix E: every screen, each before its action (the 2nd shows the 1st box ticked)
    block = r"The index=(\d) screen:\n<screen>\n(.*?)\n</screen>\nYour index=\1 action: "
    screens = dict(re.findall(block, shown[4], re.S))
    assert list(screens) == ["1", "2", "3"] and screens["1"] == screen
    box = re.compile(rf"<input id={first} [^\n]*checked")
    assert not box.search(screens["1"]) and box.search(screens["2"]) and box.search(screens["3"])
    assert f"Your index=2 action: click id={wrong}\n" in shown[4]
    at_a = screen_in(shown[5])  # the screen the enforced action was taken on, as the model saw it
    assert f"id={wrong} " not in at_a and f"id={second} " in at_a
    assert len(re.findall(r'type="checkbox"', at_a)) == 3  # disabled, not removed
    last_plan = shown[6]
    assert "1st action: ticked fzzqo" in last_plan and "2nd action: ticked NYYyS82" in last_plan
    assert f"id={wrong} " in screen_in(last_plan)  # disabled at step A only
    assert result(out)["planning_calls"] == 2


async def test_second_trial_plans_at_a_with_the_lesson_and_without_the_failed_id(tmp_path, peek):
    screen, _ = await peek("click-checkboxes/2")
    first, second, submit = id_of(screen, "fzzqo"), id_of(screen, "NYYyS82"), id_of(screen, "Submit")
    (wrong,) = set(re.findall(r'id=(\d+) type="checkbox"', screen)) - {first, second}
    spec = scripted(
        tmp_path,
        [
            f"click id={first}\nclick id={wrong}\nclick id={submit}",
            "fzzqo",
            "wrong box",
            "submit",
            "For action index=2, you should tick the NYYyS82 checkbox.",  # prose: a lesson at A
            f"click id={second}\nclick id={submit}",
            "NYYyS82",
        ],
    )
    # the paper's rule disables the failed box before a prose B (the original code's only before a click)
    out = await run(spec, "click-checkboxes/2", disable_clicks="failed", hide_failed_clicks="planning")
    assert out["success"] and out["trials"][1]["sources"] == ["replay", "plan", "plan"]
    plan_at_a = prompts_seen(spec)[5]
    assert f"id={wrong} " not in screen_in(plan_at_a) and "tick the NYYyS82 checkbox" in plan_at_a


async def test_without_action_constraint_the_failed_box_keeps_its_id_and_can_be_ticked_again(tmp_path, peek):
    """Figure 7's "w/o action constraint" (Sec. 7.2) on the real page: same lesson at A as above,
    but the failed checkbox keeps its id on the planner's screen and Chromium ticks it again."""
    screen, _ = await peek("click-checkboxes/2")
    first, second, submit = id_of(screen, "fzzqo"), id_of(screen, "NYYyS82"), id_of(screen, "Submit")
    (wrong,) = set(re.findall(r'id=(\d+) type="checkbox"', screen)) - {first, second}
    spec = scripted(
        tmp_path,
        [
            f"click id={first}\nclick id={wrong}\nclick id={submit}",
            "fzzqo",
            "wrong box",
            "submit",
            "For action index=2, you should tick the NYYyS82 checkbox.",
            f"click id={wrong}\nclick id={submit}",
            "wrong box again",
        ],
    )
    out = await run(spec, "click-checkboxes/2", max_trials=2, action_constraint=False)
    assert [t["status"] for t in out["trials"]] == ["failed", "failed"]  # not refused: executed
    assert out["trials"][1]["actions"] == [f"click id={first}", f"click id={wrong}", f"click id={submit}"]
    assert f"id={wrong} " in screen_in(prompts_seen(spec)[5])


async def test_earlier_correction_clears_later_memory(tmp_path, peek):
    screen, _ = await peek("enter-text/1")  # binary reward: the text must match exactly
    field, submit = re.search(r'id=(\d+) type="text"', screen).group(1), id_of(screen, "Submit")
    spec = scripted(
        tmp_path,
        [
            # retyping a filled field empties it, as the code's clear() does: back to the first screen
            f'enter "jerald" to id={field}\nenter "jeraldx" to id={field}\nclick id={submit}',
            "typed",
            "retyped",
            f"For action index=2, you should click id={field}.",  # trial 2: replay 1, enforce: no change
            "focused again",
            f'For action index=1, you should enter "Jerald" to id={field}.',  # earlier: index=2 outdated
            "typed Jerald",
            f"click id={submit}",
        ],
    )
    out = await run(spec, "enter-text/1")
    assert [t["status"] for t in out["trials"]] == ["cycle", "no change", "correct"]
    assert out["trials"][1]["sources"] == ["replay", "enforce"]
    assert list(out["memory"]["entries"]) == ["0"] and out["memory"]["replay"] == []
    assert out["trials"][2]["sources"] == ["enforce", "plan"]
    assert out["trials"][2]["actions"][0] == f'enter "Jerald" to id={field}'


async def test_typing_into_what_is_no_text_field_ends_the_trial_as_an_exception(tmp_path, peek):
    screen, _ = await peek("click-checkboxes/2")
    box = id_of(screen, "fzzqo")
    spec = scripted(tmp_path, [f'enter "fzzqo" to id={box}'])
    out = await run(spec, "click-checkboxes/2", max_trials=1)
    assert out["trials"][0]["status"] == "exception"  # Selenium's clear() refuses a checkbox
    assert "user-editable" in out["trajectory"][-1]["feedback"]


async def test_cycle_reached_on_purpose(tmp_path, peek):
    screen, _ = await peek("click-tab-2/1")
    tab1, tab2 = id_of(screen, "Tab #1"), id_of(screen, "Tab #2")
    spec = scripted(tmp_path, [f"click id={tab2}\nclick id={tab1}\nclick id={tab2}", "opened tab 2"])
    out = await run(spec, "click-tab-2/1", max_trials=1)
    assert out["trials"][0]["status"] == "cycle"
    assert out["trials"][0]["actions"] == [f"click id={tab2}", f"click id={tab1}"]


async def test_no_change_reached_on_purpose_and_reflected(peek):
    """The shipped fixture: clicking prose changes nothing; the reflection's fix is enforced."""
    screen, goal = await peek("click-button/1")
    assert goal == 'Click on the "Ok" button.'
    assert (id_of(screen, "cursus dis justo"), id_of(screen, "Ok")) == ("3", "5")  # the ids the fixture uses
    spec = f"scripted:{SCRIPTS / 'click_button_1.jsonl'}"
    out = await run(spec, "click-button/1")
    assert [t["status"] for t in out["trials"]] == ["no change", "correct"]
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["enforce"]]
    assert "did not cause anything to change on the last screen" in prompts_seen(spec)[2]


async def test_malformed_plan_line_becomes_exception_feedback(tmp_path, peek):
    screen, goal = await peek("enter-text/1")
    assert goal == 'Enter "Jerald" into the text field and press Submit.'
    field, submit = re.search(r'id=(\d+) type="text"', screen).group(1), id_of(screen, "Submit")
    spec = scripted(
        tmp_path,
        [
            f"enter Jerald into id={field}\nclick id={submit}",  # no quotes: not an action
            f'For action index=1, you should enter "Jerald" to id={field}.',
            "typed Jerald",
            f"click id={submit}",
        ],
    )
    out = await run(spec, "enter-text/1")
    assert [t["status"] for t in out["trials"]] == ["exception", "correct"]
    assert "However, your last action is invalid." in prompts_seen(spec)[1]
    assert out["trials"][1]["sources"] == ["enforce", "plan"] and out["success"]


async def test_refused_action_is_an_exception(tmp_path):
    spec = scripted(tmp_path, ["click id=999"])
    out = await run(spec, "click-button/1", max_trials=1)
    assert out["trials"][0]["status"] == "exception"
    assert "no element with id=999" in out["trajectory"][-1]["feedback"]


async def test_staged_planning_needs_fewer_planning_calls_than_iterative(tmp_path, peek):
    screen, goal = await peek("click-checkboxes/3")
    labels = re.match(r"Select (.*) and click Submit\.", goal).group(1).split(", ")
    clicks = [f"click id={id_of(screen, label)}" for label in labels] + [f"click id={id_of(screen, 'Submit')}"]
    described = [f"ticked {label}" for label in labels]
    staged = scripted(tmp_path, ["\n".join(clicks), *described])
    iterative = scripted(tmp_path, [r for pair in zip(clicks, described + [""]) for r in pair][:-1])
    out_staged = await run(staged, "click-checkboxes/3")
    out_iterative = await run(iterative, "click-checkboxes/3", planning="iterative")
    assert out_staged["success"] and out_iterative["success"]
    assert (result(out_staged)["planning_calls"], result(out_iterative)["planning_calls"]) == (1, len(clicks))
    assert len(clicks) == 5


async def test_run_interrupted_mid_trial_resumes_on_a_rebuilt_env(tmp_path, peek):
    """A crash after the replayed and enforced steps of trial 2: the env is rebuilt from the
    snapshot in state (reset + the executed clicks), and the run ends as it would have."""
    screen, _ = await peek("click-checkboxes/2")
    first, second, submit = id_of(screen, "fzzqo"), id_of(screen, "NYYyS82"), id_of(screen, "Submit")
    (wrong,) = set(re.findall(r'id=(\d+) type="checkbox"', screen)) - {first, second}
    spec = scripted(
        tmp_path,
        [
            f"click id={first}\nclick id={wrong}\nclick id={submit}",
            "fzzqo",
            "wrong",
            "submit",
            f"For action index=2, you should click id={second}.",
            "NYYyS82",
            f"click id={submit}",
        ],
    )
    graph = build_graph(checkpointer=InMemorySaver())
    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 500}
    context = SRContext(model=spec, env="miniwob")
    await graph.ainvoke({"task_id": "click-checkboxes/2"}, config, context=context, interrupt_before=["plan"])
    paused = await graph.ainvoke(None, config, context=context, interrupt_before=["plan"])
    assert paused["trial"] == 2 and [s["source"] for s in paused["steps"]] == ["replay", "enforce"]
    await SESSIONS.release(thread)  # the process died: no live env
    out = await graph.ainvoke(None, config, context=context)
    assert out["success"] and out["trials"][1]["actions"][-1] == f"click id={submit}"
