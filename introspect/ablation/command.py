"""What ``introspect ablate`` does (introspect.commands.ablate declares it): exit 0 when
every fork ran to an outcome, 1 when one ended in an error (its row says which; the same command
continues it), 2 for bad input, refused before anything runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspect.options import UsageError

if TYPE_CHECKING:
    from introspect.ablation.forks import Run


async def cmd_ablate(args: argparse.Namespace) -> int:
    from introspect.ablation.forks import (
        ablate,
        check_answers,
        check_fork_model,
        check_kinds,
        default_out,
        line,
        runs_of,
    )

    paths = [Path(p) for p in args.runs]
    runs = runs_of(paths, args.checkpoint)  # every input read and checked before anything runs
    out = Path(args.out) if args.out else default_out(paths)
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder: name the ablation results file (JSONL)")
    kinds = set(args.intervention or []) or None
    if kinds:
        check_kinds(runs, kinds)
    views = Path(args.views) if args.views else None
    if views is not None and views.exists() and not views.is_dir():
        raise UsageError(f"--views {views} is a file, not a folder")
    if args.model:
        await check_fork_model(args.model)
    else:
        check_answers(runs)
    print(f"ablating the interventions of {len(runs)} run(s) into {out}", flush=True)
    written: list[dict[str, Any]] = []

    def heard(row: dict[str, Any]) -> None:
        print(line(row), flush=True)
        written.append(row)

    tally = await ablate(runs, out, args.concurrency, kinds, first_only=not args.each, on_row=heard, model=args.model)
    if views is not None:
        await write_views(runs, written, views)
    print(f"ablations written: {tally.written}  already there: {tally.skipped}  errors: {tally.errors}")
    if tally.missing:
        print(f"runs whose thread is not in their checkpointer (left out): {tally.missing}")
    if tally.without_interventions:
        print(f"methods that declare no interventions: {', '.join(sorted(tally.without_interventions))}")
    print(f"see them in: introspect report {' '.join(args.runs)} --ablations {out}")
    return 1 if tally.errors else 0  # as eval: a fork that errored runs again with the same command


async def write_views(runs: list[Run], rows: list[dict[str, Any]], folder: Path) -> None:
    """Each fork that ran to an outcome beside its original, step by step: ``introspect view
    --compare``'s page, which marks the first step where they differ."""
    from introspect.view import write_compare

    stores = {str(run.row["thread_id"]): run.checkpoint for run in runs}
    for row in rows:
        if not row["error"]:
            page = await write_compare(row["thread_id"], row["fork"], folder, stores.get(row["thread_id"]))
            print(f"view: {page}", flush=True)
