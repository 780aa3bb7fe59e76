"""Structured Reflection's settings (paper 002): the graph's ``context_schema``.

Defaults are the paper's setting where the code has none (5 trials, staged planning) and the
original code's where it has one: temperature 0.5 (its ``llm_temp``, for every call; the paper
speaks of a fixed temperature "for better reproducibility"), a stage stops before a 10th action;
the trial's budget, which the code takes as an argument (``max_step``), is this project's (20
actions). Where the
paper and the original code differ the default is the code's, which produced the published
numbers (a trial out of actions is failed; a failed click is disabled when B clicks elsewhere, and
only on the reflection prompt's screens);
the paper's wording is the option; the code's task-specific prompts are on (``task_prompts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nodes.runtime.context import Context, env, setting, temperature


@dataclass(kw_only=True)
class SRContext(Context):
    """The shared settings plus Structured Reflection's own."""

    temperature: float = temperature(0.5)
    env: str = env("miniwob")
    max_trials: int = setting(5, "trials per task (paper 002: T = 1..5)", min=1)
    max_actions: int = setting(20, "actions per trial; the paper states no budget", min=1)
    max_stage_actions: int = setting(
        9,
        "actions per stage (one plan followed on one screen); the paper states none, this is the original "
        "code's (its max_step_per_view=10 stops a stage before a 10th action)",
        min=1,
    )
    planning: Literal["staged", "iterative"] = setting(
        "staged", "staged (the paper) or iterative (one action per call, the baseline of Table 8)"
    )
    reflection_screens: Literal["every", "first"] = setting(
        "every",
        "the reflection prompt shows the screen before every action (Appendix E), or first: the trial's "
        "first screen only (section 7.5, for social-media-all, whose full trace is too long)",
    )
    structured_memory: bool = setting(
        True,
        "Figure 7's ablation when false: no enforced action, no disabled ids, every reflection shown at "
        "every planning call (section 7.1)",
    )
    action_constraint: bool = setting(
        True, "Figure 7's ablation when false: failed click ids stay on the screen (section 7.2)"
    )
    replay: bool = setting(
        True,
        "a trial after a reflection replays the steps before A and enforces B at A (section 5.1); false, an "
        "ablation the paper does not run (introspect ablate): the planner is asked at every stage, with the lessons",
    )
    budget_status: Literal["in_progress", "failed"] = setting(
        "failed",
        "the status of a trial that runs out of actions (max_actions, max_stage_actions): failed, as the "
        "original code ends it (the default), or in_progress, the paper's 'you took too many steps' "
        "(Appendix D)",
    )
    disable_clicks: Literal["failed", "when_b_clicks"] = setting(
        "when_b_clicks",
        "which failed click targets are disabled at A: when_b_clicks, only when B is a click on another "
        "element (the original code, the default), or failed, every one unless B is to be taken on that "
        "element (the paper, section 5.2)",
    )
    paper_max_tokens: int | None = setting(
        128,
        "the token limit of every model call on an env the paper wrote its prompts for (MiniWoB): 128, the "
        "original code's llm_max_step; null: max_tokens, which every other env uses",
        min=1,
    )
    reflection_samples: int = setting(
        1,
        "replies asked for each reflection, of which the longest is kept, as the original code keeps the "
        "longest of the samples its model server returns (util.take_longest; the code sets no count)",
        min=1,
    )
    enforce_failed: bool = setting(
        True,
        "B is enforced at A even when it already failed there, as the original code enforces every B; false: "
        "the paper's rule (section 5.2), B is enforced only if it is not a failed attempt, else the planner decides",
    )
    plan_reading: Literal["code", "actions"] = setting(
        "code",
        "how a plan is read on MiniWoB: code, line by line as the original code executes it (a line that starts "
        "with click, tap or move clicks the first number in it, or asks the model for the id when it has none; a "
        "line of no action type does nothing, which ends the trial with no change; a blank line ends the plan), "
        "or actions: list markers, quotes and commentary are read past and a malformed action ends the trial as "
        "an exception; every other env reads plans for their actions",
    )
    suggestion_reading: Literal["code", "grammar"] = setting(
        "code",
        "how B is read to be enforced: code, as the original code executes it (a B that starts with click, tap "
        "or move clicks the first number in it: 'click the button with id=7' clicks id=7; any other B when it "
        "is an action of the env's grammar), or grammar: only a B that is an action of the env's grammar",
    )
    prompt_wording: Literal["code", "paper"] = setting(
        "code",
        "the wording of MiniWoB's prompts where the paper's appendix and the original code differ: code (the "
        "default: 'If dropdownlist is available', the paraphrase's 'And the actions taken are:') or paper "
        "(Appendix A's 'dropdown list', Appendix C's 'And the action taken is:')",
    )
    task_prompts: bool = setting(
        True,
        "the original code's additions for single MiniWoB tasks: a lesson shown at every planning call of "
        "use-autocomplete and login-user-popup, a paraphrase prompt for social-media, -all and -some, a planning "
        "prompt for click-scroll-list; false: one prompt set for every task (the paper)",
    )
    hide_failed_clicks: Literal["reflection", "planning"] = setting(
        "reflection",
        "where a disabled click target loses its id: reflection, only on the reflection prompt's screens (the "
        "original code, the default: the planner's screen and the env keep it), or planning, on the planner's "
        "screen at that step, where the env refuses it too (the paper, section 5.2)",
    )
    reflect_past_end: bool = setting(
        False,
        "an addition neither the paper nor its code has: after an incomplete trial the reflection may name "
        "the action after the last one (index=n+1)",
    )
