"""AutoPlan's per-environment variants: where the paper (and its code) wrote ALFWorld's and
HotpotQA's prompts and chat their own way, and the generic variant every other env gets.

The paper gives AutoPlan's prompts for its two environments only (Table 2, Figures 6-8).
Those stay as written, selected from ``VARIANTS`` by the run's env; any other env runs the
generic variant, whose prompts (``prompts/autoplan/<name>.md``) are filled from the env's
``envs.base.Interface`` (its introduction, its action grammar in words, its answer action)
and the task's ``info["goal"]``. Nodes read a variant's fields, never an env's name.

``quirks`` are the places where Context.transcript="original" writes the chat as the
original code does for that env (nodes.autoplan.transcript lists them); the generic variant
has none, so both transcripts are the paper's there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Quirk = Literal[
    "state_summary",  # o_0 is the original's state summary (ALFWorld)
    "free_form_action",  # the chat keeps the free-form action a'_t, not a_t (ALFWorld)
    "think_at_cap",  # one more thought about the observation at the step cap (ALFWorld)
    "short_look",  # a ``look`` observation is cut to its first sentence (ALFWorld)
    "no_action_sentence",  # a command outside ``actions`` reads the no_action prompt (HotpotQA)
]

# The sentences that tell the reflection how a job ended (paper eqs. 6-8: H ⊕ R ⊕ prompt),
# keyed "success", "max_actions", "failure".
Outcomes = Mapping[str, str]


@dataclass(frozen=True)
class Spacing:
    """The newlines around the custom prompt X_i in the first prompt, as the original code
    concatenates them (``instance`` puts one newline on each side of the section): before and
    after the plan section, before and after the examples section, and the section without
    either. The generic variant's are one blank line around a section."""

    plan: tuple[str, str] = ("\n", "\n")
    examples: tuple[str, str] = ("\n", "\n")
    without: str = ""


@dataclass(frozen=True)
class Variant:
    """How AutoPlan prompts and writes the chat for one env.

    ``prompts``: the folder of the variant's own prompts under ``prompts/autoplan/`` (a prompt
    it lacks is the generic one), or "" for the generic variant. ``jobs``: the description's
    job line per task type (ALFWorld's GOAL_DESCS in the original). ``trims_objective``: the
    objective is shown without its full stop (ALFWorld's "Game Objective: ...."). ``goal_line``:
    the line of the first observation that states the goal, left out of o_0 because the
    instance states the objective (ALFWorld's "Your task is to: ..."). ``flaw_needs_plan``:
    SIR's Flaw prompt asks about the plan only, so it is asked only when there is one
    (HotpotQA). ``shows_reference``: training reflection sees the task's reference record
    through the ``gold`` prompt (HotpotQA's gold answer and supporting pages). ``actions``:
    the commands the original recognises, for the ``no_action_sentence`` quirk. ``spacing``:
    the blank lines around the plan or the examples in the first prompt (``Spacing``).
    ``reads_as_written``: the original reads the formalizer's reply as written, lower-cased, with
    only "put X in Y" (or "on") made the game's "put X in/on Y" (ALFWorld; Context.command_reading).
    ``restarts_after``: the commands after which the original starts the episode again with a
    fresh chat, when the game accepted them (ALFWorld's look, inventory and examine: its state
    tracker fails on them and its retry loop restarts; Context.after_look).
    """

    prompts: str
    outcomes: Outcomes
    jobs: Mapping[str, str] = field(default_factory=dict)
    trims_objective: bool = False
    goal_line: re.Pattern[str] | None = None
    flaw_needs_plan: bool = False
    shows_reference: bool = False
    actions: re.Pattern[str] | None = None
    quirks: frozenset[Quirk] = frozenset()
    spacing: Spacing = Spacing()
    reads_as_written: bool = False
    restarts_after: tuple[str, ...] = ()


ALFWORLD = Variant(
    prompts="alfworld",
    # tasks/alfworld.py: "Game Description:\n{}{}\n\nGame Starts:..." over a description ending in a
    # newline, with the plan "\nGame Plan:\n{}", the examples "\n\nHere are some examples.\n" + their text
    spacing=Spacing(plan=("\n", "\n"), examples=("\n\n", "\n"), without="\n"),
    outcomes={
        "success": "Job succeeded.",
        "max_actions": "Job failed. Maximum number of steps reached.",
        "failure": "Job failed.",
    },
    # keyed by ALFWorld's type names (envs.alfworld.games.TASK_TYPES)
    jobs={
        "pick_and_place_simple": "Put some object in/on some receptacle.",
        "look_at_obj_in_light": "Examine some object with the lamp.",
        "pick_clean_then_place_in_recep": "Clean some object and put it in/on some receptacle.",
        "pick_heat_then_place_in_recep": "Heat some object and put it in/on some receptacle.",
        "pick_cool_then_place_in_recep": "Cool some object and put it in/on some receptacle.",
        "pick_two_obj_and_place": "Find two objects and put them in/on some receptacles.",
    },
    trims_objective=True,
    goal_line=re.compile(r"^Your task is to: .*(?:\n|$)", re.MULTILINE),
    quirks=frozenset({"state_summary", "free_form_action", "think_at_cap", "short_look"}),
    reads_as_written=True,
    restarts_after=("look", "inventory", "examine"),
)

HOTPOTQA = Variant(
    prompts="hotpotqa",
    # tasks/hotpotqa.py: description + ("\n\nTask Plan:\n{}\n" or "\n\nHere are some examples:\n" + their
    # text) + "\n" + "\nQuestion: ..."
    spacing=Spacing(plan=("\n", "\n\n"), examples=("\n", "\n"), without=""),
    outcomes={  # the gold answer follows in training (``shows_reference``): the updater judges the answer
        "success": "Task finished.",
        "max_actions": "Max number of iteration reached. No answer is found.",
        "failure": "Task finished.",
    },
    flaw_needs_plan=True,
    shows_reference=True,
    actions=re.compile(r"(?:search|lookup|finish)\[.*\]", re.DOTALL),
    quirks=frozenset({"no_action_sentence"}),
)

GENERIC = Variant(
    prompts="",
    outcomes={
        "success": "Task succeeded.",
        "max_actions": "Task failed. Maximum number of steps reached.",
        "failure": "Task failed.",
    },
)

VARIANTS: dict[str, Variant] = {"alfworld": ALFWORLD, "hotpotqa": HOTPOTQA}


def variant(env: str) -> Variant:
    """The env's own variant where the paper wrote one, else the generic one."""
    return VARIANTS.get(env, GENERIC)
