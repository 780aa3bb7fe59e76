"""The most model calls one task can make: what a method declares of its own cost structure.

``study run --dry-run`` (introspect.study.estimate) multiplies it by the tasks to run, so the
figure it labels "at most" is never exceeded: each method counts the calls one action costs
(a rationale and its function call, a thought, an action and its formalisation, remedies,
re-asks on malformed replies, customisation steps), the calls of each trial or episode
(planning, reflection, summaries of long screens), at its configuration's limits. A bound,
not a forecast: real runs end sooner; the estimate's expectation comes from earlier rows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallBound:
    """At most ``calls`` model calls per task, in at most ``episodes`` episodes or trials (each
    may end with a judged evaluation, counted by the app), each call answering at most
    ``output_tokens`` tokens (the largest ``max_tokens`` any of its calls asks for)."""

    calls: int
    episodes: int
    output_tokens: int
