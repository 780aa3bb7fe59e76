"""LASER's settings (paper 003): the graph's ``context_schema``.

Defaults are the paper's setting: at most 15 state transitions (the agent is forced to
stop), greedy decoding, the backup purchase, function calling. Where the paper and the original
code differ the default is the code's, which produced the published numbers (a detail page adds
its first line, Buy_Now's options get a step of their own, the history is shown after
backtracking only, the backup mark is checked at the top of the loop, arguments are free strings
sent to the env); the paper's wording and the enums are options (docs/methods/laser-fidelity.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nodes.runtime.context import Context, env, setting, temperature


@dataclass(kw_only=True)
class LaserContext(Context):
    """The shared settings plus LASER's own."""

    temperature: float = temperature(0.0)
    env: str = env("webshop")
    max_actions: int = setting(
        15, "state transitions per task; the backup strategy starts 2 before it (paper 003: 15)", min=1
    )
    backup: bool = setting(True, "buy the best examined item when the step budget runs out (the paper's backup)")
    backtracking: bool = setting(
        True,
        "offer the functions that go back to an earlier state (Prev, Back_to_Search: the paper's backtracking); "
        "false, an ablation the paper does not run (introspect ablate), leaves them out",
    )
    detail_text: Literal["full", "first_line"] = setting(
        "first_line",
        "what a Description/Features/Reviews page adds to the item state: first_line, its first line "
        "(the original laser_agent.py, the default), or full, its full text (the paper, Table 6)",
    )
    backup_check: Literal["loop_top", "each_transition"] = setting(
        "loop_top",
        "when the backup strategy's 13-transition mark is checked: loop_top, only outside the item "
        "state (the original laser_agent.py checks at the top of its loop, so an item selected as the "
        "13th transition is judged first), or each_transition, after every transition",
    )
    customise: Literal["own_step", "in_buy_now"] = setting(
        "own_step",
        "how Buy_Now's options are chosen: own_step, Buy_Now takes no arguments and choosing it starts "
        "the original's customisation step (the model names the option types, writes a rationale, "
        "then calls Buy_Now with the values), or in_buy_now, one value per option type of the item "
        "in the Buy_Now call itself",
    )
    history_shown: Literal["after_backtrack", "every_step"] = setting(
        "after_backtrack",
        "the history of rationales and actions in the prompts: after_backtrack, the calls since it was "
        "last shown, in the search state only (the original laser_agent.py), or every_step, the whole "
        "history in every state's rationale prompt (the paper's wording)",
    )
    argument_enums: bool = setting(
        False,
        "put the page's values in the function schemas as enums (item ids, each option type's values) "
        "and refuse any other value; false, the original laser_agent.py's, offers free strings and sends "
        "whatever the model gives to the env, which ignores a click it cannot make",
    )
    tool_mode: Literal["tools", "json"] = setting(
        "tools",
        "how the agent picks actions: native tool calls, or a JSON object in the reply for models "
        "without tool calling (the paper's Table 3 ablation)",
    )
