"""LASER's cost structure: the most model calls one task can make (nodes.runtime.bound).

A visit to a state asks a rationale (one call), then its function call (up to ``ATTEMPTS``
answers, each refusal re-asked), once more when the item chosen was examined before (the
original's reselection), and, for a tool with a customisation step (WebShop's Buy_Now), the
option types, the values' rationale and the forced call. A visit whose answer or action is
refused is no transition; ``REFUSAL_LIMIT`` of them in a row end the exploration, and a detail
page read (Description, Features, Reviews: each once per item) is none either. So before each
of the ``max_actions`` transitions come at most (detail pages + 1) x ``REFUSAL_LIMIT`` visits;
the backup strategy adds one choice of item and one customisation.
"""

from __future__ import annotations

from nodes.laser.choose import ATTEMPTS, RATIONALE_MAX_TOKENS
from nodes.laser.context import LaserContext
from nodes.laser.spaces import space_for
from nodes.laser.states import REFUSAL_LIMIT
from nodes.runtime.bound import CallBound


def bound(context: LaserContext) -> CallBound:
    space = space_for(context)
    reads = max(sum(1 for tool in state.tools if tool.reads_then) for state in space.states)
    own_step = context.customise == "own_step"
    customisation = 2 + ATTEMPTS  # the types, the values' rationale, the forced call
    visit = 1 + 2 * ATTEMPTS + (customisation if own_step else 0)
    visits = context.max_actions * (reads + 1) * REFUSAL_LIMIT
    backup = 0
    if context.backup and space.backup is not None:
        backup = 1 + ATTEMPTS + (customisation if own_step else 1 + ATTEMPTS)
    return CallBound(
        calls=visits * visit + backup, episodes=1, output_tokens=max(context.max_tokens, RATIONALE_MAX_TOKENS)
    )
