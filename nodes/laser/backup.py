"""LASER's backup strategy: out of steps, buy the best item examined (paper 003, section 2).

As the original ``back_up_agent`` does, in two decisions:
1. the examined items (the buffer, and the item being examined when the budget ran out)
   are shown as a results page; the model writes a rationale and calls ``select_item``
   with one of their ids;
2. that item's page is opened again (its env snapshot restored) and shown as it is (the
   original shows the page alone here); its options are asked as the finishing tool's
   customisation step declares (nodes.laser.customise: by default the types, a rationale,
   ``Buy_Now`` with a value per type); the values are clicked, then Buy Now.
Each call is validated (an id not examined, a missing type, a value the item does not
offer) and asked again with the reason, as every LASER call is; if no valid answer comes,
nothing is bought and ``backup_problem`` says why.

The space declares the strategy (``nodes.laser.space.Backup``: its prompts, the choosing function,
the finishing tool); the steps above are WebShop's. A space without one has no backup node.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from nodes.laser.choose import ATTEMPTS, choose_function, observed, rationale, state_prompt
from nodes.laser.context import LaserContext
from nodes.laser.customise import finish_choice
from nodes.laser.observe import backup_listing
from nodes.laser.space import StateSpace
from nodes.laser.states import (
    LaserState,
    call_text,
    candidates,
    run_actions,
)
from nodes.runtime.channels import edit
from nodes.runtime.environment import sync_env
from nodes.runtime.llm import Caller
from nodes.runtime.node import Update


async def backup(
    state: LaserState, ctx: LaserContext, config: RunnableConfig, space: StateSpace, llm: Caller
) -> Update:
    """Choose an examined item, reopen it, choose its options, buy it."""
    plan = space.backup
    assert plan is not None  # routed here only for a space with a backup strategy
    before = list(state.get("history", []))
    history = list(before)  # the notes this step adds go after ``before``
    choices = candidates(state, space)
    listing = observed(backup_listing(state.get("instruction", ""), choices))
    why = await rationale(llm, state_prompt(plan.select, plan.layout), listing)
    choose = [plan.choose([c["asin"] for c in choices])]
    # the examined items stay an enum: the original looks the answer up among them (a KeyError otherwise)
    picked = await choose_function(llm, listing, why, choose, ctx.tool_mode, plan.choose_layout, enums=True)
    if picked.name is None:
        problem = f"no valid item choice in {ATTEMPTS} answers: {picked.problem}"
        history.append(f"Backup: {problem}")
        return {"backup_problem": problem, "history": edit(before, history)}
    entry = next(c for c in choices if c["asin"] == next(iter(picked.args.values())))
    history.append(f"Rationale: backup strategy: {why}\nAction: {call_text(picked.name, picked.args)}")

    here: LaserState = {**state, "env_snapshot": entry["snapshot"]}
    env, reopened, _ = await sync_env(here, ctx, config)  # None: the env is on that item already
    if reopened is not None:
        here.update({"observation": reopened.text, "page": space.classify(reopened)})
    page = here.get("page", {})
    ended = await finish_choice(
        llm,
        here.get("observation", ""),
        page,
        plan.finish,
        ctx.customise,
        ctx.tool_mode,
        enums=ctx.argument_enums,
    )
    if ended.name is None:
        problem = f"no valid options for {entry['asin']} in {ATTEMPTS} answers: {ended.problem}"
        history.append(f"Backup: {problem}")
        return {"backup_problem": problem, "history": edit(before, history)}
    args, why = ended.args, ended.rationale or why
    actions = plan.finish.actions(args, page)
    run, feedback = await run_actions(
        env, here, config, llm, space, actions, why, "backup", plan.finish.tolerates_refusals
    )
    note = f"Rationale: backup strategy: {why}\nAction: {call_text(plan.finish.name, args)}"
    update: dict[str, Any] = {**run, "history": edit(before, [*history, note])}
    if feedback:
        return {
            **update,
            "backup_problem": f"the env refused {call_text(plan.finish.name, args)} on {entry['asin']}: {feedback}",
        }
    return {**update, "backup_used": True}
