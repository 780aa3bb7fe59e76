"""LASER as a LangGraph state graph (paper 003, Figure 1).

One node per LASER state, each an ``act`` restricted to its state's tools (a rationale,
then one function call); ``execute`` carries the call out on WebShop, and Figure 1's
transitions are its conditional edges, labelled with the function that takes them:

    start -> search
    search  -> execute -> results (Search)
    results -> execute -> item (select_item) | results (Next) | search (Back_to_Search)
    item    -> execute -> item (Description / Features / Reviews) | results (Prev) | finish (Buy_Now)
    execute -> backup (13 transitions, or 3 refused steps in a row, and an examined item) -> finish
    execute -> finish (the 15-transition cap)

A state whose answer was refused loops to itself with the reason in its history, and an
action WebShop refused leaves the agent where it was; neither is a transition, as in the
original laser_agent.py.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import inline
from graphs.method import Method
from nodes.channels import added
from nodes.context import Context
from nodes.laser.backup import backup
from nodes.laser.states import (
    DEFAULTS,
    REFUSAL_LIMIT,
    LaserState,
    backup_at,
    candidates,
    execute_call,
    finish,
    item,
    results,
    search,
    start,
)
from nodes.laser.tools import TRANSITIONS

STATES = tuple(TRANSITIONS)


def _edge_label(target: str) -> str:
    """execute's edge to ``target``: the functions whose transition leads there (Figure 1)."""
    names = [name for functions in TRANSITIONS.values() for name, to in functions.items() if to == target]
    extra = {"finish": " or the cap", "backup": "the backup strategy"}.get(target, " or refused")
    return ", ".join(names) + extra if names else extra


# execute's conditional edges, labelled (an action WebShop refused leaves the agent where it was)
EXECUTE_EDGES: dict[str, str] = {_edge_label(target): target for target in (*STATES, "backup", "finish")}


def route(state: LaserState, runtime: Runtime[Context]) -> str:
    """The next node: finish when bought or out of steps; the backup strategy near the cap
    (or when the model keeps failing) if an item was examined; else the current state."""
    ctx = runtime.context
    transitions = int(state.get("transitions", 0))
    if state.get("done") or transitions >= ctx.limit("max_actions", DEFAULTS["max_actions"]):
        return "finish"
    stuck = int(state.get("refusals", 0)) >= REFUSAL_LIMIT
    if (stuck or transitions >= backup_at(ctx)) and ctx.backup and candidates(state):
        return "backup"
    if stuck:
        return "finish"
    return state.get("laser_state", "search")


def after_choice(state: LaserState, runtime: Runtime[Context]) -> str:
    """A state node's call goes to ``execute``; a refused answer asks the state again."""
    if state.get("call"):
        return "call"
    goes_to = route(state, runtime)
    return "answer refused" if goes_to == state.get("laser_state") else goes_to


def after_execute(state: LaserState, runtime: Runtime[Context]) -> str:
    """execute's edge to the state the new page is in (or backup, or finish)."""
    return _edge_label(route(state, runtime))


def build_graph(checkpointer: BaseCheckpointSaver | None = None):
    """The compiled LASER graph; pass a checkpointer to make runs resumable."""
    builder = StateGraph(LaserState, context_schema=Context)
    builder.add_node("start", start)
    for name, node in (("search", search), ("results", results), ("item", item)):
        builder.add_node(name, node)
    builder.add_node("execute", execute_call)
    builder.add_node("backup", backup)
    builder.add_node("finish", finish)
    builder.add_edge(START, "start")
    builder.add_edge("start", "search")
    for name in STATES:
        edges = {"call": "execute", "answer refused": name, "backup": "backup", "finish": "finish"}
        builder.add_conditional_edges(name, inline(after_choice), edges)
    builder.add_conditional_edges("execute", inline(after_execute), EXECUTE_EDGES)
    builder.add_edge("backup", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="laser")


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI: a state's rationale, or the refusal of its answer; the call executed."""
    if node in STATES and update.get("call"):
        return update["call"]["rationale"]
    if (node in STATES or node == "execute") and added(update.get("history")):
        action = added(update["history"])[-1].rsplit("\nAction: ", 1)[-1]  # "Rationale: ...\nAction: ..."
        return action.split("\nFeedback: ")[0]
    return None


def result(state: LaserState) -> dict[str, Any]:
    """Per-task fields for evaluation results."""
    return {
        "transitions": int(state.get("transitions", 0)),
        "backup_used": bool(state.get("backup_used", False)),
        "examined": len(state.get("buffer", [])),
        "backup_problem": state.get("backup_problem", ""),
    }


graph = build_graph()

METHOD = Method(
    name="laser",
    title="LASER",
    summary="state-space exploration, per-state actions",
    paper="Ma et al. 2023",
    build_graph=build_graph,
    graph=graph,
    envs=("webshop",),
    paper_envs=("webshop",),
    default_env="webshop",
    defaults=DEFAULTS,
    result=result,
    narrate=narrate,
    studio_graphs={"laser": "graph"},
    baselines={"LASER - backup (Table 1)": "--set backup=false", "text generation instead of function calls (Table 3)": "--set tool_mode=json"},
)
