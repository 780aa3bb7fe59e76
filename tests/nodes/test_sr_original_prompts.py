"""MiniWoB's prompts are the original code's strings, byte for byte (google-research
zero_shot_structured_reflection/prompt_util.py, which produced the published numbers); the
paper's appendix wording is an option (``prompt_wording="paper"``), and the code's task-specific
prompts are on unless ``task_prompts=False``.

The reference texts below are copied from the original's string literals (the prompts are part
of the method's specification), with the values the tests fill in.
"""

from __future__ import annotations

from typing import Any

from envs.miniwob.interface import INTERFACE as MINIWOB
from nodes.sr.context import SRContext
from nodes.sr.describe import paraphrase_prompt
from nodes.sr.plan import planning_prompt
from nodes.sr.reflect import reflection_prompt
from nodes.sr.state import MemoryEntry, SRState, StepRecord, empty_memory

HTML = '<button id=5 pos="left">Ok</button>\n<div id=6 pos="center">text</div>'
GOAL = "Click on the Ok button."

# prompt_for_staged_plan's head, its task and screen filled in
PLAN_HEAD = (
    "You are operating a computer for a task: {task}. You can"
    " generate a series of atomic actions to fulfill a top-level goal."
    " There are three types of atomic actions you can perform. Firstly,"
    ' you can click an object by referring to its id, such as "click'
    ' id=...". Secondly, you can enter text to an input field, such as'
    ' "enter "..." to id=...". Specifically, you should always wrap the'
    " text you want to type in with double quotes. Lastly, you can operate"
    ' special keys on the keyboard, such as "hold CTRL" and "release CTRL"'
    " before and after multiple selections. If dropdownlist is available,"
    ' you can "press ARROWUP x N" or "press ARROWDOWN x N" to press the'
    ' arrow key N times to iterate over list items, and then "press ENTER"'
    " to select the current item.\n\nThe screen you see is represented by"
    f" the following HTML code:\n<screen>\n{HTML}\n</screen>\n\nThe"
    f" top-level goal you want to achieve is: {GOAL}\nYour past actions"
    " are:\n"
)
STAGED = (
    "Now, you need to plan actions that are executable on and only on"
    " this screen. For actions that are not executable on this screen,"
    " you should leave them to future planning. Your plan should consist"
    " of a list of atomic actions on the screen. Please separate them by"
    " newline.\nYour plan:"
)
FOLLOW = "Now, you need to follow the lessons to plan your next action. Your action:"
LESSONS = "Here are some lessons you learnt in your previous trials:\n"
AUTOCOMPLETE_LESSON = "You should always finish your task by clicking the submit button, if it is presented."


def state(task: str = "click-button", steps: list[StepRecord] | None = None, **extra: Any) -> SRState:
    values: dict[str, Any] = {
        "task_name": task,
        "goal": GOAL,
        "observation": HTML,
        "steps": steps or [],
        "memory": empty_memory(),
        "status": "failed",
    }
    return SRState(**{**values, **extra})  # type: ignore[typeddict-item]


def with_lesson(step: int, reflection: str) -> dict[str, Any]:
    memory = empty_memory()
    memory["entries"][str(step)] = MemoryEntry(reflection=reflection, action="", failed=[], disabled=[])
    memory["reflections"] = [reflection]
    return {"memory": memory}


CLICKED = [StepRecord(action="click id=6", description="I clicked the text.", screen=HTML)]


def test_the_staged_planning_prompt_is_the_original_codes():
    prompt = planning_prompt(state(), SRContext(), MINIWOB)
    assert prompt == PLAN_HEAD.format(task="click-button") + "You have not taken any actions yet.\n\n" + STAGED


def test_the_lesson_prompt_joins_your_action_with_a_space_as_the_original_code():
    reflection = "For action index=2, you should click id=5."
    prompt = planning_prompt(state(steps=CLICKED, **with_lesson(1, reflection)), SRContext(), MINIWOB)
    history = "1st action: I clicked the text.\n"
    assert prompt == PLAN_HEAD.format(task="click-button") + history + "\n" + LESSONS + f"- {reflection}\n\n" + FOLLOW


def test_use_autocomplete_always_shows_the_original_codes_sticky_lesson():
    prompt = planning_prompt(state("use-autocomplete"), SRContext(), MINIWOB)
    head = PLAN_HEAD.format(task="use-autocomplete") + "You have not taken any actions yet.\n\n"
    assert prompt == head + LESSONS + f"- {AUTOCOMPLETE_LESSON}\n\n" + STAGED
    # ahead of the memory's entry when there is one
    reflection = "For action index=1, you should click id=5."
    prompt = planning_prompt(state("use-autocomplete", **with_lesson(0, reflection)), SRContext(), MINIWOB)
    assert prompt == head + LESSONS + f"- {AUTOCOMPLETE_LESSON}\n- {reflection}\n\n" + FOLLOW
    # without structured memory, as the code joins raw reflections: no list markers
    prompt = planning_prompt(
        state("use-autocomplete", **with_lesson(0, reflection)), SRContext(structured_memory=False), MINIWOB
    )
    assert prompt == head + LESSONS + f"{AUTOCOMPLETE_LESSON}\n{reflection}\n\n" + FOLLOW


def test_click_scroll_list_gets_the_original_codes_own_planning_prompt():
    prompt = planning_prompt(state("click-scroll-list"), SRContext(), MINIWOB)
    assert prompt == (
        "You are operating a computer. You can generate a series of atomic"
        " actions to fulfill a top-level goal. There are three type of atomic"
        " actions you can perform. Firstly, you can click an object by"
        ' referring to its id, such as "click id=...". Secondly, you can enter'
        ' text to an input field, such as "enter ... to id=...". However,'
        " every time you want to enter something, you should always click the"
        " desired input field before typing. Lastly, you can press and hold"
        ' special keys on the keyboard, such as "hold CTRL" and "release CTRL"'
        " before and after multiple selections.\n\nThe screen you see is"
        " represented by the following HTML"
        f" code:\n<screen>\n{HTML}\n</screen>\n\nThe top-level goal you want to"
        f" achieve is: {GOAL}\nNow, you need to generate a detailed plan for"
        " the goal. Your plan should consist of a list of atomic"
        " actions.\nYour plan:"
    )


def test_the_paraphrase_prompt_is_the_original_codes():
    prompt = paraphrase_prompt(state(steps=CLICKED), SRContext(), MINIWOB)
    assert prompt == (
        "You are capable of describing actions taken on a computer. The computer"
        " screen is represented by the following HTML pseudo"
        f" code:\n<screen>\n{HTML}\n</screen>\n\nAnd the actions taken"
        " are:\nclick id=6\n\nNow, in plain language, please summarize what"
        " has been done. You should describe the specific purpose for the"
        " action, instead of simply referring to the element id or position of"
        " the element.\nSummary:"
    )


def test_the_social_media_tasks_get_the_original_codes_paraphrase_prompt():
    for task in ("social-media", "social-media-all", "social-media-some"):
        prompt = paraphrase_prompt(state(task, steps=CLICKED), SRContext(), MINIWOB)
        assert prompt == (
            "You are capable of describing actions taken on a computer screen. The"
            " computer screen is represented by the following HTML pseudo"
            f" code:\n<screen>\n{HTML}\n</screen>\n\nAnd the action(s) already taken"
            " are:\nclick id=6\n\nYou should describe the specific purpose for the"
            " action and also referring to the element id. For instance, if you"
            " clicked the like/reply button of a tweet, you should mention whose"
            " tweet as well as the clicked element id. The output format should be"
            ' like: "I clicked ... (id=...)."\nSummary:'
        )


def test_the_reflection_prompt_is_the_original_codes():
    prompt = reflection_prompt(state(steps=CLICKED), SRContext(), MINIWOB)
    assert prompt == (
        "You are operating a computer for a task: click-button. You went over a"
        " series of screens and executed actions to fulfill a top-level"
        f" goal.\nYour action trajectory is as follows:\nThe index=1 screen:\n<screen>\n{HTML}\n</screen>\n"
        "Your index=1 action: click id=6\n\n\nYou"
        " conducted the above actions for the top-level goal:"
        f" {GOAL}\n\nHowever, your actions did not complete the goal. Now, you need to"
        " identify the earliest critical step where you made a mistake, and"
        " suggest a correction. Your"
        ' suggestion should be in this format: "For action index=A, you should'
        ' B.", where A is the action index, and B is the suggested'
        " action you should have taken.\nYour suggestion:"
    )


def test_without_structured_memory_the_reflection_lists_the_sticky_lesson_first_as_the_code():
    reflection = "For action index=1, you should click id=5."
    prompt = reflection_prompt(
        state("use-autocomplete", steps=CLICKED, **with_lesson(0, reflection)),
        SRContext(structured_memory=False),
        MINIWOB,
    )
    assert (
        "There are some failed attempts you learnt in your previous"
        f" trials:\n{AUTOCOMPLETE_LESSON}\n{reflection}\n\n\nHowever, your actions did not complete" in prompt
    )


def test_the_papers_wording_and_one_prompt_set_are_options():
    paper = SRContext(prompt_wording="paper", task_prompts=False)
    plan = planning_prompt(state("use-autocomplete"), paper, MINIWOB)
    assert "If dropdown list is available" in plan and "dropdownlist" not in plan and LESSONS not in plan
    assert planning_prompt(state("click-scroll-list"), paper, MINIWOB).endswith(STAGED)
    assert "\n\nAnd the action taken is: click id=6\n\n" in paraphrase_prompt(state(steps=CLICKED), paper, MINIWOB)
    social = paraphrase_prompt(state("social-media", steps=CLICKED), paper, MINIWOB)
    assert "And the action(s) already taken" not in social
