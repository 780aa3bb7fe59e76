"""The LASER state nodes and ``execute`` (paper 003, section 2 and Tables 4-8).

Each state node (``search``, ``results``, ``item``) is an ``act`` over its state's tools: it
writes a rationale and calls one of its state's functions (``call`` in state, or None when
the answer was refused). ``execute`` carries the call out on WebShop; the next LASER state
is read from the page the env lands on. Steps are counted as the original ``laser_agent.py`` counts them: a state
transition is an executed Search, select_item, Next, Back_to_Search, Prev or Buy_Now;
reading a detail page (Description, Features, Reviews: each at most once per item, its
text added to the item state) and an answer that was refused are not transitions.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from nodes.channels import current, edit, record
from nodes.context import Context
from nodes.environment import execute, live_env, release, start_task
from nodes.laser.choose import choose_function, rationale
from nodes.laser.observe import (
    TARGET_KEYS,
    detail_text,
    item_observation,
    page_observation,
)
from nodes.laser.page import Page, laser_state, page_of
from nodes.laser.tools import DETAIL_PAGES, tools_for
from nodes.llm import Caller, caller_for
from nodes.state import RunState

# The paper's settings: at most 15 transitions (the agent is forced to stop), greedy decoding.
DEFAULTS: dict[str, Any] = {"max_actions": 15, "temperature": 0.0}
BACKUP_MARGIN = 2  # the backup purchase starts 2 transitions before the cap (13)
REFUSAL_LIMIT = 3  # consecutive steps whose answer was refused end the exploration
NAVIGATION = {"Next": "Next >", "Back_to_Search": "Back to Search", "Prev": "< Prev"}


class BufferItem(TypedDict):
    """An item examined and not bought, kept for the backup strategy."""

    asin: str
    title: str
    price: str
    rationale: str
    snapshot: dict[str, Any]  # the env on the item's page, to reopen it


class Call(TypedDict):
    """The function a state node chose, waiting for ``execute``."""

    name: str
    args: dict[str, Any]
    rationale: str
    state: str  # the LASER state it was chosen in


class LaserState(RunState, total=False):
    laser_state: str  # search | results | item
    call: Call | None  # the last state node's choice (None: its answer was refused)
    instruction: str
    page: Annotated[Page, current()]
    history: Annotated[list[str], record()]
    buffer: Annotated[list[BufferItem], record()]
    details: Annotated[dict[str, str], record()]  # detail page -> its text, for the item being examined
    target: dict[str, Any]  # the last Search's arguments (keywords, max_price)
    transitions: int
    refusals: int  # consecutive steps whose answer was refused
    backup_used: bool
    backup_problem: str  # why the backup strategy bought nothing


def backup_at(context: Context) -> int:
    return context.limit("max_actions", DEFAULTS["max_actions"]) - BACKUP_MARGIN


def current_item(state: LaserState) -> BufferItem | None:
    """The item the agent is examining, as a buffer entry (None outside the item state)."""
    page = state.get("page", {})
    if state.get("laser_state") != "item" or not page.get("asin"):
        return None
    return BufferItem(asin=page["asin"], title=page.get("title", ""), price=page.get("price", ""),
                      rationale="", snapshot=state.get("env_snapshot", {}))


def candidates(state: LaserState) -> list[BufferItem]:
    """What the backup strategy chooses from: the examined items, and the one being examined."""
    found = {entry["asin"]: entry for entry in state.get("buffer", [])}
    here = current_item(state)
    if here is not None and here["asin"] not in found:
        found[here["asin"]] = here
    return list(found.values())


async def start(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Reset WebShop to the task's goal; the agent starts in the search state."""
    _, obs, update = await start_task(state, runtime.context, config)
    page = page_of(obs.info)
    return {
        **update,
        "instruction": str(obs.info["goal"]),
        "goal": str(obs.info["goal"]),
        "page": page,
        "laser_state": laser_state(page),
        "call": None,
        "history": [],
        "buffer": [],
        "details": {},
        "target": {},
        "transitions": 0,
        "refusals": 0,
        "backup_used": False,
        "backup_problem": "",
    }


def observation_for(state: LaserState) -> str:
    """The observation the current state shows the model (see nodes.laser.observe)."""
    text = state.get("observation", "")
    if state.get("laser_state") == "item":
        return item_observation(text, state.get("details", {}), state.get("target", {}))
    return page_observation(text)


def call_text(name: str, args: dict[str, Any]) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False)})" if args else name


def env_actions(name: str, args: dict[str, Any]) -> list[str]:
    """The WebShop actions that carry out a LASER function call."""
    if name == "Search":
        return [f"search[{args['keywords']}]"]
    if name == "select_item":
        return [f"click[{args['item_id']}]"]
    if name == "Buy_Now":  # one value per customization type, then the purchase
        return [f"click[{value}]" for value in args.values()] + ["click[Buy Now]"]
    return [f"click[{NAVIGATION.get(name, name)}]"]


async def run_actions(
    env: Any, state: LaserState, config: RunnableConfig, llm: Caller, actions: list[str], why: str, node: str
) -> tuple[dict[str, Any], str]:
    """Execute env actions in order; stop at the first refusal. Returns (update, feedback)."""
    update: dict[str, Any] = {"trajectory": []}
    current = dict(state)
    for action in actions:
        result, step_update = await execute(env, current, config, action, node=node, caller=llm, rationale=why)
        update["trajectory"] = update["trajectory"] + step_update.pop("trajectory")
        update.update(step_update)
        current.update(step_update)
        update["page"] = page_of(result.observation.info)
        if not result.info.get("valid", True):
            return update, str(result.info.get("feedback", "invalid action"))
    return update, ""


async def _read_detail(
    env: Any, state: LaserState, config: RunnableConfig, llm: Caller, name: str, why: str, mode: str
) -> tuple[dict[str, Any], str, str]:
    """Open a detail page, keep its text, and go back to the item: (update, text, feedback)."""
    run, feedback = await run_actions(env, state, config, llm, [f"click[{name}]"], why, "execute")
    if feedback:
        return run, "", feedback
    text = detail_text(run["page"].get("section", ""), mode)
    back, feedback = await run_actions(env, {**state, **run}, config, llm, ["click[< Prev]"], why, "execute")
    return {**run, **back, "trajectory": run["trajectory"] + back["trajectory"]}, text, feedback


async def _choose(state: LaserState, runtime: Runtime[Context]) -> dict[str, Any]:
    """A rationale and one function of the current state's tools (shared by the state nodes)."""
    ctx = runtime.context
    here = state["laser_state"]
    page = state.get("page", {})
    llm = caller_for(ctx, state, DEFAULTS["temperature"])
    observation = observation_for(state)
    tools = tools_for(here, item_ids=page.get("item_ids", []), options=page.get("options", {}),
                      read=state.get("details", {}))
    why = await rationale(llm, prompts.render(f"laser/{here}_state"), observation, state.get("history", []))
    choice = await choose_function(llm, observation, why, tools, ctx.tool_mode)
    if choice.name is None:
        note = f"Rationale: {why}\nAction: none (the answer was refused: {choice.problem})"
        history = list(state.get("history", []))
        return {"usage": llm.usage, "call": None, "refusals": int(state.get("refusals", 0)) + 1,
                "history": edit(history, [*history, note])}
    return {"usage": llm.usage, "call": Call(name=choice.name, args=choice.args, rationale=why, state=here)}


async def search(state: LaserState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Search state (Table 4): write a query."""
    return await _choose(state, runtime)


async def results(state: LaserState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Results state (Table 5): open an item, go to the next page, or back to search."""
    return await _choose(state, runtime)


async def item(state: LaserState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Item state (Table 6): check details, buy, or go back to the results."""
    return await _choose(state, runtime)


async def execute_call(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Carry out the state node's call on WebShop: a detail page is read (and the agent goes back
    to the item), any other function becomes its WebShop actions; the new page gives the next state."""
    ctx = runtime.context
    call = state["call"]
    assert call is not None  # routed here only with a call to carry out
    name, why = call["name"], call["rationale"]
    page = state.get("page", {})
    details = dict(state.get("details", {}))
    llm = caller_for(ctx, state, DEFAULTS["temperature"])  # an env judge would ask through it
    env = await live_env(state, ctx, config)
    buffer = list(state.get("buffer", []))
    target = dict(state.get("target", {}))
    if name in DETAIL_PAGES:
        run, text, feedback = await _read_detail(env, state, config, llm, name, why, ctx.detail_text)
        if not feedback:
            details[name] = text
    else:
        run, feedback = await run_actions(env, state, config, llm, env_actions(name, call["args"]), why, "execute")
        leaving = current_item(state) if name in ("Prev", "Back_to_Search") and not feedback else None
        if leaving is not None:
            buffer = [b for b in buffer if b["asin"] != leaving["asin"]] + [{**leaving, "rationale": why}]
        if name == "Search" and not feedback:
            target = {key: call["args"][key] for key in TARGET_KEYS if key in call["args"]}
    new_page = run.get("page", page)
    if name == "select_item" or laser_state(new_page) != "item":
        details = {}  # details belong to the item being examined
    note = f"Rationale: {why}\nAction: {call_text(name, call['args'])}"
    if feedback:
        note += f"\nFeedback: {feedback}"
    moved = not feedback and name not in DETAIL_PAGES
    history = list(state.get("history", []))
    update = {
        **run,
        "usage": llm.usage,
        "laser_state": laser_state(new_page),
        "target": target,
        "transitions": int(state.get("transitions", 0)) + (1 if moved else 0),
        "refusals": 0 if not feedback else int(state.get("refusals", 0)) + 1,
        "history": edit(history, [*history, note]),
    }
    if buffer != state.get("buffer", []):
        update["buffer"] = edit(state.get("buffer", []), buffer)
    if details != state.get("details", {}):  # detail texts are checkpointed when they change only
        update["details"] = details
    return update


def stop_reason(state: LaserState, context: Context) -> str:
    """Why the episode ended, in words that say what happened."""
    if state.get("done"):
        return "bought (backup)" if state.get("backup_used") else "bought"
    if state.get("backup_problem"):
        return f"not bought: the backup strategy failed ({state['backup_problem']})"
    if int(state.get("refusals", 0)) >= REFUSAL_LIMIT:
        return f"not bought: the model's answers were refused {REFUSAL_LIMIT} steps in a row"
    cap = context.limit("max_actions", DEFAULTS["max_actions"])
    if not context.backup:
        return f"not bought: step cap ({cap} transitions) reached, backup strategy off"
    return f"not bought: step cap ({cap} transitions) reached with no examined item for the backup strategy"


async def finish(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """End of the episode: why it ended, and the env released."""
    await release(state, config)
    return {"stop_reason": stop_reason(state, runtime.context)}
