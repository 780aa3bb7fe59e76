"""What each introspective intervention earned: the report's tables of ``introspect ablate``'s
rows (introspect.ablation), one per method.

A row pairs a run with its fork before the intervention's first time in the run, run on without
it (``count`` 1; later times, written by ``ablate --each``, are within the same run and are not
independent pairs, so they are left out of the comparison). Per env and intervention kind the
table gives the runs it happened in and how often per run, success with and without it, their
paired difference (with minus without, what the intervention earned) with the percentile
bootstrap interval of introspect.report.stats and the paired sign-flip test of
introspect.report.decisions, the reward difference, and the model calls, tokens and cost the
intervention added (the run's totals minus the fork's: negative when the run without it spent
more). A fork that ended in an error ran to no outcome: it is counted apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphs import methods
from introspect.report.decisions import paired_p
from introspect.report.load import ReportInputError
from introspect.report.stats import RESAMPLES, SEED, paired_bootstrap
from introspect.report.tables import interval
from nodes.report import NONE, Table, mean, number, percent
from nodes.runtime.usage import sum_costs

ABLATIONS = "ablations.jsonl"  # a study's ablation results, beside its spec.toml (the default of ablate)
ABLATION_KEYS = ("thread_id", "method", "env", "intervention", "count", "with", "without")


def read_ablations(path: Path) -> list[dict[str, Any]]:
    """The rows of an ablation results file; ReportInputError when it is not one (the latest row
    of each thread, kind and count wins, as a re-run after an error appends one; a torn last line,
    an ablation killed mid-write, is skipped)."""
    if not path.is_file():
        raise ReportInputError(f"ablation results not found: {path}")
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    lines = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
    for position, (number_, line) in enumerate(lines):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if position == len(lines) - 1 and latest:  # a torn last line: ablate skips it too
                continue
            raise ReportInputError(f"{path} is not JSONL: line {number_} is not JSON") from None
        if not isinstance(row, dict) or any(key not in row for key in ABLATION_KEYS):
            raise ReportInputError(f"{path} line {number_} is not a row of `introspect ablate`")
        latest[(str(row["thread_id"]), str(row["intervention"]), int(row["count"]))] = row
    return list(latest.values())


def _added(rows: list[dict[str, Any]], *keys: str) -> float | None:
    """The mean over rows of what the run spent minus what its fork spent (``keys`` summed)."""
    return mean([sum(float(r["with"].get(k) or 0) - float(r["without"].get(k) or 0) for k in keys) for r in rows])


def _cost_added(rows: list[dict[str, Any]]) -> str:
    spent = sum_costs(r["with"].get("cost_usd") for r in rows)
    without = sum_costs(r["without"].get("cost_usd") for r in rows)
    if spent is None or without is None or not rows:
        return NONE
    return f"${(spent - without) / len(rows):+.4f}"


def ablations_in(paths: list[Path], given: list[Path]) -> list[dict[str, Any]]:
    """The ablation rows of the files ``given`` and of the study folders among ``paths`` that hold
    ``ablations.jsonl``."""
    found = [*given, *(p / ABLATIONS for p in paths if p.is_dir() and (p / ABLATIONS).is_file())]
    return [row for path in dict.fromkeys(found) for row in read_ablations(path)]


def ablation_tables(rows: list[dict[str, Any]]) -> list[Table]:
    """One table per method with ablation rows, in the registry's order."""
    tables = []
    for method in methods():
        mine = [r for r in rows if r["method"] == method.name]
        if not mine:
            continue
        what = {i.kind: i.what for i in method.interventions}
        table = Table(
            f"{method.title}: what each intervention earned (counterfactual ablation)",
            [
                "env",
                "intervention",
                "runs it happened in",
                "times per run",
                "success % with",
                "success % without",
                "with - without (points) [95% CI]",
                "p",
                "reward with - without (x100) [95% CI]",
                "calls added",
                "tokens added",
                "cost added",
                "forks errored",
            ],
            note="each run forked before the intervention's first time in it and run on with it switched off "
            f"(introspect ablate); differences are paired by run, with a percentile bootstrap 95% interval "
            f"({RESAMPLES} resamples, seed {SEED}) and the paired sign-flip test's p; added: the run's calls, "
            "tokens and cost minus its fork's, per run. " + " ".join(f"{kind}: {text}." for kind, text in what.items()),
        )
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in mine:
            groups.setdefault((str(row["env"]), str(row["intervention"])), []).append(row)
        for (env, kind), group in groups.items():
            firsts = [r for r in group if int(r["count"]) == 1]
            paired = [r for r in firsts if not r.get("error")]
            was = [float(bool(r["with"]["success"])) for r in paired]
            now = [float(bool(r["without"]["success"])) for r in paired]
            success = paired_bootstrap(now, was)
            reward = paired_bootstrap(
                [float(r["without"]["reward"] or 0) for r in paired], [float(r["with"]["reward"] or 0) for r in paired]
            )
            table.rows.append(
                [
                    env,
                    kind,
                    str(len(firsts)),
                    number(mean([float(r.get("fired") or 1) for r in firsts]), 1),
                    percent(mean(was)),
                    percent(mean(now)),
                    interval(success, 100, ""),
                    f"{paired_p(now, was):.4f}" if paired else NONE,
                    interval(reward, 100, ""),
                    number(_added(paired, "model_calls"), 1),
                    number(_added(paired, "input_tokens", "output_tokens"), 0),
                    _cost_added(paired),
                    str(len(firsts) - len(paired)),
                ]
            )
        tables.append(table)
    return tables
