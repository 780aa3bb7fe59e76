"""The arguments of a finishing call (WebShop's Buy_Now), asked as laser_agent.py asks them.

With ``customise=own_step`` (the original's, the default) the state offers the tool without
arguments; once the model chooses it, three calls follow: the model names the item's
customisation types (``chat_zero_shot_custom_prompt``), writes the rationale of the values
("At this stage, you have found the correct item...") and calls the tool again, forced, with one
required argument per type named (``buy_item_final``). With ``in_buy_now`` the state's call itself
carried one value per customisation type of the item; the backup strategy then asks the rationale
and that call. The backup strategy asks the same way when it buys (``back_up_agent``).
"""

from __future__ import annotations

from typing import Literal

from nodes.laser.choose import Choice, ask, choose_function, rationale, state_prompt, system_prompt
from nodes.laser.space import Customise, Page, Tool, function_schema
from nodes.runtime.llm import Caller


def parse_types(reply: str) -> list[str]:
    """laser_agent.py's ``parse_customization``: the comma-separated types after a colon (or the
    whole reply), "None" left out."""
    text = reply.split(":")[1] if ":" in reply else reply
    types = [part.strip() for part in text.strip().split(",")]
    return [name for name in types if name and name.lower() != "none"]


async def customised(
    llm: Caller, observation: str, page: Page, name: str, plan: Customise, mode: str, *, enums: bool
) -> Choice:
    """The original's customisation step: the types, the rationale, the forced call with the values.
    The choice's rationale is the values' rationale."""
    types = parse_types(await ask(llm, system_prompt(plan.types), observation))
    why = await rationale(llm, state_prompt(plan.instruction, plan.layout), observation)
    final = function_schema(name, plan.description, plan.parameters(types, page))
    choice = await choose_function(llm, observation, why, [final], mode, plan.layout, enums=enums)
    choice.rationale = why
    return choice


async def finish_choice(
    llm: Caller,
    observation: str,
    page: Page,
    tool: Tool,
    step: Literal["own_step", "in_buy_now"],
    mode: str,
    *,
    enums: bool,
) -> Choice:
    """The finishing call of the backup strategy: its customisation step, or (``in_buy_now``) the
    values' rationale and the call with one value per type of the item (none asked when it has none)."""
    plan = tool.customise
    assert plan is not None  # a backup's finishing tool declares its customisation
    if step == "own_step":
        return await customised(llm, observation, page, tool.name, plan, mode, enums=enums)
    schema = function_schema(tool.name, plan.description, tool.parameters(page))
    if not schema["function"]["parameters"]["properties"]:
        return Choice(tool.name)
    why = await rationale(llm, state_prompt(plan.instruction, plan.layout), observation)
    choice = await choose_function(llm, observation, why, [schema], mode, plan.layout, enums=enums)
    choice.rationale = why
    return choice
