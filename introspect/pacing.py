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
answered request. It never admits more than ``ceiling`` tasks nor fewer than one.

A task makes many model calls, so holding back new tasks alone would leave the ones already
running to keep the provider over its limit. The same limit therefore bounds the model calls
under way (``calling``, which nodes.runtime.llm's Caller holds around each call, retries included):
after a cut the running tasks take turns in calling; none is stopped.

The signals come from the model client's HTTP hooks (nodes.runtime.llm: ``PACING``), which see
every attempt the client makes, its own retries included; a model that is not asked over
HTTP (a script, a recording) sends none, and the pacer then rises to its ceiling. In
``--workers`` processes the tasks' calls are not bounded (a ``Listener`` passes the signals
on), only the tasks the pacer admits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

DEFAULT_CEILING = 32  # tasks in flight at most, unless --max-concurrency says otherwise
START = 4.0  # tasks in flight at first: eval's default --concurrency


@dataclass
class Slots:
    """A count of holders kept within a limit the caller gives at each turn; waiters queue."""

    held: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)

    async def take(self, limit: Callable[[], int]) -> None:
        while self.held >= limit():
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                self.wake(limit())  # a turn it was given passes to the next
                raise
        self.held += 1

    def give_back(self, limit: int) -> None:
        self.held -= 1
        self.wake(limit)

    def wake(self, limit: int) -> None:
        """Wake as many waiters as ``limit`` has room for."""
        room = limit - self.held
        while room > 0 and self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                room -= 1


@dataclass
class Pacer:
    """Admits tasks (``async with pacer:``) and their model calls (``nodes.runtime.llm.PACING``) within a
    limit that follows ``heard`` signals."""

    ceiling: int = DEFAULT_CEILING
    limit: float = START  # tasks allowed in flight, and calls (its whole part, at least one)
    threshold: float = 0.0  # below it the limit grows by one per answer (set to the ceiling)
    peak: int = 0  # most tasks in flight at once
    answered: int = 0
    refused: dict[str, int] = field(default_factory=lambda: {"429": 0, "timeout": 0})
    cuts: int = 0
    trace: list[tuple[str, int]] = field(default_factory=list)  # (signal, limit after it) when the limit moved
    tasks: Slots = field(default_factory=Slots)
    calls: Slots = field(default_factory=Slots)
    _armed: bool = True  # a refusal may cut (an answer came since the last cut)

    def __post_init__(self) -> None:
        self.threshold = self.threshold or float(self.ceiling)
        self.limit = min(self.limit, float(self.ceiling))

    @property
    def allowed(self) -> int:
        return max(1, min(self.ceiling, int(self.limit)))

    @property
    def in_flight(self) -> int:
        return self.tasks.held

    async def __aenter__(self) -> Pacer:
        await self.tasks.take(lambda: self.allowed)
        self.peak = max(self.peak, self.tasks.held)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.tasks.give_back(self.allowed)

    @contextlib.asynccontextmanager
    async def calling(self) -> AsyncIterator[None]:
        """A model call's turn: after a cut, the tasks already running take turns in calling,
        so the provider sees fewer requests at once without any task being stopped."""
        await self.calls.take(lambda: self.allowed)
        try:
            yield
        finally:
            self.calls.give_back(self.allowed)

    def heard(self, signal: str) -> None:
        """One HTTP attempt's outcome: answered ("ok"), refused ("429") or timed out."""
        before = self.allowed
        if signal == "ok":
            self.answered += 1
            self._armed = True
            self.limit = min(
                float(self.ceiling), self.limit + (1.0 if self.limit < self.threshold else 1.0 / self.limit)
            )
        elif signal in self.refused:
            self.refused[signal] += 1
            if self._armed:
                self.cuts += 1
                self._armed = False
                self.threshold = self.limit = max(1.0, self.limit / 2)
        if self.allowed != before:
            self.trace.append((signal, self.allowed))
            self.tasks.wake(self.allowed)
            self.calls.wake(self.allowed)

    def line(self) -> str:
        """What the pacer did, for the end of ``introspect eval``."""
        return (
            f"concurrency   auto: up to {self.peak} tasks in flight (ceiling {self.ceiling}); "
            f"{self.answered} requests answered, {self.refused['429']} refused (429), "
            f"{self.refused['timeout']} timed out; cut {self.cuts} times"
        )


@dataclass(frozen=True)
class Listener:
    """Pacing that only hears (``nodes.runtime.llm.Pacing``): a worker process passing the signals on
    to the pacer in the calling process, a benchmark counting them; every call goes at once."""

    hear: Callable[[str], None]

    def heard(self, signal: str) -> None:
        self.hear(signal)

    def calling(self) -> contextlib.AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()
