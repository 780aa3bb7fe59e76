"""LASER as a LangGraph state graph (paper 003, Figure 1).

One node per LASER state; Figure 1's transitions are the conditional edges:

    start -> search
    search  -> results
    results -> item | results (Next) | search (Back to Search)
    item    -> item (Description / Features / Reviews) | results (Prev) | finish (Buy Now)
    any state -> backup (13 transitions, or 3 refused steps in a row, and an examined item) -> finish
    any state -> finish (the 15-transition cap)

A state whose answer was refused loops to itself with the reason in its history (not a
transition, as in the original laser_agent.py).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.context import Context
from graphs.edges import inline
from nodes.laser.backup import backup
from nodes.laser.states import (
    CAP, REFUSAL_LIMIT, LaserState, backup_at, candidates, finish, item, results, search, start,
)

DEFAULT_ENV = "webshop"
ENVS = ("webshop",)
DEFAULTS: dict[str, Any] = {"max_actions": CAP, "backup_at": CAP - 2, "temperature": 0.0}

# Figure 1: where each state may lead (self-loops cover refused actions).
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "search": ("results", "search"),
    "results": ("item", "results", "search"),
    "item": ("item", "results"),
}


def route(state: LaserState, runtime: Runtime[Context]) -> str:
    """The next node: finish when bought or out of steps; the backup strategy near the cap
    (or when the model keeps failing) if an item was examined; else the new state."""
    ctx = runtime.context
    transitions = int(state.get("transitions", 0))
    if state.get("done") or transitions >= ctx.limit("max_actions", CAP):
        return "finish"
    stuck = int(state.get("refusals", 0)) >= REFUSAL_LIMIT
    if (stuck or transitions >= backup_at(ctx)) and ctx.backup and candidates(state):
        return "backup"
    if stuck:
        return "finish"
    return state.get("laser_state", "search")


def build_graph(checkpointer: BaseCheckpointSaver | None = None):
    """The compiled LASER graph; pass a checkpointer to make runs resumable."""
    builder = StateGraph(LaserState, context_schema=Context)
    builder.add_node("start", start)
    builder.add_node("search", search)
    builder.add_node("results", results)
    builder.add_node("item", item)
    builder.add_node("backup", backup)
    builder.add_node("finish", finish)
    builder.add_edge(START, "start")
    builder.add_edge("start", "search")
    for name, targets in TRANSITIONS.items():
        builder.add_conditional_edges(name, inline(route), [*targets, "backup", "finish"])
    builder.add_edge("backup", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="laser")


def result(state: LaserState) -> dict[str, Any]:
    """Per-task fields for evaluation results."""
    return {
        "transitions": int(state.get("transitions", 0)),
        "backup_used": bool(state.get("backup_used", False)),
        "examined": len(state.get("buffer", [])),
        "backup_problem": state.get("backup_problem", ""),
    }


graph = build_graph()
