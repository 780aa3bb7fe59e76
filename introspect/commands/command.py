"""What a subcommand of ``introspect`` declares: its name, help, arguments and the function that does its work."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Handler = Callable[[argparse.Namespace], int | Awaitable[int]]
"""Runs a parsed command line; its exit status (a coroutine's is awaited by ``introspect.cli``)."""


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command (or an action of one) that takes no arguments of its own."""


@dataclass(frozen=True)
class Command:
    """One ``introspect NAME``: ``introspect.cli`` adds a parser with ``help``, lets ``arguments``
    declare its arguments on it and runs ``run`` with what was parsed.

    A command with ``actions`` (``study run|status|report``) is a group: each action is a Command
    of its own; ``run``, when there is one, runs when no action is named (``data`` lists).
    ``method_help``: ``introspect NAME METHOD --help`` ends with that method's settings.
    """

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None] = no_arguments
    run: Handler | None = None
    actions: tuple[Command, ...] = ()
    method_help: bool = False


def lazy(module: str, name: str) -> Handler:
    """The function ``name`` of ``module``, imported when its command runs (a light --help)."""

    def handler(args: argparse.Namespace) -> int | Awaitable[int]:
        run: Handler = getattr(importlib.import_module(module), name)
        return run(args)

    return handler
