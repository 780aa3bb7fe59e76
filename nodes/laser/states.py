"""The LASER state nodes: each writes a rationale, calls one of its state's functions,
and executes it on WebShop (paper 003, section 2 and Tables 4-8).

Every node returns a partial state update; the next LASER state is read from the page
the env lands on, so a refused action simply leaves the agent where it was, with the
env's feedback in its history.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from graphs.context import Context
from nodes.environment import execute, live_env, release, start_task
from nodes.laser.choose import choose_function, rationale, validate
from nodes.laser.page import Page, has_next, item_ids, laser_state, mark_clicked, option_values, page_of
from nodes.laser.tools import backup_tool, tools_for
from nodes.llm import Caller, caller_for
from nodes.state import RunState

TEMPERATURE = 0.0
CAP = 15  # transitions (paper: the agent is forced to stop at 15)
BACKUP_MARGIN = 2  # the backup purchase starts at CAP - 2 = 13 transitions
DETAIL_PAGES = ("Description", "Features", "Reviews")


class BufferItem(TypedDict):
    """An item examined and not bought, kept for the backup strategy."""

    asin: str
    summary: str
    options: list[str]
    rationale: str
    snapshot: dict[str, Any]


class LaserState(RunState, total=False):
    laser_state: str  # search | results | item
    instruction: str
    page: Page
    history: list[str]
    visited: list[str]
    buffer: list[BufferItem]
    details: dict[str, str]  # description/features/reviews seen for the current item
    transitions: int
    backup_used: bool


def backup_at(context: Context) -> int:
    return context.limit("max_actions", CAP) - BACKUP_MARGIN


async def start(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Reset WebShop to the task's goal; the agent starts in the search state."""
    _, obs, update = await start_task(state, runtime.context, config)
    page = page_of(obs.info)
    return {
        **update,
        "instruction": str(obs.info.get("instruction", "")),
        "goal": str(obs.info.get("instruction", "")),
        "page": page,
        "laser_state": laser_state(page),
        "history": [],
        "visited": [],
        "buffer": [],
        "details": {},
        "transitions": 0,
        "backup_used": False,
    }


def observation_for(state: LaserState) -> str:
    """The observation as LASER shows it: clicked items marked, item details appended."""
    text = state.get("observation", "")
    if state.get("laser_state") == "results":
        return mark_clicked(text, state.get("visited", []))
    if state.get("laser_state") == "item" and state.get("details"):
        extra = "\n\n".join(f"{name.lower()}:\n{body}" for name, body in state["details"].items())
        return f"{text}\n\n{extra}"
    return text


def _call_text(name: str, args: dict[str, Any]) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False)})" if args else name


def _env_actions(name: str, args: dict[str, Any]) -> list[str]:
    """The WebShop actions that carry out a LASER function call."""
    if name == "Search":
        return [f"search[{args['keywords']}]"]
    if name == "select_item":
        return [f"click[{args['item_id']}]"]
    if name == "Buy_Now":
        return [f"click[{value}]" for value in args.get("customization_options") or []] + ["click[Buy Now]"]
    return [f"click[{ {'Next': 'Next >', 'Back_to_Search': 'Back to Search', 'Prev': '< Prev'}.get(name, name)}]"]


async def _run(
    env: Any, state: LaserState, config: RunnableConfig, llm: Caller, actions: list[str], why: str
) -> tuple[dict[str, Any], str]:
    """Execute env actions in order; stop at the first refusal. Returns (update, feedback)."""
    update: dict[str, Any] = {"trajectory": []}
    current = dict(state)
    for action in actions:
        result, step_update = await execute(
            env, current, config, action, node=state.get("laser_state", ""), caller=llm, rationale=why
        )
        update["trajectory"] = update["trajectory"] + step_update.pop("trajectory")
        update.update(step_update)
        current.update(step_update)
        update["page"] = page_of(result.observation.info)
        if not result.info.get("valid", True):
            return update, str(result.info.get("feedback", "invalid action"))
    return update, ""


async def _step(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """One LASER step in the current state (shared by the three state nodes)."""
    ctx = runtime.context
    here = state["laser_state"]
    page = state.get("page", {})
    llm = caller_for(ctx, state, TEMPERATURE)
    observation = observation_for(state)
    tools = tools_for(here, item_ids=item_ids(page), option_values=option_values(page), has_next=has_next(page))
    why = await rationale(llm, prompts.load(f"laser/{here}_state"), observation, state.get("history", []))
    choice = await choose_function(llm, observation, why, tools, ctx.tool_mode)
    transitions = int(state.get("transitions", 0)) + 1
    if choice.name is None:
        note = f"Rationale: {why}\nAction: none (the answer was refused: {choice.problem})"
        return {"usage": llm.usage, "transitions": transitions, "history": [*state.get("history", []), note]}

    env = await live_env(state, ctx, config)
    update: dict[str, Any] = {"usage": llm.usage, "transitions": transitions}
    visited = list(state.get("visited", []))
    buffer = list(state.get("buffer", []))
    details = dict(state.get("details", {}))
    if choice.name in DETAIL_PAGES:
        # Read the sub-page, keep its text in the item state, and return to the item page.
        run, feedback = await _run(env, state, config, llm, [f"click[{choice.name}]"], why)
        if not feedback:
            details[choice.name] = run.get("observation", "")
            back, feedback = await _run(env, {**state, **run}, config, llm, ["click[< Prev]"], why)
            run = {**run, **back, "trajectory": run["trajectory"] + back["trajectory"]}
    else:
        if choice.name in ("Prev", "Back_to_Search") and here == "item":
            buffer.append(BufferItem(
                asin=page.get("asin", ""), summary=state.get("observation", "")[:600],
                options=option_values(page), rationale=why, snapshot=state.get("env_snapshot", {}),
            ))
        run, feedback = await _run(env, state, config, llm, _env_actions(choice.name, choice.args), why)
    update.update(run)
    new_page = run.get("page", page)
    new_state = laser_state(new_page)
    if choice.name == "select_item" and not feedback:
        visited.append(str(choice.args["item_id"]))
    if choice.name == "select_item" or new_state != "item":
        details = {}  # details belong to the item being examined
    note = f"Rationale: {why}\nAction: {_call_text(choice.name, choice.args)}"
    if feedback:
        note += f"\nFeedback: {feedback}"
    update.update({
        "laser_state": new_state,
        "visited": visited,
        "buffer": buffer,
        "details": details,
        "history": [*state.get("history", []), note],
    })
    return update


async def search(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Search state (Table 4): write a query."""
    return await _step(state, runtime, config)


async def results(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Results state (Table 5): open an item, go to the next page, or back to search."""
    return await _step(state, runtime, config)


async def item(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Item state (Table 6): check details, buy, or go back to the results."""
    return await _step(state, runtime, config)


def _buffer_listing(buffer: list[BufferItem]) -> str:
    return "\n\n".join(
        f"item_id: {entry['asin']}\noptions: {', '.join(entry['options']) or 'none'}\n{entry['summary']}\n"
        f"why it was not bought: {entry['rationale']}"
        for entry in buffer
    )


async def backup(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """The backup strategy: out of steps, buy the best examined item from the buffer."""
    ctx = runtime.context
    buffer = state.get("buffer", [])
    llm = caller_for(ctx, state, TEMPERATURE)
    ids = list(dict.fromkeys(entry["asin"] for entry in buffer))
    values = list(dict.fromkeys(v for entry in buffer for v in entry["options"]))
    tool = backup_tool(ids, values)
    system = prompts.render("laser/backup", instruction=state.get("instruction", ""), items=_buffer_listing(buffer))
    reply = await llm([SystemMessage(system), HumanMessage("Choose the item to buy.")], tools=[tool], tool_choice="any")
    call = reply.tool_calls[0] if reply.tool_calls else None
    args = dict(call["args"]) if call else {}
    if call is None or validate("buy_backup", args, [tool]):
        args = {"item_id": buffer[-1]["asin"]}  # an unusable answer falls back to the last examined item
    entry = next(e for e in reversed(buffer) if e["asin"] == args["item_id"])
    env = await live_env(state, ctx, config)
    obs = await env.restore(entry["snapshot"])
    restored = {**state, "env_snapshot": entry["snapshot"], "page": page_of(obs.info)}
    actions = _env_actions("Buy_Now", {"customization_options": args.get("customization_options") or []})
    run, feedback = await _run(env, restored, config, llm, actions, "backup strategy")
    note = f"Rationale: backup strategy {reply.text}\nAction: {_call_text('Buy_Now', args)}"
    if feedback:
        note += f"\nFeedback: {feedback}"
    return {
        **run,
        "usage": llm.usage,
        "backup_used": True,
        "transitions": int(state.get("transitions", 0)) + 1,
        "history": [*state.get("history", []), note],
    }


async def finish(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """End of the episode: why it ended, and the env released."""
    await release(state, config)
    if state.get("done"):
        reason = "bought (backup)" if state.get("backup_used") else "bought"
    else:
        reason = f"step cap ({runtime.context.limit('max_actions', CAP)} transitions) without a purchase"
    return {"stop_reason": reason}
