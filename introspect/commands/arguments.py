"""The arguments several commands share, declared once: the method, the run's options
(``--env``, ``--model``, ``--set``, ...), ``--checkpoint``, ``--record`` and ``--screenshots``."""

from __future__ import annotations

import argparse

from graphs import UnknownMethodError, registry


def method_argument(parser: argparse.ArgumentParser) -> None:
    """The positional METHOD of ``run``, ``eval`` and ``train``."""
    parser.add_argument("method", help=f"one of: {method_names()}")


def method_names() -> str:
    """The registered methods, for the help; a malformed ``introspect.methods`` entry point is
    left for the command that looks a method up to report in its one line."""
    try:
        return ", ".join(registry())
    except UnknownMethodError:
        return "a registered method"


def run_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that runs a method: env, model, settings, checkpoint, recording."""
    parser.add_argument("--env", help="environment (default: the method's own)")
    parser.add_argument(
        "--model",
        help="provider:model, local (the embedded 135M model), gguf:FILE or scripted:FILE (default: "
        "openai:gpt-4o-mini with OPENAI_API_KEY or OPENAI_BASE_URL set, else local; eval and study name one)",
    )
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a setting of the method (introspect run METHOD --help lists them), e.g. --set timeout=60",
    )
    parser.add_argument("--env-option", action="append", metavar="KEY=VALUE", help="an option of the environment")
    parser.add_argument("--plan", help="plan file (AutoPlan)")
    parser.add_argument(
        "--confirm",
        action="store_true",
        default=None,
        help="ask before an irreversible step (a purchase, a form submit, the answer, a plan update)",
    )
    checkpoint_option(parser)
    record_options(parser)


def record_options(parser: argparse.ArgumentParser) -> None:
    """``--record FILE`` and ``--screenshots``: what a run keeps besides its checkpoints."""
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="append every model exchange to FILE (JSONL); --model replay:FILE reproduces the run from it",
    )
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="keep a screenshot after every step of a "
        "browser env, beside the checkpoint database (for introspect view)",
    )


def checkpoint_option(parser: argparse.ArgumentParser) -> None:
    """``--checkpoint``: the database a command's threads are in."""
    parser.add_argument(
        "--checkpoint",
        help="memory | sqlite (default, in introspect's home: --home) | "
        "sqlite:///ABSOLUTE/PATH | sqlite:RELATIVE/PATH | postgresql://...",
    )
