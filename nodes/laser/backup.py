"""LASER's backup strategy: out of steps, buy the best item examined (paper 003, section 2).

As the original ``back_up_agent`` does, in two decisions:
1. the examined items (the buffer, and the item being examined when the budget ran out)
   are shown as a results page; the model writes a rationale and calls ``select_item``
   with one of their ids;
2. that item's page is opened again (its env snapshot restored), the model writes a
   rationale for its customization and calls ``Buy_Now`` with one value per customization
   type of *that* item; the values are clicked, then Buy Now.
Each call is validated (an id not examined, a missing type, a value the item does not
offer) and asked again with the reason, as every LASER call is; if no valid answer comes,
nothing is bought and ``backup_problem`` says why.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from nodes.channels import edit
from nodes.context import Context
from nodes.environment import sync_env
from nodes.laser.choose import ATTEMPTS, choose_function, rationale
from nodes.laser.observe import backup_listing, item_observation
from nodes.laser.page import page_of
from nodes.laser.states import (
    DEFAULTS,
    LaserState,
    call_text,
    candidates,
    env_actions,
    run_actions,
)
from nodes.laser.tools import buy_tool, select_tool
from nodes.llm import caller_for


async def backup(state: LaserState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Choose an examined item, reopen it, choose its options, buy it."""
    ctx = runtime.context
    llm = caller_for(ctx, state, DEFAULTS["temperature"])
    before = list(state.get("history", []))
    history = list(before)  # the notes this step adds go after ``before``
    choices = candidates(state)
    listing = backup_listing(state.get("instruction", ""), choices)
    why = await rationale(llm, prompts.render("laser/backup_select"), listing, [])
    picked = await choose_function(llm, listing, why, [select_tool([c["asin"] for c in choices])], ctx.tool_mode)
    if picked.name is None:
        problem = f"no valid item choice in {ATTEMPTS} answers: {picked.problem}"
        history.append(f"Backup: {problem}")
        return {"usage": llm.usage, "backup_problem": problem, "history": edit(before, history)}
    entry = next(c for c in choices if c["asin"] == picked.args["item_id"])
    history.append(f"Rationale: backup strategy: {why}\nAction: {call_text('select_item', picked.args)}")

    here: LaserState = {**state, "env_snapshot": entry["snapshot"]}
    env, reopened, _ = await sync_env(here, ctx, config)  # None: the env is on that item already
    if reopened is not None:
        here.update(observation=reopened.text, page=page_of(reopened.info))
    options = here.get("page", {}).get("options", {})
    args: dict[str, Any] = {}
    if any(options.values()):
        observation = item_observation(here.get("observation", ""), {}, state.get("target", {}))
        why = await rationale(llm, prompts.render("laser/backup_buy"), observation, [])
        bought = await choose_function(llm, observation, why, [buy_tool(options, final=True)], ctx.tool_mode)
        if bought.name is None:
            problem = f"no valid options for {entry['asin']} in {ATTEMPTS} answers: {bought.problem}"
            history.append(f"Backup: {problem}")
            return {"usage": llm.usage, "backup_problem": problem, "history": edit(before, history)}
        args = bought.args
    run, feedback = await run_actions(env, here, config, llm, env_actions("Buy_Now", args), why, "backup")
    note = f"Rationale: backup strategy: {why}\nAction: {call_text('Buy_Now', args)}"
    update: dict[str, Any] = {**run, "usage": llm.usage, "history": edit(before, [*history, note])}
    if feedback:
        return {**update, "backup_problem": f"WebShop refused the purchase of {entry['asin']}: {feedback}"}
    return {**update, "backup_used": True}
