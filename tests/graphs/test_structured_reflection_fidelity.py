"""Where the paper's code (google-research zero_shot_structured_reflection) and the paper meet or
part, on the fake page env: the budget of a stage and the status a budget ends with, hold and
release judged like every other action, which failed clicks are disabled, and how a plan and a
reflection are read.
"""

from __future__ import annotations

from typing import Any

import pytest

from nodes.runtime.llm import model_for
from nodes.sr.context import SRContext
from tests.graphs.sr_support import fake_env, prompts_seen, run_sr, screen_in, scripted  # noqa: F401 (fixture)

TEN_ENTRIES = "\n".join(f'enter "{c}" to id=9' for c in "abcdefghij")


async def run(spec: str, task: str, **options: Any) -> dict[str, Any]:
    """Plans here are written as a model writes them (list markers, "Your plan:"): they are read
    for their actions (``plan_reading="actions"``) unless a test asks for the code's reading."""
    return await run_sr(spec, task, "fakepage", **{"plan_reading": "actions", **options})


# --- the budget of a stage (the original's max_step_per_view) -------------------------------------


async def test_a_stage_stops_after_its_ninth_action_as_the_original_code(tmp_path):
    spec = scripted(tmp_path, [TEN_ENTRIES] + [f"typed {c}" for c in "abcdefgh"])
    out = await run(spec, "boxes/0", max_trials=1)
    trial = out["trials"][0]
    assert trial["status"] == "failed"  # as the original code ends a trial out of actions
    assert trial["actions"] == [f'enter "{c}" to id=9' for c in "abcdefghi"]
    assert out["usage"]["model_calls"] == 9  # the plan and eight paraphrases, no second plan


async def test_a_plan_of_exactly_the_stage_budget_also_ends_the_trial(tmp_path):
    # the original checks the budget before it looks for the plan's next line
    spec = scripted(tmp_path, ["\n".join(TEN_ENTRIES.splitlines()[:3])] + ["typed"] * 2)
    out = await run(spec, "boxes/0", max_trials=1, max_stage_actions=3)
    assert out["trials"][0]["status"] == "failed" and len(out["trials"][0]["actions"]) == 3


async def test_stages_have_their_own_budget(tmp_path):
    spec = scripted(
        tmp_path,
        ['enter "a" to id=9', "typed a", 'enter "b" to id=9\nenter "c" to id=9\nclick id=8', "typed b", "typed c"],
    )
    out = await run(spec, "boxes/0", max_trials=1, max_stage_actions=2)
    assert out["trials"][0]["status"] == "failed"
    assert out["trials"][0]["actions"] == [f'enter "{c}" to id=9' for c in "abc"]  # 1 + 2: the tab is not clicked
    assert out["trials"][0]["planning_calls"] == 2


@pytest.mark.parametrize("budget", [{"max_actions": 2}, {"max_stage_actions": 2}])
async def test_a_trial_out_of_actions_is_failed_as_the_original_code(tmp_path, budget):
    spec = scripted(
        tmp_path, [TEN_ENTRIES, "typed a", "typed b", "For action index=1, you should click id=5.", "submitted"]
    )
    out = await run(spec, "boxes/0", max_trials=2, **budget)
    assert out["trials"][0]["status"] == "failed" and len(out["trials"][0]["actions"]) == 2
    assert "However, your actions did not complete the goal." in prompts_seen(spec)[3]


@pytest.mark.parametrize("budget", [{"max_actions": 2}, {"max_stage_actions": 2}])
async def test_the_papers_in_progress_for_a_trial_out_of_actions_is_an_option(tmp_path, budget):
    spec = scripted(
        tmp_path, [TEN_ENTRIES, "typed a", "typed b", "For action index=1, you should click id=5.", "submitted"]
    )
    out = await run(spec, "boxes/0", max_trials=2, budget_status="in_progress", **budget)
    assert out["trials"][0]["status"] == "in progress" and len(out["trials"][0]["actions"]) == 2
    assert "you took too many steps" in prompts_seen(spec)[3]


# --- which failed click is disabled (the original code's rule; paper 5.2's as an option) ----------


@pytest.mark.parametrize(
    "rule, cancel",
    [
        ("failed", "<button>Cancel</button>"),  # Sec. 5.2: the failed click is disabled
        ("when_b_clicks", "<button id=1>Cancel</button>"),  # the original code: B clicks the same id
    ],
)
async def test_a_failed_click_suggested_again_is_not_enforced_and_the_planner_decides(tmp_path, rule, cancel):
    spec = scripted(tmp_path, ["click id=1", "cancelled", "For action index=1, you should click id=1.", "click id=5"])
    # the paper's setting: a failed B is not enforced again, a disabled id leaves the planner's screen
    out = await run(spec, "button/0", disable_clicks=rule, hide_failed_clicks="planning", enforce_failed=False)
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["plan"]] and out["success"]
    assert cancel in screen_in(prompts_seen(spec)[3])
    assert "- For action index=1, you should click id=1." in prompts_seen(spec)[3]


async def test_the_original_codes_rule_is_the_default(tmp_path):
    # B clicks another element: the failed click's id is hidden at A; B is a key press: it stays
    spec = scripted(tmp_path, ["click id=1", "cancelled", "For action index=1, you should click id=3.", "helped"])
    out = await run(spec, "button/0", max_trials=2)
    assert out["memory"]["entries"]["0"]["disabled"] == ["1"]
    spec = scripted(tmp_path, ["click id=1", "cancelled", "For action index=1, you should press ENTER."])
    out = await run(spec, "button/0", max_trials=2)
    assert out["memory"]["entries"]["0"]["disabled"] == []


@pytest.mark.parametrize(
    "rule, cancel", [("failed", "<button>Cancel</button>"), ("when_b_clicks", "<button id=1>Cancel</button>")]
)
async def test_a_failed_click_before_a_key_b_is_disabled_only_by_the_papers_rule(tmp_path, rule, cancel):
    spec = scripted(
        tmp_path,
        [
            "click id=1",
            "cancelled",
            "For action index=1, you should press ENTER.",
            "For action index=1, you should click id=5.",
        ],
    )
    out = await run(spec, "button/0", disable_clicks=rule)
    assert [t["status"] for t in out["trials"]] == ["failed", "no change", "correct"]
    assert out["trials"][1]["sources"] == ["enforce"]
    second_reflection = prompts_seen(spec)[3]
    assert cancel in second_reflection.split("The index=1 screen:")[1]


# --- where a disabled click loses its id (the original code: only in the reflection prompt) --------

PROSE_B = "For action index=1, you should click the OK button."  # no id: the planner decides at A


async def test_a_disabled_click_loses_its_id_only_in_the_reflection_prompt_as_the_original_code(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "click id=1",
            "cancelled",
            PROSE_B,
            "click id=1",
            "cancelled again",
            "For action index=1, you should click id=5.",
        ],
    )
    out = await run(spec, "button/0")
    assert out["memory"]["entries"]["0"]["disabled"] == ["1"] and out["success"]
    # the planner at A sees Cancel's id and the env takes the click: the trial fails, no exception
    assert [t["status"] for t in out["trials"]] == ["failed", "failed", "correct"]
    shown = prompts_seen(spec)
    assert "<button id=1>Cancel</button>" in screen_in(shown[3])
    assert "<button>Cancel</button>" in shown[5].split("The index=1 screen:")[1]  # the reflection's screen


async def test_the_papers_planner_screen_without_the_disabled_id_is_an_option(tmp_path):
    spec = scripted(
        tmp_path, ["click id=1", "cancelled", PROSE_B, "click id=1", "For action index=1, you should click id=5."]
    )
    out = await run(spec, "button/0", hide_failed_clicks="planning")
    assert [t["status"] for t in out["trials"]] == ["failed", "exception", "correct"]  # the env refuses id=1
    assert "<button>Cancel</button>" in screen_in(prompts_seen(spec)[3])


# --- a B that already failed at A is enforced again, as the original code enforces every B ------

FAILED_TWICE = [
    "click id=1",
    "clicked Cancel",
    "For action index=1, you should click id=3.",
    "clicked Help",
    "For action index=1, you should click id=1.",  # B failed in trial 1
]


async def test_a_b_that_already_failed_is_enforced_again_as_the_original_code(tmp_path):
    spec = scripted(tmp_path, [*FAILED_TWICE, "clicked Cancel again"])
    out = await run(spec, "button/0", max_trials=3)
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["enforce"], ["enforce"]]
    assert out["trials"][2]["actions"] == ["click id=1"] and not out["success"]


async def test_the_papers_rule_lets_the_planner_decide_where_b_already_failed(tmp_path):
    spec = scripted(tmp_path, [*FAILED_TWICE, "click id=5"])
    out = await run(spec, "button/0", max_trials=3, enforce_failed=False)
    assert [t["sources"] for t in out["trials"]] == [["plan"], ["enforce"], ["plan"]] and out["success"]


# --- a B worded in prose is enforced as the original code executes it -----------------------------


@pytest.mark.parametrize("reading, sources", [("code", ["enforce"]), ("grammar", ["plan"])])
async def test_a_click_b_worded_in_prose_is_enforced_as_the_original_code(tmp_path, reading, sources):
    reply = "For action index=1, you should click the button with id=5."
    spec = scripted(tmp_path, ["click id=1", "cancelled", reply, "click id=5"])
    out = await run(spec, "button/0", suggestion_reading=reading)
    assert out["success"] and out["trials"][1]["sources"] == sources
    assert len(prompts_seen(spec)) == (3 if reading == "code" else 4)  # enforced: no planning call


# --- hold and release are judged like every action (Sec. 3.4; the original code) ----------------


async def test_hold_that_changes_nothing_is_no_change_and_is_paraphrased(tmp_path):
    spec = scripted(
        tmp_path,
        [
            "hold CTRL\nclick id=2\nclick id=3\nrelease CTRL\nclick id=5",
            "held the CTRL key",
            "For action index=1, you should click id=2.",
            "ticked B",
            "click id=3\nclick id=5",
            "ticked C",
        ],
    )
    out = await run(spec, "boxes/0")
    first = out["trials"][0]
    assert first["status"] == "no change" and first["actions"] == ["hold Control"]
    assert "did not cause anything to change" in prompts_seen(spec)[2]
    assert prompts_seen(spec)[1].startswith("You are capable of describing actions")  # hold is paraphrased
    assert out["success"] and out["trials"][1]["sources"] == ["enforce", "plan", "plan"]


async def test_release_after_clicks_that_changes_nothing_is_no_change(tmp_path):
    spec = scripted(tmp_path, ["click id=2\nclick id=3\nrelease CTRL\nclick id=5", "ticked B", "ticked C"])
    out = await run(spec, "boxes/0", max_trials=1)
    assert out["trials"][0]["status"] == "no change"
    assert out["trials"][0]["actions"] == ["click id=2", "click id=3", "release Control"]


# --- reading a plan and a reflection ---------------------------------------------------------------


async def test_a_blank_line_ends_the_plan_and_the_next_stage_plans_again(tmp_path):
    spec = scripted(
        tmp_path, ["click id=2\n\nclick id=4\nclick id=5", "ticked B", "click id=3\nclick id=5", "ticked C"]
    )
    out = await run(spec, "boxes/0", max_trials=1)
    assert out["success"] and out["trials"][0]["actions"] == ["click id=2", "click id=3", "click id=5"]
    assert out["trials"][0]["planning_calls"] == 2


async def test_the_whole_reflection_is_the_lesson_and_a_reply_without_b_still_counts(tmp_path):
    reply = "For action index=2 you should tick C instead of D.\nD is not in the goal."
    spec = scripted(
        tmp_path,
        [
            "click id=2\nclick id=4\nclick id=5",
            "ticked B",
            "ticked D",
            "submitted",
            reply,
            "click id=3\nclick id=5",
            "ticked C",
        ],
    )
    out = await run(spec, "boxes/0")
    assert out["success"] and out["trials"][1]["sources"] == ["replay", "plan", "plan"]
    assert out["memory"]["entries"]["1"] == {
        "reflection": reply,
        "action": "",
        "failed": ["click id=4"],
        "disabled": [],  # the original code disables a failed click only when B clicks another element
    }
    at_a = prompts_seen(spec)[5]
    assert f"- {reply}\n" in at_a and "Now, you need to follow the lessons" in at_a and "id=4" in screen_in(at_a)


# --- plan lines read as the original code reads them (plan_reading="code", the default) ----------


async def run_as_code(spec: str, task: str, **options: Any) -> dict[str, Any]:
    """A run with the method's default reading of plans."""
    return await run_sr(spec, task, "fakepage", **options)


async def test_a_click_line_clicks_the_first_number_in_it_as_the_original_code(tmp_path):
    plan = "tap the B box, id=2\nclick the C checkbox (id=3)\nmove to the button with id=5 and click it"
    spec = scripted(tmp_path, [plan, "ticked B", "ticked C"])
    out = await run_as_code(spec, "boxes/0", max_trials=1)
    assert out["success"] and out["trials"][0]["actions"] == ["click id=2", "click id=3", "click id=5"]
    # the model is shown the line as the plan wrote it, as the code shows its executed action
    assert "And the actions taken are:\ntap the B box, id=2\n" in prompts_seen(spec)[1]


async def test_a_click_without_a_number_asks_the_code_s_grounding_prompt(tmp_path):
    spec = scripted(tmp_path, ["click the Submit button", "5"])
    out = await run_as_code(spec, "button/0", max_trials=1)
    assert out["success"] and out["trials"][0]["actions"] == ["click id=5"]
    plan_prompt, grounding = prompts_seen(spec)
    assert grounding == (
        "You are given a screen which is represented in HTML pseudo code.\n"
        "Now, predict the id of the UI element to click on the current screen:\n"
        f"<screen >\n{screen_in(plan_prompt).strip(chr(10))}\n</screen>\n\n"
        "Action: click the Submit button\nPrediction: id="
    )


async def test_a_grounding_reply_without_an_id_ends_the_trial_as_an_exception(tmp_path):
    spec = scripted(tmp_path, ["click the Submit button", "the one at the bottom"])
    out = await run_as_code(spec, "button/0", max_trials=1)
    assert out["trials"][0]["status"] == "exception" and not out["success"]


@pytest.mark.parametrize("line", ["Your plan:", "1. click id=5", "Submit the form"])
async def test_a_line_of_no_action_type_does_nothing_and_ends_the_trial_with_no_change(tmp_path, line):
    spec = scripted(tmp_path, [f"{line}\nclick id=5", "nothing happened", "For action index=1, you should click id=5."])
    out = await run_as_code(spec, "button/0")
    first = out["trials"][0]
    assert (first["status"], first["actions"]) == ("no change", [line])  # click id=5 was never reached
    assert out["success"] and out["trials"][1]["actions"] == ["click id=5"]
    plan, paraphrase, reflection = prompts_seen(spec)
    assert f"And the actions taken are:\n{line}\n" in paraphrase
    assert f"Your index=1 action: {line}\n" in reflection
    assert "did not cause anything to change on the last screen" in reflection


async def test_the_papers_reading_of_plans_is_an_option(tmp_path):
    spec = scripted(tmp_path, ["Your plan:\n1. click id=5"])
    out = await run_as_code(spec, "button/0", max_trials=1, plan_reading="actions")
    assert out["success"] and out["trials"][0]["actions"] == ["click id=5"]


# --- decoding: the original code's token limit and its pick of the reflection ----------------------


def limits_asked(spec: str) -> list[int | None]:
    return [call["max_tokens"] for call in model_for(spec, SRContext().temperature, 512).calls]


async def test_every_call_on_miniwob_is_limited_to_the_original_codes_128_tokens(tmp_path):
    replies = ["click id=1", "cancelled", "For action index=1, you should click id=5."]
    spec = scripted(tmp_path, replies)
    await run(spec, "button/0")
    assert limits_asked(spec) == [128] * 3  # plan, paraphrase, reflection (the enforced B needs no call)
    spec = scripted(tmp_path, replies)
    await run(spec, "button/0", paper_max_tokens=None)
    assert limits_asked(spec) == [None] * 3  # the shared max_tokens


async def test_the_longest_of_the_reflection_samples_is_kept_as_the_original_code(tmp_path):
    short, long = "For action index=1, you should click id=3.", "For action index=1, you should click id=5 (Submit)."
    spec = scripted(tmp_path, ["click id=1", "cancelled", long, short])
    out = await run(spec, "button/0", reflection_samples=2)
    assert out["trials"][0]["reflection"] == long and out["success"]
    assert len(model_for(spec, SRContext().temperature, 512).calls) == 4
