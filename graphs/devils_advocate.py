"""Devil's Advocate: the introspective agent of paper 000/001 (Algorithm 1) as a graph.

    1: while not G_completed(T):                        start -> plan, reflect
    2:   P ~ G_plan(T, S_t, H)                          plan (episode 1), reflect (revision)
    3:   Stack = [(S_t, a_t, tau)]                      new_episode (root entry at S_0)
    4:   while Stack:                                   pop -> reflect | finish when empty
    5:     (S'_t, a_t, tau) = Stack.pop()               pop
    6:     if S_t != S'_t: go_back(S'_t); S_t = S'_t    backtrack (+ map_element)
    7:     if tau is empty: C_tau = 1; tau = P.next()   next_subtask
    8:     else: S_t+1 = E(a_t); H.add(G_describe)      execute, describe
    9:       C_tau ~ G_align(S_t, a_t, S_t+1, tau)      align (NO -> pop: backtracking)
   10-12:    if C_tau: early stop / next subtask        complete (answer -> the env's answer action)
   14:   if C_tau: a_t ~ G_action(tau, S_t)             act
   15-16:  a_t^(r) ~ G_remedy(tau, S_t, a_t); push      remedy
   17-18:  Stack.push((S_t, a_t, tau))                  push (a_t on top of its remedies)

The baselines of the paper's comparison are options of this graph: ``remedies=0`` or
``backtracking=False`` is Plan+Act (a misaligned action ends the episode), and
``plan_revision=False`` ends the run after the first failed episode instead of
reflecting. Limits: 30 actions per task, 7 episodes (``DAContext``).

It runs on every env through the env's Interface (grammar, introduction, answer action,
element ids): WebArena is the paper's setting, with the appendix's prompts; on the others
the generic plan and action prompts are filled from the Interface, backtracking restores the
env's snapshots, element mapping runs only where observations carry element ids, and a task
that ends through ordinary actions (WebShop's buy, MiniWoB's submit, ALFWorld's goal) ends
the run when the env says it is done. The prompts are the
appendix's; additions it lacks are Context options, off by default (``revision_notes``,
``revision_review``, ``remedy_hint``), and ``site_instructions`` fills its {INSTRUCTION}.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import add_nodes, inline
from graphs.method import BaseAgent, Intervention, Method, Report, View, grown, without_pages
from nodes.da import bound as da_bound
from nodes.da import report
from nodes.da.act import act
from nodes.da.align import ALIGNED, align
from nodes.da.complete import SUBTASK_DONE, TASK_DONE, complete
from nodes.da.context import DAContext
from nodes.da.describe import describe
from nodes.da.episode import finish, new_episode, start
from nodes.da.execute import execute_action
from nodes.da.map_element import map_element
from nodes.da.plan import next_subtask, plan
from nodes.da.reflect import reflect
from nodes.da.remedy import remedy
from nodes.da.stack import backtrack, differs, needs_mapping, pop, push
from nodes.da.state import DAState
from nodes.runtime.channels import added
from nodes.runtime.environment import env_interface
from prompts import SHIPPED


def _run_popped(state: DAState, settings: DAContext) -> str:
    """Lines 7-8: a root entry starts the plan, any other entry is executed."""
    entry = state["popped"]
    if entry and not entry["action"]:
        return "next_subtask"
    return "execute" if state.get("actions", 0) < settings.max_actions else "finish"


def after_pop(state: DAState, runtime: Runtime[DAContext]) -> str:
    settings = runtime.context
    # the stack is empty: the plan failed; so has it when an alternative saved in another state is
    # popped without backtracking (only a run that turned it off midway has one: introspect ablate)
    if not state.get("popped") or (differs(state) and not settings.backtracking):
        another = (
            settings.plan_revision
            and state.get("episode", 1) < settings.max_episodes
            and state.get("actions", 0) < settings.max_actions
        )
        return "reflect" if another else "finish"
    if differs(state):
        return "backtrack"
    return _run_popped(state, settings)


async def after_backtrack(state: DAState, runtime: Runtime[DAContext]) -> str:
    if not state.get("popped"):  # the saved state could not be restored
        return "pop"
    if needs_mapping(state, await env_interface(runtime.context)):
        return "map_element"
    return _run_popped(state, runtime.context)


def after_mapping(state: DAState, runtime: Runtime[DAContext]) -> str:
    if not state.get("popped"):  # no usable id: try the next alternative
        return "pop"
    return _run_popped(state, runtime.context)


def after_execute(state: DAState) -> str:
    return "finish" if state.get("done") else "describe"


def after_align(state: DAState) -> str:
    return "complete" if state.get("aligned") else "pop"


def to_act(state: DAState, runtime: Runtime[DAContext]) -> str:
    """Line 14 with tau set: act on it; past the plan's end there is nothing to act on."""
    if state.get("actions", 0) >= runtime.context.max_actions:
        return "finish"
    return "act" if state.get("subtask", 0) < len(state.get("plan") or []) else "pop"


def after_complete(state: DAState, runtime: Runtime[DAContext]) -> str:
    if state.get("task_done") or state.get("done"):
        return "finish"
    return to_act(state, runtime)


def after_act(state: DAState, runtime: Runtime[DAContext]) -> str:
    if not state.get("proposal"):  # no usable action: the next alternative on the stack
        return "pop"
    return "remedy" if runtime.context.remedies_per_action > 0 else "push"


def build_graph(checkpointer: Any = None):
    """Algorithm 1 as a LangGraph graph; ``checkpointer`` is any LangGraph saver."""
    builder = StateGraph(DAState, context_schema=DAContext)
    add_nodes(
        builder,
        {
            "start": start,
            "plan": plan,
            "new_episode": new_episode,
            "pop": pop,
            "backtrack": backtrack,
            "map_element": map_element,
            "next_subtask": next_subtask,
            "execute": execute_action,
            "describe": describe,
            "align": align,
            "complete": complete,
            "act": act,
            "remedy": remedy,
            "push": push,
            "reflect": reflect,
            "finish": finish,
        },
    )

    builder.add_edge(START, "start")
    builder.add_edge("start", "plan")
    builder.add_edge("plan", "new_episode")
    builder.add_edge("new_episode", "pop")
    builder.add_conditional_edges(
        "pop", inline(after_pop), ["reflect", "finish", "backtrack", "next_subtask", "execute"]
    )
    builder.add_conditional_edges(
        "backtrack", after_backtrack, ["map_element", "next_subtask", "execute", "pop", "finish"]
    )
    builder.add_conditional_edges("map_element", inline(after_mapping), ["pop", "execute", "finish"])
    builder.add_conditional_edges("next_subtask", inline(to_act), ["act", "pop", "finish"])
    builder.add_conditional_edges("execute", inline(after_execute), ["describe", "finish"])
    builder.add_edge("describe", "align")
    builder.add_conditional_edges("align", inline(after_align), ["complete", "pop"])
    builder.add_conditional_edges("complete", inline(after_complete), ["finish", "act", "pop"])
    builder.add_conditional_edges("act", inline(after_act), ["remedy", "push", "pop"])
    builder.add_edge("remedy", "push")
    builder.add_edge("push", "pop")
    builder.add_edge("reflect", "new_episode")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="devils_advocate")


graph = build_graph()


def result(state: DAState) -> dict[str, Any]:
    """Per-task fields of the paper's Table 1: actions of the first and last episode, revisions."""
    episodes = list(state.get("episode_actions") or [])
    plans = list(state.get("plans") or [])
    first, last = (episodes[0], episodes[-1]) if episodes else ([], [])
    return {
        "success": bool(state.get("success")),
        "answer": state.get("answer", ""),
        "stop_reason": state.get("stop_reason", ""),
        "episodes": len(episodes),
        "first_episode_actions": first,
        "last_episode_actions": last,
        "actions_first_episode": len(first),
        "actions_last_episode": len(last),
        "plan_revisions": max(0, len(plans) - 1),
        "plans": plans,
        "backtracks": len(state.get("backtracks") or []),
    }


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI about what a node decided (plans, proposals, verdicts)."""
    if node in ("plan", "reflect") and update.get("plan"):
        prefix = "plan" if node == "plan" else "revised plan"
        return f"{prefix}: " + " | ".join(str(step) for step in update["plan"])
    if node in ("act", "remedy") and "proposal" in update:
        return f"proposes: {' ; '.join(update['proposal']) or '(nothing usable)'}"
    if node == "describe" and added(update.get("history")):
        return f"observed: {added(update['history'])[-1]['text']}"
    if node == "align" and "aligned" in update:
        return "aligned with the subtask" if update["aligned"] else "not aligned: backtrack"
    if node == "complete":
        if update.get("task_done"):
            return f"task complete; answer: {update.get('answer', '')}"
        return f"now on subtask {int(update.get('subtask', 0)) + 1}"
    if node == "backtrack" and added(update.get("backtracks")):
        back = added(update["backtracks"])[-1]
        return f"back to {back['url'] or 'an earlier state'} to try {back['action']}"
    if node == "map_element" and update.get("popped"):
        back = (added(update.get("backtracks")) or [{}])[-1]
        before = f"{back['action']} -> " if back.get("mapped_action") == update["popped"]["action"] else ""
        return f"element remapped: {before}{update['popped']['action']}"
    if node == "new_episode" and update.get("episode"):
        return f"episode {update['episode']}"
    return None


def structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``introspect view``: the episode, the plan (the current subtask marked), the stack and
    the backtracks so far."""
    values = states[-1]
    plan = [("-> " if i == values.get("subtask") else "   ") + s for i, s in enumerate(values.get("plan") or [])]
    return [
        ("episode", values.get("episode")),
        ("plan", "\n".join(plan)),
        ("stack (top last)", without_pages(values.get("stack"))),
        ("backtracks", values.get("backtracks") or []),
    ]


def marks(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``introspect view``: the backtracks and plan revisions between two checkpoints."""
    out = [
        (
            "backtrack",
            f"backtrack (episode {b.get('episode')}): back to {b.get('url')} to try "
            f"{b.get('action')}"
            + (
                f", remapped to {b['mapped_action']}"
                if b.get("mapped_action") and b.get("mapped_action") != b.get("action")
                else ""
            ),
        )
        for b in grown(before, after, "backtracks")
    ]
    out += [
        ("revision", "plan revised:\n" + "\n".join(p)) for p in grown(before, after, "plans") if before.get("plans")
    ]
    return out


def introspection(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``introspect export --format steps``: the plan and its current subtask, the action
    proposed with its remedies (the anticipatory reflection), the alignment and completion
    judgements, and the notes."""
    values = states[-1]
    proposal = list(values.get("proposal") or [])
    return {
        "plan": list(values.get("plan") or []),
        "subtask": values.get("subtask"),
        "proposed": proposal[:1],
        "remedies": proposal[1:],
        "aligned": values.get("aligned"),
        "task_done": values.get("task_done"),
        "notes": list(values.get("notes") or []),
    }


def misjudged(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """The alignment intervened: its call answered NO (a refused action is not aligned without one)."""
    return any(
        call.get("node") == "align" and (call.get("verdict") or {}).get("says") is False
        for call in grown(before, after, "calls")
    )


METHOD = Method(
    name="devils_advocate",
    title="Devil's Advocate",
    summary="anticipatory reflection, backtracking stack",
    paper="Wang et al. 2024",
    aliases=("da", "ar"),
    build_graph=build_graph,
    graph=graph,
    envs=("webarena", "webshop", "miniwob", "alfworld", "hotpotqa"),
    paper_envs=("webarena",),
    paper_model="openai:gpt-4-0613",
    context=DAContext,
    result=result,
    narrate=narrate,
    studio_graphs={"devils_advocate": "graph"},
    baselines={"Plan+Act": "--set remedies=0"},
    view=View(structures=structures, marks=marks, introspection=introspection),
    report=Report(tables=report.tables, figures=report.figures),
    prompts=SHIPPED.folder("devils_advocate"),
    bound=da_bound.bound,
    verdicts=(TASK_DONE, SUBTASK_DONE, ALIGNED),
    base_agent=BaseAgent(
        {"remedies": 0, "alignment": False, "backtracking": False, "plan_revision": False, "max_episodes": 1},
        "remedies, alignment, backtracking, plan revision and further episodes (Plan+Act, one episode)",
    ),
    interventions=(
        Intervention("remedy", "remedy", {"remedies": 0}, "propose alternatives to each action before it runs"),
        Intervention(
            "alignment",
            "align",
            {"alignment": False},
            "judge an executed action against its subtask; a NO sends the agent to the next alternative",
            fired=misjudged,
        ),
        Intervention(
            "backtrack",
            "backtrack",
            {"backtracking": False},
            "restore the state an alternative was saved in (without it the episode ends there)",
        ),
        Intervention(
            "plan revision",
            "reflect",
            {"plan_revision": False},
            "revise the plan after a failed episode and start another (without it the run ends)",
        ),
    ),
)
