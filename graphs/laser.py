"""LASER as a LangGraph state graph (paper 003, Figure 1), built from a declared state space.

One node per state of the space (nodes.laser.space.StateSpace), each an ``act`` restricted to
its state's tools (a rationale, then one function call); ``execute`` carries the call out on
the env through the tool's actions, and the space's transitions are its conditional edges,
labelled with the functions that take them. On WebShop (the paper's space, nodes.laser.webshop):

    start -> search
    search  -> execute -> results (Search)
    results -> execute -> item (select_item) | results (Next) | search (Back_to_Search)
    item    -> execute -> item (Description / Features / Reviews) | results (Prev) | finish (Buy_Now)
    execute -> backup (13 transitions outside the item state, or 3 refused steps in a row, and an
               examined item) -> finish
    execute -> finish (the 15-transition cap)

A state whose answer was refused loops to itself with the reason in its history, and an
action the env refused leaves the agent where it was; neither is a transition, as in the
original laser_agent.py.

``build_graph(space=...)`` builds the graph of any space (a user's own site); the default graph
(Studio's ``laser``) has the states of every declared space and takes, per run, the space of
``Context.env`` (nodes.laser.spaces: WebShop's, and the local shop's on ``webarena``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graphs.edges import add_nodes, add_routed_node, path_map
from graphs.method import BaseAgent, Intervention, Method, Report, View, without_pages
from nodes.laser import bound as laser_bound
from nodes.laser import report
from nodes.laser.backup import backup
from nodes.laser.context import LaserContext
from nodes.laser.space import FINISH, StateSpace, merged_transitions
from nodes.laser.spaces import SPACES, Picker, fixed, space_for
from nodes.laser.states import (
    MATCHES,
    REFUSAL_LIMIT,
    LaserState,
    act,
    backup_at,
    candidates,
    execute_call,
    finish,
    start,
)
from nodes.runtime.channels import added
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import ConfigNode, Update, model_node
from prompts import SHIPPED


def _edge_label(transitions: dict[str, dict[str, str]], target: str) -> str:
    """execute's edge to ``target`` as Figure 1 labels it: the functions whose transition leads
    there, then what else leads there (a refused action stays in its state)."""
    names = ", ".join(
        dict.fromkeys(name for functions in transitions.values() for name, to in functions.items() if to == target)
    )
    otherwise = {FINISH: "the cap", "backup": "the backup strategy"}.get(target, "refused")
    return f"{names} or {otherwise}" if names else otherwise


def _router(pick: Picker) -> Callable[[LaserState, Runtime[LaserContext]], str]:
    def route(state: LaserState, runtime: Runtime[LaserContext]) -> str:
        """The next node: finish when done or out of steps; the backup strategy near the cap
        (or when the model keeps failing) if an item was examined; else the current state."""
        ctx = runtime.context
        space = pick(ctx)
        transitions = state.get("transitions", 0)
        if state.get("done") or transitions >= ctx.max_actions:
            return "finish"
        stuck = state.get("refusals", 0) >= REFUSAL_LIMIT
        backup = ctx.backup and space.backup is not None and candidates(state, space)
        # laser_agent.py checks its 13 at the top of its loop: the item state judges the item first
        checked = ctx.backup_check == "each_transition" or state["laser_state"] != space.item_state
        if (stuck or (checked and transitions >= backup_at(ctx))) and backup:
            return "backup"
        if stuck:
            return "finish"
        return state["laser_state"]

    return route


def _nodes(pick: Picker, states: Iterable[str], with_backup: bool) -> dict[str, ConfigNode[LaserState, LaserContext]]:
    """The graph's nodes: nodes.laser's functions, each run in the space ``pick`` gives its run
    (every state of the space is one ``act``), the model-calling ones as model nodes."""

    async def start_in_space(state: LaserState, runtime: Runtime[LaserContext], config: RunnableConfig) -> Update:
        return await start(state, runtime.context, config, pick(runtime.context))

    @model_node(caller_for)
    async def act_in_space(
        state: LaserState, runtime: Runtime[LaserContext], config: RunnableConfig, llm: Caller
    ) -> Update:
        return await act(state, runtime.context, pick(runtime.context), llm)

    @model_node(caller_for)
    async def execute_in_space(
        state: LaserState, runtime: Runtime[LaserContext], config: RunnableConfig, llm: Caller
    ) -> Update:
        return await execute_call(state, runtime.context, config, pick(runtime.context), llm)

    @model_node(caller_for)
    async def backup_in_space(
        state: LaserState, runtime: Runtime[LaserContext], config: RunnableConfig, llm: Caller
    ) -> Update:
        return await backup(state, runtime.context, config, pick(runtime.context), llm)

    async def finish_in_space(state: LaserState, runtime: Runtime[LaserContext], config: RunnableConfig) -> Update:
        return await finish(state, runtime.context, config, pick(runtime.context))

    nodes: dict[str, ConfigNode[LaserState, LaserContext]] = {"start": start_in_space}
    nodes.update({name: act_in_space for name in states})
    nodes["execute"] = execute_in_space
    if with_backup:
        nodes["backup"] = backup_in_space
    nodes["finish"] = finish_in_space
    return nodes


def build_graph(checkpointer: BaseCheckpointSaver | None = None, space: StateSpace | None = None):
    """The compiled LASER graph of ``space`` (by default, every declared space's states, each run
    taking the space of its env, ``Context.env``); pass a checkpointer to make runs resumable."""
    pick = fixed(space) if space is not None else space_for
    transitions = space.transitions() if space is not None else merged_transitions(SPACES.values())
    with_backup = space is None or space.backup is not None
    route = _router(pick)
    ends = (*(("backup",) if with_backup else ()), "finish")
    targets = (*transitions, *ends)
    # The routers answer node names (two states may share a label); Figure 1's labels are drawn.
    execute_edges = path_map(targets, {to: _edge_label(transitions, to) for to in targets})

    def after_choice(state: LaserState, runtime: Runtime[LaserContext]) -> str:
        """A state node's call goes to ``execute``; a refused answer asks the state again."""
        return "execute" if state.get("call") else route(state, runtime)

    def after_start(state: LaserState, runtime: Runtime[LaserContext]) -> str:
        """start's edge to the state of the first page."""
        return state["laser_state"]

    # Each node but backup and finish routes itself (graphs.edges.add_routed_node): the same
    # routers and drawn edges as conditional edges, without reading the state back after each step.
    nodes = _nodes(pick, transitions, with_backup)
    builder = StateGraph(LaserState, context_schema=LaserContext)
    builder.add_edge(START, "start")
    if len(transitions) == 1:
        add_nodes(builder, {"start": nodes["start"]})
        builder.add_edge("start", next(iter(transitions)))
    else:  # the state of the first page
        add_routed_node(builder, "start", nodes["start"], after_start, path_map(transitions))
    for name in transitions:
        choices = path_map(("execute", name, *ends), {"execute": "call", name: "answer refused"})
        add_routed_node(builder, name, nodes[name], after_choice, choices)
    add_routed_node(builder, "execute", nodes["execute"], route, execute_edges)  # the new page's state
    add_nodes(builder, {name: nodes[name] for name in ends})
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
        "transitions": state.get("transitions", 0),
        "backup_used": bool(state.get("backup_used", False)),
        "examined": len(state.get("buffer", [])),
        "backup_problem": state.get("backup_problem", ""),
    }


def structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``introspect view``: the states visited so far and the buffer of examined items."""
    path: list[str] = []
    for values in states:
        if values.get("laser_state") and (not path or path[-1] != values["laser_state"]):
            path.append(values["laser_state"])
    return [("state path", " -> ".join(path)), ("buffer", without_pages(states[-1].get("buffer")))]


def introspection(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``introspect export --format steps``: the state the page was in and the items examined."""
    values = states[-1]
    return {
        "laser_state": values.get("laser_state") or "",
        "examined": [item.get("title", "") for item in values.get("buffer") or []],
    }


def backtracked(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """The step executed a call that goes back to an earlier state (a tool that ``backtracks``)."""
    name = (before.get("call") or {}).get("name")
    return any(
        tool.name == name and tool.backtracks
        for space in SPACES.values()
        for here in space.states
        for tool in here.tools
    )


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
    paper_model="openai:gpt-4-0613",
    context=LaserContext,
    result=result,
    narrate=narrate,
    studio_graphs={"laser": "graph"},
    baselines={
        "LASER - backup (Table 1)": "--set backup=false",
        "text generation instead of function calls (Table 3)": "--set tool_mode=json",
    },
    view=View(structures=structures, introspection=introspection),
    report=Report(tables=report.tables, figures=report.figures),
    prompts=SHIPPED.folder("laser"),
    bound=laser_bound.bound,
    verdicts=(MATCHES,),
    base_agent=BaseAgent({"backup": False}, "the backup (buy the best examined item when the steps run out)"),
    interventions=(
        Intervention(
            "backtrack",
            "execute",
            {"backtracking": False},
            "go back to an earlier state (Prev, Back_to_Search) to recover (without it they are not offered)",
            fired=backtracked,
        ),
        Intervention(
            "backup",
            "backup",
            {"backup": False},
            "out of steps, buy the best item examined (the run without it stops unbought at the cap)",
        ),
    ),
)
