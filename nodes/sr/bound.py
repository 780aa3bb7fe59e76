"""Structured Reflection's cost structure: the most model calls one task can make (nodes.runtime.bound).

Each of ``max_trials`` trials takes at most ``max_actions`` actions; a planning call either
plans at least one of them or ends the trial (so at most ``max_actions`` + 1 planning calls),
each executed action is paraphrased once (describe), and a trial ends with one reflection of
``reflection_samples`` replies.
"""

from __future__ import annotations

from nodes.runtime.bound import CallBound
from nodes.sr.context import SRContext


def bound(context: SRContext) -> CallBound:
    trial = (context.max_actions + 1) + context.max_actions + context.reflection_samples
    largest = max(context.max_tokens, context.paper_max_tokens or 0)
    return CallBound(calls=context.max_trials * trial, episodes=context.max_trials, output_tokens=largest)
