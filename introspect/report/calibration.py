"""Can a method's own verdicts be trusted? Its verdicts (nodes.runtime.verdicts) set against the outcome.

Every results row lists the verdicts its run gave (``verdicts``: the place's kind, the value read,
whether it ``says`` success, and a graded place's number). Each verdict is one prediction of the
run's outcome (``success``): a verdict that says success predicts 1, one that says failure 0, and
a graded verdict predicts its number. Per method and place the report shows:

- agreement: the share of verdicts whose ``says`` matched the run's success;
- the Brier score: the mean of (prediction - outcome)^2 over the verdicts (Brier 1950): 0 is a
  perfect forecaster, 0.25 one that always says 0.5, 1 one that is always wrong; for a yes/no
  verdict it equals 1 - agreement;
- for a graded place, a reliability diagram: the verdicts binned by their number (``BINS`` equal
  bins over [0, 1]), each bin's mean number against the share of its runs that succeeded; a
  calibrated verdict lies on the diagonal (DeGroot & Fienberg 1983).

A verdict given during the run (an alignment, a subtask check, a Structured Reflection trial
status) is a judgement of a step or a trial, not of the whole task; set against the run's outcome,
it says how far that judgement went with how the run ended, which is what a method that acts on it
relies on. Rows without verdicts (results written before verdicts were recorded, or a method
that declares none) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs import methods
from nodes.report import NONE, Config, Table, mean, number, percent

BINS = 5  # reliability bins over [0, 1]


@dataclass(frozen=True)
class Judged:
    """One verdict as a prediction: ``says`` success or not, the probability of success it implies
    (its graded number, else 1 or 0), and the run's outcome (its success, and its reward)."""

    says: bool
    predicted: float
    outcome: bool
    reward: float = 0.0


def judged(rows: Iterable[Mapping[str, Any]], kind: str) -> list[Judged]:
    """The verdicts of place ``kind`` in ``rows``, each with its run's outcome."""
    out = []
    for row in rows:
        for verdict in row.get("verdicts") or []:
            if verdict.get("kind") == kind:
                says = bool(verdict.get("says"))
                graded = verdict.get("graded")
                predicted = float(graded) if isinstance(graded, int | float) else float(says)
                out.append(Judged(says, predicted, bool(row.get("success")), float(row.get("reward") or 0.0)))
    return out


def agreement(verdicts: list[Judged]) -> float | None:
    """The share of verdicts whose ``says`` matched the outcome (None without verdicts)."""
    return sum(v.says == v.outcome for v in verdicts) / len(verdicts) if verdicts else None


def brier(verdicts: list[Judged]) -> float | None:
    """The mean squared difference between predicted probability and outcome (None without verdicts)."""
    return sum((v.predicted - float(v.outcome)) ** 2 for v in verdicts) / len(verdicts) if verdicts else None


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram: its verdicts' mean predicted probability, the share of
    them whose run succeeded, and how many there are."""

    predicted: float
    observed: float
    count: int


def reliability(verdicts: list[Judged], bins: int = BINS) -> list[Bin]:
    """The non-empty bins of ``verdicts`` by predicted probability, ``bins`` equal bins over [0, 1]
    (a probability of 1 falls in the last)."""
    grouped: dict[int, list[Judged]] = {}
    for v in verdicts:
        grouped.setdefault(min(int(v.predicted * bins), bins - 1), []).append(v)
    return [
        Bin(
            sum(v.predicted for v in group) / len(group),
            sum(v.outcome for v in group) / len(group),
            len(group),
        )
        for _, group in sorted(grouped.items())
    ]


@dataclass
class Calibration:
    """One method's verdicts of one place, over the configurations of the report."""

    method: str
    kind: str
    claim: str
    graded: bool
    verdicts: list[Judged] = field(default_factory=list)
    runs: int = 0  # runs that gave at least one


def calibrations(configs: list[Config]) -> list[Calibration]:
    """Every declared place (``Method.verdicts``, in the registry's order) that gave a verdict in
    ``configs``' rows."""
    out = []
    for method in methods():
        rows = [row for c in configs if c.method == method.name for row in c.ran]
        for place in method.verdicts:
            found = judged(rows, place.kind)
            if found:
                runs = sum(any(v.get("kind") == place.kind for v in row.get("verdicts") or []) for row in rows)
                out.append(Calibration(method.name, place.kind, place.claim, place.graded, found, runs))
    return out


def calibration_table(configs: list[Config]) -> Table | None:
    """The calibration of each method's verdicts, or None when no row lists a verdict."""
    found = calibrations(configs)
    if not found:
        return None
    table = Table(
        "Calibration of the methods' own verdicts",
        [
            "method",
            "verdict",
            "verdicts",
            "runs",
            "says success %",
            "agreed with the outcome %",
            "Brier",
            "mean reward: says success / failure",
            "claims",
        ],
        note="each verdict is set against its run's success: agreed, whether it said success when the run "
        "succeeded or failure when it failed; Brier, the mean squared difference between the probability "
        "the verdict implies (1 or 0, or a graded verdict's number) and the outcome (0 is perfect, 0.25 "
        "always saying 0.5); mean reward, of the runs whose verdict said success, and said failure. A verdict "
        "on a step or a trial is set against how the whole run ended.",
    )
    for c in found:
        says = sum(v.says for v in c.verdicts) / len(c.verdicts)
        score = brier(c.verdicts)
        kind = f"{c.kind} (graded)" if c.graded else c.kind
        table.rows.append(
            [
                c.method,
                kind,
                str(len(c.verdicts)),
                str(c.runs),
                percent(says),
                percent(agreement(c.verdicts)),
                NONE if score is None else number(score, 3),
                " / ".join(number(mean([v.reward for v in c.verdicts if v.says == side]), 3) for side in (True, False)),
                c.claim,
            ]
        )
    return table


def write_figures(plt: Any, configs: list[Config], folder: Path) -> list[Path]:
    """A reliability diagram per method with a graded place (``plt``: matplotlib's pyplot)."""
    out = []
    graded = [c for c in calibrations(configs) if c.graded]
    for method in dict.fromkeys(c.method for c in graded):
        fig, ax = plt.subplots(figsize=(5.5, 5))
        ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="calibrated")
        for c in (c for c in graded if c.method == method):
            points = reliability(c.verdicts)
            ax.plot(
                [b.predicted for b in points],
                [b.observed for b in points],
                marker="o",
                label=f"{c.kind} (n={len(c.verdicts)}, Brier {number(brier(c.verdicts), 3)})",
            )
            for b in points:
                ax.annotate(str(b.count), (b.predicted, b.observed), textcoords="offset points", xytext=(4, 4))
        ax.set(
            title=f"{method}: reliability of its graded verdicts",
            xlabel="the verdict's number (mean per bin)",
            ylabel="runs that succeeded (share per bin)",
            xlim=(-0.02, 1.02),
            ylim=(-0.02, 1.02),
        )
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=9)
        path = folder / f"reliability_{method}.png"
        fig.savefig(path, bbox_inches="tight")
        plt.close(fig)
        out.append(path)
    return out
