"""The root of every exception Introspect raises on purpose, and the mark of the ones that are
the user's to fix.

``IntrospectError`` is the base; ``UserError`` marks bad input or configuration (an unknown
method, env or task, a malformed model spec, a Context value out of range, an unusable
checkpointer, an existing thread). The ``introspect`` command reads the exit status off the
class (``exit_status``): a user error is one line on stderr and exit 2, a model that gave up is
one line and exit 1, and an error whose class gives none (a bug, an env or browser failure) is
shown whole, with its traceback, because only its traceback says where to look. So the command
keeps no list of classes: a new user error is one subclass away from being reported right.

Why a package of its own: every layer raises these (prompts, envs, nodes, the method graphs,
the app; import-linter's layers in pyproject.toml), and a base class must sit below all of them
for each to import it without an upward import. ``prompts``, the lowest layer until now, holds
prompt templates: an error base there would make every env depend on the template package for
a class that has nothing to do with prompts. This package imports nothing, so it is the lowest
layer and can stay so.

The project's errors keep their standard-library base beside this one (``UsageError`` is still
a ``ValueError``, ``PromptError`` a ``KeyError``, ``BrowserDiedError`` a Playwright ``Error``):
code that catches those, ours or callers', sees no change.
"""

from __future__ import annotations

from typing import ClassVar


class IntrospectError(Exception):
    """An error Introspect raises on purpose. ``exit_status``: what the ``introspect`` command
    exits with after printing the message as its one line; None (the default) when the error
    means a bug or a failure a person needs the traceback of."""

    exit_status: ClassVar[int | None] = None


class UserError(IntrospectError):
    """Bad input or configuration, the user's to fix: the command prints the message as one
    line (it says what was wrong and what to do instead) and exits 2, before anything runs."""

    exit_status: ClassVar[int | None] = 2
