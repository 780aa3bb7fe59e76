"""The errors of model calls, below every module that sets up or calls a model (nodes.runtime.llm, the
embedded model's servers in nodes.runtime.local)."""

from __future__ import annotations

from errors import IntrospectError, UserError
from nodes.runtime.secrets import redact
from nodes.runtime.usage import Usage, add_usage


class ModelConfigError(UserError, ValueError):
    """A malformed model spec, a missing key or a missing provider package."""


class ModelCallError(IntrospectError, RuntimeError):
    """A model call failed for good (non-transient, or retries exhausted). Not a bug and not
    the user's input: the command says so in one line and exits 1 (the run stays checkpointed).

    ``usage`` is what the failing node had spent, which its state never receives: its
    earlier calls and the failed call's retries."""

    exit_status = 1

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(redact(message))
        self.usage: Usage = add_usage(usage, None)
