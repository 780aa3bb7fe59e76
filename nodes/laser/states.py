"""The LASER state nodes and ``execute`` (paper 003, section 2 and Tables 4-8), over a declared
state space (nodes.laser.space).

Each state node is an ``act`` over its state's tools: it writes a rationale and calls one of its
state's functions (``call`` in state, or None when the answer was refused). As laser_agent.py: an
item examined before is asked again once; a tool with a customisation step (WebShop's Buy_Now) gets
its arguments in that step (nodes.laser.customise); the search state shows the calls made since it
last showed them (``pending_history``; ``history_shown=every_step``: the whole history everywhere). ``execute`` carries
the call out on the env through the tool's actions; the next LASER state is the state the space
classifies the new page into. Steps are counted as the original ``laser_agent.py`` counts them: a
state transition is an executed call of a tool that moves (WebShop: Search, select_item, Next,
Back_to_Search, Prev, Buy_Now); reading a detail page (WebShop's Description, Features, Reviews:
each at most once per item, its text added to the item state) and an answer that was refused are
not transitions.

The nodes are plain functions of the state, the run's settings, its config, the space and (for
those that call the model) the Caller; ``nodes`` binds them to a graph's ``Picker``
(nodes.laser.spaces: the space of each run, fixed for a graph built for one space, else by
``Context.env``) and makes the model-calling ones ``model_node``s.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

import prompts
from envs.base import Env
from nodes.laser.choose import Choice, choose_function, observed, rationale, state_prompt
from nodes.laser.context import LaserContext
from nodes.laser.customise import customised
from nodes.laser.observe import (
    TARGET_KEYS,
    detail_text,
    item_observation,
    page_observation,
)
from nodes.laser.space import FINISH, Page, StateSpace, Tool
from nodes.runtime.channels import current, edit, record
from nodes.runtime.environment import execute, live_env, release, start_task
from nodes.runtime.llm import Caller
from nodes.runtime.node import Update
from nodes.runtime.state import RunState, updated
from nodes.runtime.verdicts import Place

BACKUP_MARGIN = 2  # the backup purchase starts 2 transitions before the cap (13)
REFUSAL_LIMIT = 3  # consecutive steps whose answer was refused end the exploration
HISTORY_HEADER = "History:"  # laser_agent.py's history = ['History:'] + its calls
MATCHES = Place(
    "matches",
    "item",
    "the item perfectly matches the instruction: in the item state the agent buys it (Buy_Now); the purchase's "
    "outcome is the run's",
)


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
    laser_state: str  # the state the page is in (a state of the space)
    call: Call | None  # the last state node's choice (None: its answer was refused)
    instruction: str
    page: Annotated[Page, current()]
    history: Annotated[list[str], record()]
    buffer: Annotated[list[BufferItem], record()]
    details: Annotated[dict[str, str], record()]  # detail page -> its text, for the item being examined
    target: dict[str, Any]  # the last target call's arguments (Search: keywords, max_price)
    pending_history: list[str]  # the original's history: the calls since the history state showed it
    transitions: int
    refusals: int  # consecutive steps whose answer was refused
    backup_used: bool
    backup_problem: str  # why the backup strategy ended nothing


def backup_at(context: LaserContext) -> int:
    return context.max_actions - BACKUP_MARGIN


def current_item(state: LaserState, space: StateSpace) -> BufferItem | None:
    """The item the agent is examining, as a buffer entry (None outside the item state)."""
    page = state.get("page", {})
    if state.get("laser_state") != space.item_state or not page.get("asin"):
        return None
    return BufferItem(
        asin=page["asin"],
        title=page.get("title", ""),
        price=page.get("price", ""),
        rationale="",
        snapshot=state.get("env_snapshot", {}),
    )


def candidates(state: LaserState, space: StateSpace) -> list[BufferItem]:
    """What the backup strategy chooses from: the examined items, and the one being examined."""
    found = {entry["asin"]: entry for entry in state.get("buffer", [])}
    here = current_item(state, space)
    if here is not None and here["asin"] not in found:
        found[here["asin"]] = here
    return list(found.values())


async def start(state: LaserState, context: LaserContext, config: RunnableConfig, space: StateSpace) -> Update:
    """Reset the env to the task's goal; the agent starts in the state of the first page."""
    _, obs, update = await start_task(state, context, config)
    page = space.classify(obs)
    return {
        **update,
        "instruction": str(obs.info["goal"]),
        "goal": str(obs.info["goal"]),
        "page": page,
        "laser_state": page["state"],
        "call": None,
        "history": [],
        "buffer": [],
        "details": {},
        "target": {},
        "pending_history": [],
        "transitions": 0,
        "refusals": 0,
        "backup_used": False,
        "backup_problem": "",
    }


def observation_for(state: LaserState, space: StateSpace) -> str:
    """The observation the current state shows the model (see nodes.laser.observe) after
    "Current observation:"; the task's instruction above the page when the page does not show it."""
    text = state.get("observation", "")
    if not space.shows_goal:
        text = f"Instruction:\n{state.get('instruction', '')}\n\n{text}"
    if state.get("laser_state") == space.item_state:
        return observed(item_observation(text, state.get("details", {}), state.get("target", {})))
    return observed(page_observation(text))


def with_history(
    state: LaserState, space: StateSpace, context: LaserContext, observation: str
) -> tuple[str, str, dict[str, Any]]:
    """(the rationale call's user message, the action call's observation, the state update).

    ``history_shown=after_backtrack`` (laser_agent.py): in the history state, the calls since it
    last showed them follow the page under "History:" in both calls, and are then forgotten;
    ``every_step`` (the paper): the rationale prompt shows the whole history in every state."""
    if context.history_shown == "every_step":
        history = "\n".join(state.get("history", [])) or "None"
        return prompts.render("laser/observation", observation=observation, history=history), observation, {}
    pending = state.get("pending_history", [])
    if state["laser_state"] != space.history_state or not pending:
        return observation, observation, {}
    shown = "\n".join([observation, HISTORY_HEADER, *pending])
    return shown, shown, {"pending_history": []}


def logged_call(state: LaserState, tool: Tool, call: Call) -> list[str]:
    """The pending history with ``call`` added as laser_agent.py writes it ("Rationale0: ...",
    "Action0: Search(keywords='...')")."""
    pending = list(state.get("pending_history", []))
    number = len(pending) // 2
    action = tool.logged(call["args"]) if tool.logged else call_text(call["name"], call["args"])
    return [*pending, f"Rationale{number}: {call['rationale']}", f"Action{number}: {action}"]


def call_text(name: str, args: dict[str, Any]) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False)})" if args else name


async def run_actions(
    env: Env,
    state: LaserState,
    config: RunnableConfig,
    llm: Caller,
    space: StateSpace,
    actions: list[str],
    why: str,
    node: str,
    tolerates_refusals: bool = False,
) -> tuple[dict[str, Any], str]:
    """Execute env actions in order; stop at the first refusal (``tolerates_refusals``: at the
    last action's only, the env ignoring the others). Returns (update, feedback)."""
    update: dict[str, Any] = {"trajectory": []}
    current = state
    for position, action in enumerate(actions, 1):
        result, step_update = await execute(env, current, config, action, node=node, caller=llm, rationale=why)
        update["trajectory"] = update["trajectory"] + step_update.pop("trajectory")
        update.update(step_update)
        current = updated(current, step_update)
        update["page"] = space.classify(result.observation)
        if not result.valid and not (tolerates_refusals and position < len(actions)):
            return update, result.feedback or "invalid action"
    return update, ""


def opens_examined(state: LaserState, space: StateSpace, here: str, choice: Choice) -> bool:
    """Whether ``choice`` opens an item examined before, in this search or an earlier one (the
    original's "items that have been clicked before do not match" asks the model again)."""
    if choice.name is None:
        return False
    examines = space.tool(here, choice.name).examines
    return bool(examines) and str(choice.args.get(examines)) in {entry["asin"] for entry in state.get("buffer", [])}


async def act(state: LaserState, ctx: LaserContext, space: StateSpace, llm: Caller) -> Update:
    """A state node: a rationale and one function of the current state's tools (Tables 4-6)."""
    here = space.state(state["laser_state"])
    page = state.get("page", {})
    user, observation, update = with_history(state, space, ctx, observation_for(state, space))
    own_step = ctx.customise == "own_step"
    tools = space.tools_for(
        here.name, page, read=state.get("details", {}), customise=own_step, backtracking=ctx.backtracking
    )
    why = await rationale(llm, state_prompt(here.instruction, here.layout), user)
    enums = ctx.argument_enums
    choice = await choose_function(llm, observation, why, tools, ctx.tool_mode, here.layout, enums=enums)
    if opens_examined(state, space, here.name, choice):  # asked once more, as laser_agent.py does
        reselect = prompts.render("laser/reselect")
        choice = await choose_function(llm, observation, reselect, tools, ctx.tool_mode, here.layout, enums=enums)
    plan = space.tool(here.name, choice.name).customise if choice.name else None
    if own_step and plan is not None and choice.name is not None:  # the original's customisation step
        choice = await customised(llm, observation, page, choice.name, plan, ctx.tool_mode, enums=enums)
    if choice.name is None:
        note = f"Rationale: {why}\nAction: none (the answer was refused: {choice.problem})"
        history = list(state.get("history", []))
        return {
            **update,
            "call": None,
            "refusals": state.get("refusals", 0) + 1,
            "history": edit(history, [*history, note]),
        }
    why = choice.rationale or why
    judged(llm, space, here.name, choice.name)
    return {**update, "call": Call(name=choice.name, args=choice.args, rationale=why, state=here.name)}


def judged(llm: Caller, space: StateSpace, here: str, name: str) -> None:
    """The verdict a finishing call in the item state gives (``MATCHES``: Buy_Now, "if the current
    item perfectly matches the user instruction"). Leaving an item says it does not match, but the
    item left is never bought, so no outcome tells whether that was right: it is not recorded."""
    if here == space.item_state and space.tool(here, name).to == FINISH:
        llm.verdict(MATCHES, name, True)


async def execute_call(
    state: LaserState, ctx: LaserContext, config: RunnableConfig, space: StateSpace, llm: Caller
) -> Update:
    """Carry out the state node's call: a detail page is read (and the agent goes back to the
    item), any other function becomes its tool's env actions; the new page gives the next state."""
    call = state["call"]
    assert call is not None  # routed here only with a call to carry out
    name, why = call["name"], call["rationale"]
    tool = space.tool(call["state"], name)
    page = state.get("page", {})
    details = dict(state.get("details", {}))
    env = await live_env(state, ctx, config)
    buffer = list(state.get("buffer", []))
    target = dict(state.get("target", {}))
    actions = tool.actions(call["args"], page)
    run, feedback = await run_actions(env, state, config, llm, space, actions, why, "execute", tool.tolerates_refusals)
    if tool.reads_then and not feedback:  # keep the detail page's text, go back to the item
        text = detail_text(run["page"].get("section", ""), ctx.detail_text)
        back, feedback = await run_actions(
            env, updated(state, run), config, llm, space, list(tool.reads_then), why, "execute"
        )
        run = {**run, **back, "trajectory": run["trajectory"] + back["trajectory"]}
        if not feedback:
            details[name] = text
    elif not feedback:
        leaving = current_item(state, space) if tool.to not in (space.item_state, FINISH) else None
        if leaving is not None:
            buffer = [b for b in buffer if b["asin"] != leaving["asin"]] + [{**leaving, "rationale": why}]
        if tool.target:
            target = {key: call["args"][key] for key in TARGET_KEYS if key in call["args"]}
    new_page = run.get("page", page)
    if call["state"] != space.item_state or new_page["state"] != space.item_state:
        details = {}  # details belong to the item being examined
    note = f"Rationale: {why}\nAction: {call_text(name, call['args'])}"
    if feedback:
        note += f"\nFeedback: {feedback}"
    moved = not feedback and not tool.reads_then
    history = list(state.get("history", []))
    if moved and tool.to != FINISH and ctx.history_shown == "after_backtrack":
        run["pending_history"] = logged_call(state, tool, call)
    update = {
        **run,
        "laser_state": new_page["state"],
        "target": target,
        "transitions": state.get("transitions", 0) + (1 if moved else 0),
        "refusals": 0 if not feedback else state.get("refusals", 0) + 1,
        "history": edit(history, [*history, note]),
    }
    if buffer != state.get("buffer", []):
        update["buffer"] = edit(state.get("buffer", []), buffer)
    if details != state.get("details", {}):  # detail texts are checkpointed when they change only
        update["details"] = details
    return update


def stop_reason(state: LaserState, context: LaserContext, space: StateSpace) -> str:
    """Why the episode ended, in words that say what happened."""
    ended = space.ended
    if state.get("done"):
        return f"{ended} (backup)" if state.get("backup_used") else ended
    if state.get("backup_problem"):
        return f"not {ended}: the backup strategy failed ({state['backup_problem']})"
    if state.get("refusals", 0) >= REFUSAL_LIMIT:
        return f"not {ended}: the model's answers were refused {REFUSAL_LIMIT} steps in a row"
    cap = context.max_actions
    if space.backup is None:
        return f"not {ended}: step cap ({cap} transitions) reached (the space declares no backup strategy)"
    if not context.backup:
        return f"not {ended}: step cap ({cap} transitions) reached, backup strategy off"
    return f"not {ended}: step cap ({cap} transitions) reached with no examined item for the backup strategy"


async def finish(state: LaserState, context: LaserContext, config: RunnableConfig, space: StateSpace) -> Update:
    """End of the episode: why it ended, and the env released."""
    await release(state, config)
    return {"stop_reason": stop_reason(state, context, space)}
