"""Structured Reflection (Li et al., EMNLP Findings 2023, paper 002) as a LangGraph graph.

The algorithm, one trial per pass through ``start_trial`` (T = 1..max_trials, default 5):

    start_trial   reset the env to the task (same seed every trial)
    replay        start a stage; memory: replay the steps before A (stage by stage), enforce
                  B at A (no model call; with enforce_failed=False, the paper's, unless B already
                  failed at A, when the planner gets B as a lesson)
    plan          staged planning: every action executable on this screen, in one call
                  (Context.planning="iterative": one action per call, the baseline)
    execute       execute the next planned action (with hide_failed_clicks="planning", the paper's,
                  the click targets that failed at this step disabled: their id removed from the
                  screen, refused by the env); judge the trial status
                  (cycles are looked for within the stage, as the paper's code does)
    describe      paraphrase the executed action (Appendix C)
    ... execute/describe until the plan is used up, then replay -> plan on the new screen,
        until a status ends the trial: correct, cycle, no change, incomplete (no further
        plan), in progress (the trial's or the stage's step budget), exception (unreadable or
        refused action), failed
    reflect       every screen (without the ids the memory disables at its step, as the original
                  code shows them) and action of the trial (Appendix E) -> "For action index=A,
                  you should B." -> structured memory; next trial
    finish        record the last trial, release the env

Options (Context): ``reflection_screens="first"`` (Sec. 7.5's first-screen-only reflection
prompt); Figure 7's ablations ``structured_memory=False`` and ``action_constraint=False``;
``max_stage_actions`` (default 9, the original code's per-stage budget). Where the paper and its
released code differ, the code is followed (it produced the published numbers) and the paper's
wording is an option: ``budget_status="in_progress"`` (a trial out of actions ends in progress,
"you took too many steps", not failed) and ``disable_clicks="failed"`` (every failed click is
disabled unless B acts on it, not only when B is another click), ``enforce_failed=False`` (a B
that already failed at A is not enforced again), ``hide_failed_clicks="planning"``
(a disabled id is removed from the planner's screen and refused by the env, not only removed from
the reflection prompt's screens).
``reflect_past_end=True`` is an addition of neither (index=n+1 after an incomplete trial).

Edges:
    START -> start_trial -> replay -> execute | plan
    plan -> execute | reflect | finish
    execute -> describe | execute | replay | reflect | finish
    describe -> execute | replay | reflect | finish
    reflect -> start_trial;  finish -> END
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import add_nodes, inline
from graphs.method import BaseAgent, Intervention, Method, Report, View, grown, without_pages
from nodes.runtime.channels import added
from nodes.sr import bound as sr_bound
from nodes.sr import report
from nodes.sr.context import SRContext
from nodes.sr.describe import describe, needs_description
from nodes.sr.execute import execute_action
from nodes.sr.memory import entry_at
from nodes.sr.plan import plan
from nodes.sr.reflect import STATUS, reflect
from nodes.sr.replay import replay
from nodes.sr.state import SRState
from nodes.sr.status import TrialStatus
from nodes.sr.trial import finish, start_trial
from prompts import SHIPPED

Next = Literal["execute", "replay", "reflect", "finish"]
NODES_PER_ACTION = 4  # at most: replay, plan, execute, describe


def recursion_limit(context: SRContext) -> int:
    """Supersteps a run may need: four per action and start/reflect per trial, plus finish."""
    per_trial = NODES_PER_ACTION * context.max_actions + 4
    return context.max_trials * per_trial + 2


def _after_step(state: SRState, runtime: Runtime[SRContext]) -> Next:
    """Continue the plan, start a new stage, or end the trial (reflect if trials remain)."""
    status = state.get("status", "")
    if status:
        trials_left = state.get("trial", 1) < runtime.context.max_trials
        return "reflect" if status != TrialStatus.CORRECT.value and trials_left else "finish"
    pending = state.get("pending", [])
    step = len(state.get("steps", []))
    # A planned action stops at a step the memory speaks about: that step gets a new stage.
    if pending and (pending[0]["source"] != "plan" or entry_at(state["memory"], step) is None):
        return "execute"
    return "replay"


def after_replay(state: SRState) -> Literal["execute", "plan"]:
    return "execute" if state.get("pending") else "plan"


def after_plan(state: SRState, runtime: Runtime[SRContext]) -> Literal["execute", "reflect", "finish"]:
    # plan leaves actions pending or ends the trial (sets its status): _after_step's "replay" cannot come here
    return "execute" if state.get("pending") else _after_step(state, runtime)  # type: ignore[return-value]


def after_execute(
    state: SRState, runtime: Runtime[SRContext]
) -> Literal["describe", "execute", "replay", "reflect", "finish"]:
    following = _after_step(state, runtime)
    if following != "finish" and needs_description(state["steps"][-1]):
        return "describe"
    return following


def after_describe(state: SRState, runtime: Runtime[SRContext]) -> Next:
    return _after_step(state, runtime)


def build_graph(checkpointer: Any = None):
    """The compiled Structured Reflection graph (pass a checkpointer to resume runs)."""
    builder = StateGraph(SRState, context_schema=SRContext)
    add_nodes(
        builder,
        {
            "start_trial": start_trial,
            "replay": replay,
            "plan": plan,
            "execute": execute_action,
            "describe": describe,
            "reflect": reflect,
            "finish": finish,
        },
    )
    builder.add_edge(START, "start_trial")
    builder.add_edge("start_trial", "replay")
    builder.add_conditional_edges("replay", inline(after_replay))
    builder.add_conditional_edges("plan", inline(after_plan))
    builder.add_conditional_edges("execute", inline(after_execute))
    builder.add_conditional_edges("describe", inline(after_describe))
    builder.add_edge("reflect", "start_trial")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer)


graph = build_graph()


def result(state: SRState) -> dict[str, Any]:
    """Per task: the trials run, each trial's status, actions and planning calls, and totals."""
    trials = state.get("trials", [])
    return {
        "trials": len(trials),
        "status": trials[-1]["status"] if trials else state.get("status", ""),
        "planning_calls": sum(t.get("planning_calls", 0) for t in trials),
        "trial_records": [
            {
                key: t.get(key)
                for key in ("trial", "status", "actions", "planning_calls", "reflection", "reflection_error")
                if t.get(key) is not None
            }
            for t in trials
        ],
    }


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI about what a node decided (the plan, a paraphrase, a reflection)."""
    if node == "start_trial" and update.get("trial"):
        return f"trial {update['trial']}"
    if node == "plan":
        planned = [p["action"] for p in update.get("pending", [])]
        return f"planned: {'; '.join(planned)}" if planned else f"no further plan ({update.get('status', '')})"
    if node == "describe" and added(update.get("steps")):
        return f"paraphrase: {added(update['steps'])[-1].get('description', '')}"
    if node == "reflect" and added(update.get("trials")):
        last = added(update["trials"])[-1]
        return f"trial {last['trial']} ended {last['status']}; reflection: {last.get('reflection', '')}"
    if node == "execute" and update.get("status"):
        return f"status: {update['status']}"
    return None


def structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``introspect view``: the trial, its steps, the reflection memory and the trials so far."""
    values = states[-1]
    memory = values.get("memory") or {}
    return [
        ("trial", values.get("trial")),
        ("this trial's steps", without_pages(values.get("steps"))),
        ("reflection memory (by step index)", memory.get("entries") or {}),
        ("trials", values.get("trials") or []),
    ]


def marks(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``introspect view``: each trial that ended between two checkpoints, with its reflection."""
    return [
        (
            "trial",
            f"trial {t.get('trial')} ended {t.get('status')}, reward {t.get('reward')}"
            + (f"; reflection: {t['reflection']}" if t.get("reflection") else ""),
        )
        for t in grown(before, after, "trials")
    ]


def introspection(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``introspect export --format steps``: the trial, the rest of the stage's plan, the
    reflection memory (by step index) and each ended trial's reflection."""
    values = states[-1]
    return {
        "trial": values.get("trial"),
        "plan": [planned.get("action", "") for planned in values.get("pending") or []],
        "reflections": (values.get("memory") or {}).get("entries") or {},
        "trial_reflections": [t["reflection"] for t in values.get("trials") or [] if t.get("reflection")],
    }


def replayed(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """The memory queued this stage's actions (replayed steps, or B enforced at A)."""
    return bool(after.get("pending"))


METHOD = Method(
    name="structured_reflection",
    title="Structured Reflection",
    summary="staged planning, step-indexed reflection memory",
    paper="Li et al. 2023",
    aliases=("sr",),
    build_graph=build_graph,
    graph=graph,
    envs=("miniwob", "webshop", "webarena", "alfworld", "hotpotqa"),
    paper_envs=("miniwob",),
    paper_model="FLAN-PaLM2 L",
    context=SRContext,
    result=result,
    recursion_limit=recursion_limit,
    narrate=narrate,
    studio_graphs={"structured_reflection": "graph"},
    baselines={"iterative planning (Table 8)": "--set planning=iterative"},
    view=View(structures=structures, marks=marks, introspection=introspection),
    report=Report(tables=report.tables, figures=report.figures),
    prompts=SHIPPED.folder("structured_reflection"),
    bound=sr_bound.bound,
    verdicts=(STATUS,),
    base_agent=BaseAgent({"max_trials": 1, "replay": False}, "reflection, its replay and further trials (one trial)"),
    interventions=(
        Intervention(
            "reflection",
            "reflect",
            {"max_trials": 1},
            "after a failed trial, reflect on it and try again (without it the run ends with that trial)",
        ),
        Intervention(
            "replay",
            "replay",
            {"replay": False},
            "replay the steps before the reflection's A and enforce its B at A (without it the planner plans them)",
            fired=replayed,
        ),
    ),
)
