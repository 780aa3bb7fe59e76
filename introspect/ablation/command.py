"""What ``introspect ablate`` does (introspect.commands.ablate declares it): exit 0 when
every fork ran to an outcome, 1 when one ended in an error (its row says which; the same command
continues it), 2 for bad input, refused before anything runs, 3 when the budget was spent before
every fork ran (as a study's: the same command with a higher budget continues)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspect.options import UsageError
from introspect.study.budget import Limits
from introspect.study.run import STOPPED

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
    limits = Limits(cost_usd=args.max_cost_usd, tokens=args.max_tokens_total, seconds=args.max_seconds)
    if limits.cost_usd is not None:
        check_priced(runs, args.model)
    if args.model:
        await check_fork_model(args.model)  # the embedded model's servers start here, once all else is checked
    else:
        check_answers(runs)
    print(f"ablating the interventions of {len(runs)} run(s) into {out}", flush=True)
    written: list[dict[str, Any]] = []

    def heard(row: dict[str, Any]) -> None:
        print(line(row), flush=True)
        written.append(row)

    tally = await ablate(
        runs, out, args.concurrency, kinds, first_only=not args.each, on_row=heard, model=args.model, limits=limits
    )
    if views is not None:
        await write_views(runs, written, views)
    print(f"ablations written: {tally.written}  already there: {tally.skipped}  errors: {tally.errors}")
    if tally.missing:
        print(f"runs whose thread is not in their checkpointer (left out): {tally.missing}")
    if tally.without_interventions:
        print(f"methods that declare no interventions: {', '.join(sorted(tally.without_interventions))}")
    if tally.budget:
        print(
            f"skipped for the budget: {tally.budget} forks ({tally.reached} reached); "
            "raise it and run the same command to continue them"
        )
    print(f"see them in: introspect report {' '.join(args.runs)} --ablations {out}")
    if tally.budget:
        return STOPPED
    return 1 if tally.errors else 0  # as eval: a fork that errored runs again with the same command


def check_priced(runs: list[Run], model: str | None) -> None:
    """Refuse a dollar budget for forks on a model without a known price (it could not be kept)."""
    from introspect.study.spec import priced

    for spec in dict.fromkeys([model] if model else [str(run.row["model"]) for run in runs]):
        if not priced(spec):
            raise UsageError(
                f"the model {spec} has no known price, so --max-cost-usd cannot be kept: "
                "limit the forks by --max-tokens-total or --max-seconds instead"
            )


async def write_views(runs: list[Run], rows: list[dict[str, Any]], folder: Path) -> None:
    """Each fork that ran to an outcome beside its original, step by step: ``introspect view
    --compare``'s page, which marks the first step where they differ."""
    from introspect.view import write_compare

    stores = {str(run.row["thread_id"]): run.checkpoint for run in runs}
    for row in rows:
        if not row["error"]:
            page = await write_compare(row["thread_id"], row["fork"], folder, stores.get(row["thread_id"]))
            print(f"view: {page}", flush=True)
