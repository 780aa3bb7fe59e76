"""A node that routes itself (graphs.edges.add_routed_node) goes where the same router goes as a
conditional edge: it reads the state with the node's update folded in by the state's reducers,
and a thread checkpointed under one resumes under the other."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from graphs.edges import add_nodes, add_routed_node, inline, path_map
from nodes.runtime.channels import edit, log, record


class Walk(TypedDict, total=False):
    notes: Annotated[list[str], record()]  # written as edits
    seen: Annotated[list[str], log()]
    total: Annotated[int, operator.add]
    last: str
    route: list[str]  # the router's answers, in order (written by the nodes)


async def step(state: Walk, runtime: Runtime[None], config: RunnableConfig) -> dict[str, Any]:
    notes = state.get("notes") or []
    return {
        "notes": edit(notes, [*notes[-1:], f"n{len(notes)}"]),  # drops all but the last, adds one
        "seen": [f"s{len(state.get('seen') or [])}"],
        "total": 3,
        "last": f"l{state.get('total', 0)}",
    }


async def tail(state: Walk, runtime: Runtime[None], config: RunnableConfig) -> dict[str, Any]:
    return {"last": "tail"}


def router(state: Walk, runtime: Runtime[None]) -> str:
    """Reads every field as the node's update leaves it: a wrong fold takes another way."""
    answer = "step" if state["total"] < 9 and len(state["seen"]) < 5 else "tail"
    return answer if state["notes"] and state["last"].startswith("l") else "broken"


def walk_graph(routed: bool, checkpointer: Any = None, before: tuple[str, ...] = ()) -> Any:
    builder = StateGraph(Walk)
    targets = path_map(("step", "tail", "broken"), {"tail": "to the tail"})
    if routed:
        add_routed_node(builder, "step", step, router, targets)
    else:
        add_nodes(builder, {"step": step})
        builder.add_conditional_edges("step", inline(router), targets)
    add_nodes(builder, {"tail": tail, "broken": tail})
    builder.add_edge(START, "step")
    builder.add_edge("tail", END)
    builder.add_edge("broken", END)
    return builder.compile(checkpointer=checkpointer, interrupt_before=list(before))


async def _path(graph: Any, config: dict[str, Any], graph_input: Any) -> list[str]:
    return [node async for chunk in graph.astream(graph_input, config, stream_mode="updates") for node in chunk]


async def test_a_routed_node_goes_where_its_conditional_edge_goes():
    paths = {}
    for routed in (False, True):
        graph = walk_graph(routed, InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        paths[routed] = await _path(graph, config, {"notes": ["a", "b"]})
        assert (await graph.aget_state(config)).values["total"] == 9
    assert paths[True] == paths[False] == ["step", "step", "step", "tail"]


def test_a_routed_node_draws_the_edges_of_its_path_map():
    edges = {(e.source, e.target, e.data) for e in walk_graph(True).get_graph().edges}
    assert ("step", "tail", "to the tail") in edges and ("step", "step", None) in edges  # an unlabelled edge: no label


async def test_a_thread_routed_by_a_conditional_edge_resumes_routed_by_its_node():
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "moved"}}
    paused = await _path(walk_graph(False, saver, before=("tail",)), config, {"notes": ["a"]})
    assert paused == ["step", "step", "step", "__interrupt__"]
    assert await _path(walk_graph(True, saver), config, None) == ["tail"]
