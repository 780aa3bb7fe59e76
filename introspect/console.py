"""What the ``introspect`` command prints while graphs run: node updates, outcomes,
training progress and retry notices. Methods supply their own wording (``Method.narrate`` and
``Method.training.narrate``)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphs.method import Method
from nodes.runtime.usage import dollars

WIDTH = 110


def update_printer(method: Method) -> Callable[[str, dict[str, Any]], None]:
    """Prints each node update: the method's own one-line account of non-acting nodes
    (``Method.narrate``), the rationale, and every executed action."""
    narrate = method.narrate

    def show(node: str, update: dict[str, Any]) -> None:
        steps = update.get("trajectory") or []
        story = narrate(node, update)
        why = " ".join(str(steps[0].get("rationale", "")).split()) if steps else ""
        text = story or why
        shown = textwrap.shorten(text, WIDTH, placeholder="...") if text else ("" if steps else "·")
        print(f"  {node:<11} {shown}".rstrip(), flush=True)
        for step in steps:
            mark = "" if step.get("valid", True) else f"  (refused: {step.get('feedback', '')})"
            print(
                f"  {'':<11} -> {step.get('action', '')}  reward={float(step.get('reward', 0.0)):.2f}{mark}", flush=True
            )

    return show


def training_printer(method: Method) -> Callable[[str, dict[str, Any]], None]:
    """Prints the training loop as it happens: each batch, experience, reflection and plan."""
    training = method.training

    def show(node: str, update: dict[str, Any]) -> None:
        story = training.narrate(node, update) if training else None
        if story:
            head, _, rest = story.partition("\n")
            print(f"  {node:<12} {textwrap.shorten(head, WIDTH, placeholder='...')}", flush=True)
            if rest:
                print(textwrap.indent(rest, " " * 15), flush=True)

    return show


def retry_notice(prefix: str = "") -> Callable[[str], None]:
    """Prints a model request being retried, on stderr (stdout stays the run's account)."""

    def say(notice: str) -> None:
        print(f"  {prefix}{notice}", file=sys.stderr, flush=True)

    return say


def print_outcome(state: dict[str, Any], thread_id: str, finished: bool, resume_hint: str = "") -> None:
    usage = state.get("usage") or {}
    retries = int(usage.get("retries", 0))
    print(
        f"{'finished' if finished else 'stopped'}: success={bool(state.get('success'))} "
        f"reward={float(state.get('reward', 0.0)):.3f} steps={state.get('actions', 0)} "
        f"model_calls={usage.get('model_calls', 0)} "
        f"tokens={usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)} "
        f"cost={dollars(usage.get('cost_usd', 0.0))}"
        + (f" retries={retries}" if retries else "")
        + (f" ({state['stop_reason']})" if state.get("stop_reason") else "")
    )
    print(f"thread: {thread_id}" + (f"  (continue with: {resume_hint})" if resume_hint and not finished else ""))


def print_training(record: dict[str, Any], plan_out: Path) -> None:
    """Per iteration the batch's successes, then the final plan and where it was written."""
    for number, iteration in enumerate(record.get("history") or [], 1):
        jobs = iteration.get("jobs") or []
        wins = sum(1 for job in jobs if job.get("success"))
        print(f"  iteration {number}: {wins}/{len(jobs)} tasks succeeded")
    print("final plan:\n" + textwrap.indent(str(record.get("final_plan", "")).strip() or "(empty)", "  "))
    usage = record.get("usage") or {}
    print(f"model_calls={usage.get('model_calls', 0)} cost={dollars(usage.get('cost_usd', 0.0))}")
    print(f"plans written to {plan_out} (final plan also in {plan_out.with_suffix('.txt')})")


def matrix_text() -> str:
    """``introspect graphs --matrix``: the method x env table in aligned columns, and its count."""
    from graphs import matrix, matrix_rows

    header, rows = matrix_rows()
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in [header, *rows]
    ]
    cells = matrix()
    paper = sum(1 for _, _, own in cells if own)
    lines.append(f"{len(cells)} runnable method x env cells ({paper} the papers' own settings)")
    return "\n".join(lines)
