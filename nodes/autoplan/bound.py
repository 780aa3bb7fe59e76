"""AutoPlan's cost structure: the most model calls one task can make (nodes.runtime.bound).

Inference is one episode: each of its ``max_actions`` steps (this env's) costs a thought, an
action and its formalisation (three calls), and the original transcript asks one thought
more at ALFWorld's step cap.
"""

from __future__ import annotations

from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.decoding import LIMITS
from nodes.runtime.bound import CallBound


def bound(context: AutoPlanContext) -> CallBound:
    limits = [limit.max_tokens or 0 for kinds in LIMITS.values() for limit in kinds.values()]
    return CallBound(calls=3 * context.steps() + 1, episodes=1, output_tokens=max(context.max_tokens, *limits))
