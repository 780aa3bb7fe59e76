"""Devil's Advocate's cost structure: the most model calls one task can make (nodes.runtime.bound).

Every question (plan, revision, action, remedy, alignment, completion, element mapping) is
asked up to ``reasks`` + 1 times. A screen over ``observation_budget`` is summarised in at
most ``MAX_CHUNKS`` calls, whenever one is read: at the start, at each episode's reset,
after each action and at each backtrack. Each of the ``max_actions`` actions (per task) is
executed (its screen read, its element mapped), described, aligned and judged complete
(whether the subtask or, where an answer ends the task, the task, then the answer); an
action is asked after each aligned action and once per episode at its root, each with its
``remedies``; every action and remedy pushed may be popped by a backtrack (a screen read and
an element mapped). Each of ``max_episodes`` episodes starts with a plan or its revision.
"""

from __future__ import annotations

from nodes.da.context import DAContext
from nodes.da.summarise import MAX_CHUNKS
from nodes.runtime.bound import CallBound


def bound(context: DAContext) -> CallBound:
    ask = context.reasks + 1
    actions, episodes = context.max_actions, context.max_episodes
    remedies = context.remedies_per_action
    asked = actions + episodes  # action questions: after each aligned action, and at each root
    per_action = MAX_CHUNKS + ask + 1 + ask + 2 * ask  # read + map, describe, align, complete + answer
    backtracks = asked * (remedies + 1) * (MAX_CHUNKS + ask)
    calls = (
        MAX_CHUNKS  # the first screen
        + episodes * (2 * ask + MAX_CHUNKS)  # plan or revision (and its review), the reset's screen
        + asked * (1 + remedies) * ask
        + actions * per_action
        + backtracks
    )
    return CallBound(calls=calls, episodes=episodes, output_tokens=context.max_tokens)
