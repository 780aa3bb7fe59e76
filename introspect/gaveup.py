"""A model that gives up, as every command that runs a graph reports it.

A model call that fails for good (``nodes.runtime.llm.ModelCallError``: a non-transient error, or its
retries spent) ends the run, not the thread: every step before it is checkpointed. So each
command says how to go on, in the same words: ``run``, ``resume``, ``train``, ``fork`` and
``demo`` end with one line naming the ``introspect resume`` command (``GaveUp``, exit 1), and
``eval``, which keeps going and records the task as an error row, ends with one line saying
what running it again does. With in-memory checkpoints nothing is left to resume, and both
say so instead of naming a command that would not find the thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from errors import IntrospectError
from introspect.checkpoint import default_url, redact
from introspect.console import retry_notice


class GaveUp(IntrospectError):
    """A model gave up mid-run; the message says how to continue the checkpointed thread."""

    exit_status = 1


def in_memory(checkpoint: str | None) -> bool:
    """Whether ``--checkpoint`` (or the default when it is not given) keeps nothing on disk."""
    return (checkpoint or default_url()) == "memory"


def resume_command(thread_id: str, checkpoint: str | None) -> str:
    """The command that continues ``thread_id`` (empty for in-memory checkpoints)."""
    if in_memory(checkpoint):
        return ""
    return f"introspect resume {thread_id}" + (f" --checkpoint {redact(checkpoint)}" if checkpoint else "")


@contextmanager
def resumable(thread_id: str, checkpoint: str | None) -> Iterator[None]:
    """Around a command's run of thread ``thread_id``: retried model requests are told on stderr
    as they happen, and a model that gives up ends the command as ``GaveUp``, whose one line
    says how to continue the thread."""
    from nodes.runtime.llm import RETRY_NOTICE, ModelCallError  # the model stack: only when a graph runs

    RETRY_NOTICE.set(retry_notice())
    try:
        yield
    except ModelCallError as exc:
        command = resume_command(thread_id, checkpoint)
        hint = f"the run is checkpointed: continue it with `{command}`" if command else "its checkpoints were in memory"
        raise GaveUp(f"{exc}; {hint}") from None


def errored_line(errors: int, tasks: int, kept: bool) -> str:
    """``eval``'s last line when tasks errored (a model gave up, a script ran out): they are no
    failures of the agent, and the same command again resumes them when their checkpoints were
    ``kept`` (on disk, or on the server), else runs them again from the start."""
    again = (
        "run the same command again to resume them from their checkpoints"
        if kept
        else "their checkpoints were in memory: the same command again runs them from the start"
    )
    return f"introspect: {errors} of {tasks} tasks errored (not counted as failures); {again}"
