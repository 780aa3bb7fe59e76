"""LASER as a LangGraph state graph (paper 003, Figure 1), built from a declared state space.

One node per state of the space (nodes.laser.space.StateSpace), each an ``act`` restricted to
its state's tools (a rationale, then one function call); ``execute`` carries the call out on
the env through the tool's actions, and the space's transitions are its conditional edges,
labelled with the functions that take them. On WebShop (the paper's space, nodes.laser.webshop):

    start -> search
    search  -> execute -> results (Search)
    results -> execute -> item (select_item) | results (Next) | search (Back_to_Search)
    item    -> execute -> item (Description / Features / Reviews) | results (Prev) | finish (Buy_Now)
    execute -> backup (13 transitions, or 3 refused steps in a row, and an examined item) -> finish
    execute -> finish (the 15-transition cap)

A state whose answer was refused loops to itself with the reason in its history, and an
action the env refused leaves the agent where it was; neither is a transition, as in the
original laser_agent.py.

``build_graph(space=...)`` builds the graph of any space (a user's own site); the default graph
(Studio's ``laser``) has the states of every declared space and takes, per run, the space of
``Context.env`` (nodes.laser.spaces: WebShop's, and the local shop's on ``webarena``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import add_nodes, inline
from graphs.method import Method
from nodes.channels import added
from nodes.context import Context
from nodes.laser.backup import backup_node
from nodes.laser.space import FINISH, StateSpace, merged_transitions
from nodes.laser.spaces import SPACES, Picker, fixed, space_for
from nodes.laser.states import (
    DEFAULTS,
    REFUSAL_LIMIT,
    LaserState,
    backup_at,
    candidates,
    execute_node,
    finish_node,
    start_node,
    state_node,
)
from nodes.node import Node


def _edge_label(transitions: dict[str, dict[str, str]], target: str) -> str:
    """execute's edge to ``target``: the functions whose transition leads there (Figure 1)."""
    names = list(
        dict.fromkeys(name for functions in transitions.values() for name, to in functions.items() if to == target)
    )
    extra = {FINISH: " or the cap", "backup": "the backup strategy"}.get(target, " or refused")
    return ", ".join(names) + extra if names else extra


def _router(pick: Picker) -> Callable[[LaserState, Runtime[Context]], str]:
    def route(state: LaserState, runtime: Runtime[Context]) -> str:
        """The next node: finish when done or out of steps; the backup strategy near the cap
        (or when the model keeps failing) if an item was examined; else the current state."""
        ctx = runtime.context
        space = pick(ctx)
        transitions = int(state.get("transitions", 0))
        if state.get("done") or transitions >= ctx.limit("max_actions", DEFAULTS["max_actions"]):
            return "finish"
        stuck = int(state.get("refusals", 0)) >= REFUSAL_LIMIT
        backup = ctx.backup and space.backup is not None and candidates(state, space)
        if (stuck or transitions >= backup_at(ctx)) and backup:
            return "backup"
        if stuck:
            return "finish"
        return state["laser_state"]

    return route


def build_graph(checkpointer: BaseCheckpointSaver | None = None, space: StateSpace | None = None):
    """The compiled LASER graph of ``space`` (by default, every declared space's states, each run
    taking the space of its env, ``Context.env``); pass a checkpointer to make runs resumable."""
    pick = fixed(space) if space is not None else space_for
    transitions = space.transitions() if space is not None else merged_transitions(SPACES.values())
    with_backup = space is None or space.backup is not None
    route = _router(pick)
    # edge label -> node: the routers' path maps (LangGraph declares them dict[Hashable, str])
    labels: dict[Hashable, str] = {
        _edge_label(transitions, target): target
        for target in (*transitions, *(("backup",) if with_backup else ()), "finish")
    }

    def after_choice(state: LaserState, runtime: Runtime[Context]) -> str:
        """A state node's call goes to ``execute``; a refused answer asks the state again."""
        if state.get("call"):
            return "call"
        goes_to = route(state, runtime)
        return "answer refused" if goes_to == state.get("laser_state") else goes_to

    def after_execute(state: LaserState, runtime: Runtime[Context]) -> str:
        """execute's edge to the state the new page is in (or backup, or finish)."""
        return _edge_label(transitions, route(state, runtime))

    def after_start(state: LaserState, runtime: Runtime[Context]) -> str:
        """start's edge to the state of the first page."""
        return state["laser_state"]

    builder = StateGraph(LaserState, context_schema=Context)
    nodes: dict[str, Node[LaserState, Context]] = {"start": start_node(pick)}
    nodes.update({name: state_node(pick) for name in transitions})
    nodes["execute"] = execute_node(pick)
    if with_backup:
        nodes["backup"] = backup_node(pick)
    nodes["finish"] = finish_node(pick)
    add_nodes(builder, nodes)
    builder.add_edge(START, "start")
    if len(transitions) == 1:
        builder.add_edge("start", next(iter(transitions)))
    else:  # the state of the first page
        first: dict[Hashable, str] = {name: name for name in transitions}
        builder.add_conditional_edges("start", inline(after_start), first)
    for name in transitions:
        edges: dict[Hashable, str] = {"call": "execute", "answer refused": name, "finish": "finish"}
        if with_backup:
            edges["backup"] = "backup"
        builder.add_conditional_edges(name, inline(after_choice), edges)
    builder.add_conditional_edges("execute", inline(after_execute), labels)
    if with_backup:
        builder.add_edge("backup", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="laser")


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI: a state's rationale, or the refusal of its answer; the call executed."""
    if update.get("call"):
        return update["call"]["rationale"]
    if node not in ("start", "backup", "finish") and added(update.get("history")):
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
    envs=("webshop", "webarena"),
    paper_envs=("webshop",),
    default_env="webshop",
    defaults=DEFAULTS,
    result=result,
    narrate=narrate,
    studio_graphs={"laser": "graph"},
    baselines={
        "LASER - backup (Table 1)": "--set backup=false",
        "text generation instead of function calls (Table 3)": "--set tool_mode=json",
    },
)
