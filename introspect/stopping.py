"""A graceful stop of a local evaluation on SIGINT or SIGTERM, with LangGraph's own drain.

Each task's graph runs with a ``RunControl`` (langgraph.runtime). On the first signal every
control is asked to drain: LangGraph lets the steps under way finish, saves their checkpoint,
and ends the run with ``GraphDrained`` at that step boundary; no task starts after it. The
evaluation then writes no row for a drained task (its thread waits at its checkpoint, and the
same command continues it), so no row is half-made, and the command exits with one line saying
how to continue. A second signal stops at once: the process ends by the signal's default action
(SIGINT too: Python's ``KeyboardInterrupt`` would unwind the event loop, cancel every task and
close the browsers first, which took seconds), and the checkpoints already on disk still hold, as
after a kill.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph.runtime import RunControl

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop:
    """The drain controls of the tasks under way, and the signal that asked them to stop."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None
        self._controls: set[RunControl] = set()

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def control(self) -> RunControl:
        """A new task's control (already draining when the stop came first)."""
        from langgraph.runtime import RunControl

        control = RunControl()
        if self.signal is not None:
            control.request_drain(self.signal.name)
        self._controls.add(control)
        return control

    def release(self, control: RunControl) -> None:
        self._controls.discard(control)

    def request(self, signum: signal.Signals) -> None:
        self.signal = signum
        for control in self._controls:
            control.request_drain(signum.name)

    def line(self, done: str, then: str) -> str:
        """The one line a drained command ends with: what it had ``done`` and what to do ``then``."""
        assert self.signal is not None
        return (
            f"introspect: stopped by {self.signal.name}: {done}"
            f"the tasks under way stopped at a step boundary, checkpointed; {then}"
        )

    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process a signal ended."""
        return 128 + int(self.signal) if self.signal is not None else 0


@contextmanager
def stopping_on_signals() -> Iterator[Stop]:
    """Within the block, SIGINT and SIGTERM drain the tasks (``Stop``); a second one ends the
    process at once (``SIG_DFL``); after the block they do what they did before."""
    loop = asyncio.get_running_loop()
    stop = Stop()
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}

    def first(signum: signal.Signals) -> None:
        stop.request(signum)
        for each in SIGNALS:  # a second signal: the kernel's default action, at once
            loop.remove_signal_handler(each)
            signal.signal(each, signal.SIG_DFL)

    for signum in SIGNALS:
        loop.add_signal_handler(signum, first, signum)
    try:
        yield stop
    finally:
        for signum in SIGNALS:
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous[signum])
