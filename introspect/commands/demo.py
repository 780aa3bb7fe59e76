"""``introspect demo [NAME]``: an offline scripted run, replayed from a shipped recording."""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path

from graphs import method_named
from introspect.checkpoint import default_url, open_checkpointer
from introspect.commands.arguments import checkpoint_option, record_options
from introspect.commands.command import Command
from introspect.console import print_outcome, update_printer
from introspect.gaveup import resumable
from introspect.options import UsageError
from introspect.runner import drive

DEMOS = Path(__file__).resolve().parents[1] / "demos"


async def cmd_demo(args: argparse.Namespace) -> int:
    """Replay a shipped recording offline and show the agent moving through its graph."""
    available = sorted(p.stem for p in DEMOS.glob("*.json"))
    name = args.name or "laser"
    if name not in available:
        raise UsageError(f"no demo {name!r}; available: {', '.join(available)}")
    spec = json.loads((DEMOS / f"{name}.json").read_text())
    settings = method_named(spec["method"]).context
    context = settings(model=f"replay:{DEMOS / spec['recording']}", env=spec["env"], **spec.get("context", {}))
    thread_id = f"demo-{name}-{uuid.uuid4().hex[:8]}"
    print(
        f"demo: {spec['title']}\n(the model's replies are replayed from the recording {spec['recording']}; "
        "no key or network needed)\n",
        flush=True,
    )
    method = method_named(spec["method"])
    checkpoint = args.checkpoint or default_url()  # kept where `introspect view THREAD` finds it
    async with open_checkpointer(checkpoint) as saver:
        with resumable(thread_id, checkpoint):
            outcome = await drive(
                method, context, thread_id, saver, {"task_id": spec["task_id"]}, update_printer(method)
            )
    print_outcome(outcome.state, thread_id, outcome.finished)
    if checkpoint != "memory":
        print(f"see it step by step: introspect view {thread_id}")
    return 0


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="which demo (default: laser)")
    checkpoint_option(parser)
    record_options(parser)


COMMAND = Command("demo", "an offline scripted run", arguments, cmd_demo)
