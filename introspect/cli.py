"""The ``introspect`` command: run, resume, evaluate, train, study, serve, list graphs, history,
fork, ablate, view, report, export, data, demo. Each subcommand is one module of ``introspect.commands``;
this module registers every one from ``COMMANDS`` and runs the one named.

Exit status: 0 when the command did its work; 2 for bad input (unknown method, env or
task, a malformed or unknown model, a missing key, a setting out of range, an unusable
checkpointer or results path, an existing thread id, a refused ``data get``), reported in one
line before anything runs or is written; 1 when a model gave up (the run is checkpointed and
the line says how to resume it) or, for ``eval``, ``study run`` and ``ablate``, when any task (fork)
errored; 3 when
a budget stopped a study (introspect.study.command). Which errors are
which is the errors' own say (``errors.IntrospectError.exit_status``: every ``UserError`` is
exit 2); only an error that means a bug is shown with its traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any, NoReturn

from envs.datasets import HOME
from errors import IntrospectError
from graphs import UnknownMethodError, method_named
from graphs.method import Method
from introspect.commands import (
    ablate,
    data,
    demo,
    export,
    fork,
    graphs,
    history,
    report,
    resume,
    run,
    serve,
    study,
    train,
    view,
    webarena,
)
from introspect.commands import eval as evaluate
from introspect.commands.command import Command
from introspect.options import keeping, settings_help

# The model stack (nodes.runtime.llm, langchain) and the graphs (langgraph) are imported by the
# commands that use them, not here: `introspect --help` and a mistyped option then answer
# in a few hundredths of a second instead of most of one (tests/test_cli.py checks it).

COMMANDS: tuple[Command, ...] = (
    run.COMMAND,
    resume.COMMAND,
    evaluate.COMMAND,
    train.COMMAND,
    graphs.COMMAND,
    webarena.COMMAND,
    study.COMMAND,
    report.COMMAND,
    data.COMMAND,
    serve.COMMAND,
    history.COMMAND,
    fork.COMMAND,
    ablate.COMMAND,
    view.COMMAND,
    export.COMMAND,
    demo.COMMAND,
)
"""Every subcommand, in the order ``introspect --help`` lists them: a new command is a module of
``introspect.commands`` and its line here."""


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line."""

    def error(self, message: str) -> NoReturn:
        command = " ".join(["introspect", *self.prog.split()[1:], "--help"])
        self.exit(2, f"introspect: {message} (see {command})\n")


def build_parser(method: Method | None = None) -> Parser:
    """The command line; with ``method`` (named in ``run``/``eval``/``train METHOD --help``),
    those commands' help ends with that method's settings."""
    parser = Parser(prog="introspect", description="Introspective LLM agents as LangGraph graphs.")
    parser.add_argument(
        "--home",
        metavar="DIR",
        help=f"where introspect keeps checkpoints, studies and data (default ${HOME}, else "
        "$XDG_DATA_HOME/introspect or ~/.local/share/introspect)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        register(sub, command, method)
    return parser


def register(sub: argparse._SubParsersAction[Parser], command: Command, method: Method | None) -> None:
    """Add ``command`` (and its actions, under ``dest="action"``) to the subparsers ``sub``."""
    listed: dict[str, Any] = {}
    if method is not None and command.method_help:
        listed = {"epilog": settings_help(method), "formatter_class": argparse.RawDescriptionHelpFormatter}
    parser = sub.add_parser(command.name, help=command.help, **listed)
    command.arguments(parser)
    if command.actions:
        actions = parser.add_subparsers(dest="action", required=command.run is None, parser_class=Parser)
        for action in command.actions:
            register(actions, action, None)
    if command.run is not None:
        parser.set_defaults(handler=command.run)


def _helped_method(argv: list[str]) -> Method | None:
    """The method of ``introspect NAME METHOD ... --help`` for a command with ``method_help``
    (run, eval, train), if one is named."""
    argv = argv[2:] if argv[:1] == ["--home"] else argv[1:] if argv[:1] and argv[0].startswith("--home=") else argv
    if len(argv) < 3 or argv[0] not in {c.name for c in COMMANDS if c.method_help} or not {"-h", "--help"} & set(argv):
        return None
    try:
        return method_named(argv[1])
    except UnknownMethodError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser(_helped_method(sys.argv[1:] if argv is None else argv)).parse_args(argv)
    if args.home:
        os.environ[HOME] = args.home  # for this command and the workers it starts
    try:
        with keeping(args):
            outcome = args.handler(args)
            return asyncio.run(outcome) if asyncio.iscoroutine(outcome) else int(outcome)
    except IntrospectError as exc:
        if exc.exit_status is None:  # a bug: its traceback says where
            raise
        print(f"introspect: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("introspect: interrupted; the run is checkpointed and can be resumed", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`introspect graphs | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes stdout at exit
        return 141


if __name__ == "__main__":
    sys.exit(main())
