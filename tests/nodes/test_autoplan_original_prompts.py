"""AutoPlan's reflection and plan-update prompts are the original code's, byte for byte.

The reference strings below are copied from owaski/AutoPlan (tasks/alfworld.py and
tasks/hotpotqa.py, ``run``), with the code's own ``format`` layout, so a changed prompt file
shows here as a difference in one character. Table 2's words are the option
``prompt_wording="paper"``."""

# the reference is the original's code as written: its str.format calls, long lines, trailing spaces
# ruff: noqa: UP032, E501, W291

from __future__ import annotations

import prompts
from envs.base import env_class
from nodes.autoplan import prompting
from nodes.autoplan.plan import update_prompt

# tasks/alfworld.py: ALFWorld.task_description, GOAL_DESCS['pick_heat_then_place'], run()'s prompts
ALFWORLD_DESCRIPTION = r"""You need to interact with a simulated household to solve a job. The simulated house has many objects and receptacles. Valid Actions on the objects and receptacles are as follows:
(1) go to recep j
(2) take object i from recep j
(3) put object i in/on recep j
(4) open recep j
(5) close recep j
(6) use recep j
(7) clean object i with recep j
(8) heat object i with recep j
(9) cool object i with recep j
You job is to {} 
""".format("Heat some object and put it in/on some receptacle.")
ALFWORLD_FLAW = (
    "Identify all flawed parts of the plan/action. Remember in this game things are not like real world. "
    "The system message is always correct and the game plan/action may have flaws."
)
ALFWORLD_UPDATE = (
    "Based on the above {} experiences of the game, rewrite the current game plan. Pay more attention to summary "
    "of successful jobs, and flawed actions and suggested revision of all jobs. The plan should not be specific to "
    "one job objective but generalizable to all job objectives. The actions in the plan should also be in the form "
    "as in game description. \n\nNew Game Plan:"
)
# tasks/hotpotqa.py: HotpotQA.task_desription and run()'s prompts
HOTPOTQA_DESCRIPTION = """Solve a question answering task through actions which can be of three types: 
(1) search[entity]: search the entity on Wikipedia. If there is an exact match of the entity, open its Wikipedia page and return the first paragraph. If not, it will return some related entities.
(2) lookup[keyword]: return the next sentence containing the keyword in the current Wikipedia page opened by search[].
(3) finish[answer]: return the answer and finish the task."""
HOTPOTQA_FLAW = "Identify all flawed parts of the plan (not flawed action). Only the flawed part."
HOTPOTQA_UPDATE = (
    "Based on the above {} experiences of the task, rewrite the current task plan. The plan should not be specific "
    "to one job but generalizable to all jobs. \nNew Task Plan:"
)

PLAN = "1. Find the egg.\n2. Heat it."
JOBS = [  # objective, success, summary, flaw, revision
    ("heat some egg and put it in countertop.", True, "S0", "F0", "R0"),
    ("heat some apple and put it in garbagecan.", False, "S1", "F1", "R1"),
]


def training_state(task_type: str) -> dict:
    """An iteration's state as the update node reads it: the plan X_0, two experiences, their reflections."""
    experiences = [
        {"iteration": 0, "index": i, "objective": o, "success": ok, "plan": PLAN, "task_type": task_type}
        for i, (o, ok, *_) in enumerate(JOBS)
    ]
    reflections = [
        {"iteration": 0, "index": i, "summary": s, "flaw": f, "revision": r} for i, (_, _, s, f, r) in enumerate(JOBS)
    ]
    return {"plans": [PLAN], "experiences": experiences, "reflections": reflections}


def original_alfworld_update() -> str:
    """run()'s final_msg for the two jobs, built as the original builds it."""
    final_msg = "Game Description:\n" + ALFWORLD_DESCRIPTION + "\n\n"
    final_msg += "Current Game Plan:\n{}\n\n".format(PLAN)
    final_msg += "=" * 10 + "Game Experiences Begin" + "=" * 10 + "\n\n"
    for env_idx, (objective, success, summary, flaw, revision) in enumerate(JOBS):
        final_msg += (
            "Job {}:\n{}\nResult of Job {}:\n{}\nSummary of Job {}:\n{}\nFlawed Actions of Job {}:\n{}\n".format(
                env_idx,
                "You job is to " + objective.rstrip("."),
                env_idx,
                "Succeeded" if success else "Failed",
                env_idx,
                summary,
                env_idx,
                flaw,
            )
        )
        final_msg += "Suggested Revision of Plan from Job {}:\n{}\n".format(env_idx, revision)
    final_msg += "=" * 10 + "Game Experiences End" + "=" * 10 + "\n\n"
    return final_msg + ALFWORLD_UPDATE.format(len(JOBS))


def original_hotpotqa_update() -> str:
    final_msg = "Task Description:\n" + HOTPOTQA_DESCRIPTION + "\n\n"
    final_msg += "Current Task Plan:\n{}\n\n".format(PLAN)
    final_msg += "=" * 10 + "Task Experiences Begin" + "=" * 10 + "\n\n"
    for q_idx, (question, _, summary, flaw, revision) in enumerate(JOBS):
        final_msg += "Job {}: Answering the following question. {}\nSummary of Job {}:\n{}\n".format(
            q_idx, question, q_idx, summary
        )
        final_msg += "Flaws of Plan in Job {}:\n{}\n".format(q_idx, flaw)
        final_msg += "Suggested Revision of Plan from Job {}:\n{}\n".format(q_idx, revision)
    final_msg += "=" * 10 + "Task Experiences End" + "=" * 10 + "\n\n"
    return final_msg + HOTPOTQA_UPDATE.format(len(JOBS))


def test_the_alfworld_update_prompt_is_the_originals_byte_for_byte():
    interface = env_class("alfworld").interface
    state = training_state("pick_heat_then_place_in_recep")
    assert update_prompt("alfworld", interface, state, "original") == original_alfworld_update()


def test_the_hotpotqa_update_prompt_is_the_originals_byte_for_byte():
    interface = env_class("hotpotqa").interface
    assert update_prompt("hotpotqa", interface, training_state(""), "original") == original_hotpotqa_update()
    # the task description opens every HotpotQA chat as the code writes it too
    assert prompting.description("hotpotqa", interface) == HOTPOTQA_DESCRIPTION


def test_the_flaw_prompts_are_the_originals_and_table_2_is_the_option():
    assert prompting.worded("alfworld", "flaw", "original") == ALFWORLD_FLAW
    assert prompting.worded("hotpotqa", "flaw", "original") == HOTPOTQA_FLAW
    table_2 = prompting.worded("alfworld", "flaw", "paper")
    assert "Remember in this game, things are not like real world. The system message in observation" in table_2
    assert prompting.worded("hotpotqa", "flaw", "paper") == HOTPOTQA_FLAW  # the paper words HotpotQA's no other way


def test_table_2s_update_request_is_the_option():
    interface = env_class("alfworld").interface
    paper = update_prompt("alfworld", interface, training_state("pick_heat_then_place_in_recep"), "paper")
    assert "Pay attention to summary of successful jobs" in paper
    assert "The plan should be generalizable to all job objectives." in paper
    assert paper.endswith("in the form as in game description.\n\nNew Game Plan:")
    assert (
        paper.split("==========Game Experiences End==========")[0]
        == (original_alfworld_update().split("==========Game Experiences End==========")[0])
    )  # the layout is the code's either way
    assert prompts.load("autoplan/update_request").startswith("Based on the above {count} experiences of the task")


# tasks/alfworld.py run(): "Game Description:\n{}{}\n\nGame Starts:..." with gamma per custom prompt;
# tasks/hotpotqa.py run(): description + gamma + "\n" + "\nQuestion: ..."
EXAMPLES = "> go to shelf 1\nOn the shelf 1, you see a mug 1.\n"  # as the few-shot file ends: its newline too
ALFWORLD_GAMMAS = {
    "plan": "\nGame Plan:\n{}".format("1. go\n2. take"),
    "examples": "\n\nHere are some examples.\n" + EXAMPLES,
    "none": "",
}
HOTPOTQA_GAMMAS = {
    "plan": "\n\nTask Plan:\n{}\n".format("1. search\n2. finish"),
    "examples": "\n\nHere are some examples:\n" + EXAMPLES,
    "none": "",
}


def test_the_first_prompts_blank_lines_are_the_originals_with_a_plan_examples_or_neither():
    from nodes.autoplan.transcript import instance_prompt

    heat = "pick_heat_then_place_in_recep"
    interface = env_class("alfworld").interface
    for kind, gamma in ALFWORLD_GAMMAS.items():
        made = instance_prompt(
            "alfworld",
            interface,
            "1. go\n2. take" if kind == "plan" else "",
            "STATE",
            "heat some egg",
            heat,
            EXAMPLES if kind == "examples" else "",
        )
        original = "Game Description:\n{}{}\n\nGame Starts:\nGame Objective: {}.\n{}".format(
            ALFWORLD_DESCRIPTION, gamma, "heat some egg", "STATE"
        )
        assert made == original, kind
    interface = env_class("hotpotqa").interface
    for kind, gamma in HOTPOTQA_GAMMAS.items():
        made = instance_prompt(
            "hotpotqa",
            interface,
            "1. search\n2. finish" if kind == "plan" else "",
            'Question: "Who?"',
            "Who?",
            examples=EXAMPLES if kind == "examples" else "",
        )
        assert made == HOTPOTQA_DESCRIPTION + gamma + "\n" + '\nQuestion: "Who?"', kind
