"""``introspect serve``: LangGraph's API server on PostgreSQL and Redis (the work is in ``introspect.serve``)."""

from __future__ import annotations

import argparse
import os

from introspect.commands.command import Command
from introspect.serve import DEFAULT_PORT, command


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-uri",
        default=os.environ.get("DATABASE_URI"),
        metavar="URI",
        help="postgresql://... holding threads, checkpoints and the run queue (default $DATABASE_URI)",
    )
    parser.add_argument(
        "--redis-uri",
        default=os.environ.get("REDIS_URI"),
        metavar="URI",
        help="redis://... for run signals, streams and heartbeats (default $REDIS_URI)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--jobs", type=int, default=10, help="runs this process executes at once (default 10)")
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="the run heartbeat's interval; a dead process's runs are taken up 1.5 to 4 of these later "
        "by a process with a free job slot (default 120, the server's own)",
    )


COMMAND = Command(
    "serve",
    "serve the graphs with LangGraph's API server on PostgreSQL and Redis (one worker process)",
    arguments,
    command,
)
