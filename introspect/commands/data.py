"""``introspect data [list]`` and ``introspect data get NAME [--mirror URL]``: the benchmarks'
full data (the work is in ``introspect.data``)."""

from __future__ import annotations

import argparse

from envs.datasets import DATASETS
from introspect.commands.command import Command
from introspect.data import MIRROR_VARIABLE, command


def get_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help=f"one of: {', '.join(DATASETS)}")
    parser.add_argument(
        "--mirror",
        metavar="URL",
        help=f"download the same file names from URL instead (default ${MIRROR_VARIABLE})",
    )


COMMAND = Command(
    "data",
    "the benchmarks' full data: list it; `data get NAME` installs one",
    run=command,
    actions=(
        Command("list", "each benchmark's full data: source, size, licence, what it enables (the default)"),
        Command("get", "download NAME from its official source, verify it, install it", get_arguments),
    ),
)
