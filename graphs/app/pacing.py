"""``--concurrency auto``: as many tasks in flight as the model's provider answers without
refusing, found while the evaluation runs.

A fixed ``--concurrency`` either leaves a provider's rate limit unused or sets off a storm of
429s, each of which the OpenAI client answers by waiting (Retry-After) and sending again. The
``Pacer`` admits tasks the way TCP paces packets (AIMD): it starts where a fixed setting
starts by default (four tasks in flight), admits one more for every answered model request
while below its threshold (slow start: the number doubles with each round of calls), then one
more per round (additive increase); a 429
or a timed-out request halves it (multiplicative decrease) and sets the threshold there. A
burst of refusals from requests sent before the cut counts once: the next cut waits for an
answered request. It never admits more than ``ceiling`` tasks nor fewer than one. Tasks
already running are never stopped: a cut only holds back the next ones.

The signals come from the model client's HTTP hooks (nodes.llm: ``PRESSURE``), which see
every attempt the client makes, its own retries included; a model that is not asked over
HTTP (a script, a recording) sends none, and the pacer then rises to its ceiling.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

Signal = Literal["ok", "429", "timeout"]
DEFAULT_CEILING = 32  # tasks in flight at most, unless --max-concurrency says otherwise
START = 4.0  # tasks in flight at first: eval's default --concurrency


@dataclass
class Pacer:
    """Admits tasks (``async with pacer:``) within a limit that follows ``heard`` signals."""

    ceiling: int = DEFAULT_CEILING
    limit: float = START  # tasks allowed in flight (its whole part, at least one)
    threshold: float = 0.0  # below it the limit grows by one per answer (set to the ceiling)
    in_flight: int = 0
    peak: int = 0  # most tasks in flight at once
    answered: int = 0
    refused: dict[str, int] = field(default_factory=lambda: {"429": 0, "timeout": 0})
    cuts: int = 0
    trace: list[tuple[str, int]] = field(default_factory=list)  # (signal, limit after it) when the limit moved
    _armed: bool = True  # a refusal may cut (an answer came since the last cut)
    _waiting: deque[asyncio.Future[None]] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.threshold = self.threshold or float(self.ceiling)
        self.limit = min(self.limit, float(self.ceiling))

    @property
    def allowed(self) -> int:
        return max(1, min(self.ceiling, int(self.limit)))

    async def __aenter__(self) -> Pacer:
        while self.in_flight >= self.allowed:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                self._admit()  # a turn it was given passes to the next
                raise
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.in_flight -= 1
        self._admit()

    def heard(self, signal: Signal) -> None:
        """One HTTP attempt's outcome: answered ("ok"), refused ("429") or timed out."""
        before = self.allowed
        if signal == "ok":
            self.answered += 1
            self._armed = True
            self.limit = min(
                float(self.ceiling), self.limit + (1.0 if self.limit < self.threshold else 1.0 / self.limit)
            )
        else:
            self.refused[signal] += 1
            if self._armed:
                self.cuts += 1
                self._armed = False
                self.threshold = self.limit = max(1.0, self.limit / 2)
        if self.allowed != before:
            self.trace.append((signal, self.allowed))
            self._admit()

    def _admit(self) -> None:
        """Wake as many waiting tasks as the limit has room for."""
        room = self.allowed - self.in_flight
        while room > 0 and self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                room -= 1

    def line(self) -> str:
        """What the pacer did, for the end of ``introspect eval``."""
        return (
            f"concurrency   auto: up to {self.peak} tasks in flight (ceiling {self.ceiling}); "
            f"{self.answered} requests answered, {self.refused['429']} refused (429), "
            f"{self.refused['timeout']} timed out; cut {self.cuts} times"
        )
