"""ReAct on WebShop: ``think`` asks the model for a thought and an action, ``execute`` runs the
action, and the loop goes back to ``think`` until the env says done (Buy Now) or the step cap
(``max_actions``) is reached. Everything the framework needs of it is in ``METHOD``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from envs.base import ActionParseError
from graphs.edges import inline
from graphs.method import Method, Report, View
from nodes.runtime.environment import env_interface, execute, live_env, release, start_task
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import Update, model_node
from nodes.runtime.state import RunState
from prompts import Templates
from tests.support.react_method import report
from tests.support.react_method.context import ReactContext

PROMPTS = Templates(Path(__file__).resolve().parent / "prompts")


class ReactState(RunState, total=False):
    thoughts: list[str]
    thought: str
    action: str


async def start(state: ReactState, runtime: Runtime[ReactContext], config: RunnableConfig) -> dict[str, Any]:
    _, obs, update = await start_task(state, runtime.context, config)
    return {**update, "goal": str(obs.info["goal"]), "thoughts": []}


@model_node(caller_for)
async def think(state: ReactState, runtime: Runtime[ReactContext], config: RunnableConfig, llm: Caller) -> Update:
    interface = await env_interface(runtime.context)
    history = "\n".join(f"{s['action']} -> reward {s['reward']}" for s in state.get("trajectory") or []) or "None"
    reply = await llm(
        [
            SystemMessage(PROMPTS.render("system", grammar=interface.grammar)),
            HumanMessage(PROMPTS.render("step", goal=state["goal"], history=history, observation=state["observation"])),
        ]
    )
    text = str(reply.content)
    thought = text.split("Action:")[0].removeprefix("Thought:").strip()
    try:
        action = interface.parse_action(text.split("Action:")[-1])
    except ActionParseError:
        action = text.strip()  # the env refuses it and says why
    return {"thought": thought, "action": action, "thoughts": [*state.get("thoughts", []), thought]}


@model_node(caller_for)
async def execute_action(
    state: ReactState, runtime: Runtime[ReactContext], config: RunnableConfig, llm: Caller
) -> Update:
    """Runs the action; a judged env's scoring calls the model through ``llm``."""
    env = await live_env(state, runtime.context, config)
    _, update = await execute(
        env, state, config, state["action"], node="execute", caller=llm, rationale=state.get("thought", "")
    )
    return update


async def finish(state: ReactState, runtime: Runtime[ReactContext], config: RunnableConfig) -> dict[str, Any]:
    await release(state, config)
    return {"stop_reason": "bought" if state.get("done") else "step cap"}


def after_execute(state: ReactState, runtime: Runtime[ReactContext]) -> str:
    capped = int(state.get("actions", 0)) >= runtime.context.max_actions
    return "finish" if state.get("done") or capped else "think"


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(ReactState, context_schema=ReactContext)
    builder.add_node("start", start)
    builder.add_node("think", think)
    builder.add_node("execute", execute_action)
    builder.add_node("finish", finish)
    builder.add_edge(START, "start")
    builder.add_edge("start", "think")
    builder.add_edge("think", "execute")
    builder.add_conditional_edges("execute", inline(after_execute), {"think": "think", "finish": "finish"})
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="react")


def structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    return [("thoughts so far", [{"thought": t} for t in states[-1].get("thoughts") or []])]


def narrate(node: str, update: dict[str, Any]) -> str | None:
    return update.get("thought") if node == "think" else None


graph = build_graph()

METHOD = Method(
    name="react",
    title="ReAct",
    summary="think, act, observe",
    paper="Yao et al. 2023",
    build_graph=build_graph,
    graph=graph,
    envs=("webshop",),
    paper_envs=("webshop",),
    context=ReactContext,
    result=lambda state: {"thoughts": len(state.get("thoughts") or [])},
    narrate=narrate,
    studio_graphs={"react": "graph"},
    view=View(structures=structures),
    report=Report(tables=report.tables),
    prompts=PROMPTS,
)
