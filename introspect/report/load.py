"""Reading what ``introspect eval`` and ``introspect train`` wrote, checked before anything
is printed or written.

A results file is JSONL, one row per task (introspect.evaluate). Rows are grouped into
configurations the way ``eval`` itself groups them: method, env, model and settings
fingerprint, and a study run's ``label`` when the rows carry one; within one, the latest row
of a task in each repeat (``repeat``, 1 when absent) wins (a re-run after an error appends a
new row), across every file given, in the order given. A torn last line (an evaluation
killed mid-write) is skipped, as ``eval`` skips it, and said on stderr with the rows read; any
other line that is not a JSON object with a ``task_id``, or a row whose counts are not numbers,
makes the file unreadable as results: one line, exit 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from introspect.options import UsageError
from nodes.report import Config, repeat_of

ConfigKey = tuple[str, str, str, str, str]  # method, env, model, fingerprint, study run label
REQUIRED = ("task_id", "method", "env", "model", "success")
# what the report adds up: a number when present (cost_usd is null for an unpriced model)
NUMBERS = ("reward", "steps", "model_calls", "input_tokens", "output_tokens", "cost_usd", "seconds")


class ReportInputError(UsageError):
    """A file the report cannot read: one line, exit 2, nothing written."""


def read_results(path: Path) -> list[dict[str, Any]]:
    """The rows of one results file; ReportInputError when it is missing, empty or not results."""
    if not path.is_file():
        raise ReportInputError(f"results file not found: {path}" if not path.exists() else f"{path} is not a file")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"cannot read {path} as text: {exc}") from None
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    rows: list[dict[str, Any]] = []
    for position, (number, line) in enumerate(numbered):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if position == len(numbered) - 1 and rows:  # a torn last line: eval skips it too
                print(
                    f"introspect: {path} line {number} is cut short (a write was interrupted): "
                    f"skipped, {len(rows)} rows read",
                    file=sys.stderr,
                )
                continue
            raise ReportInputError(f"{path} is not JSONL: line {number} is not JSON") from None
        missing = [key for key in REQUIRED if key not in row] if isinstance(row, dict) else list(REQUIRED)
        if missing:
            raise ReportInputError(
                f"{path} line {number} is not a results row of `introspect eval` (no {', '.join(missing)})"
            )
        for key in NUMBERS:
            value = row.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise ReportInputError(f"{path} line {number}: {key} is {value!r}, not a number")
        rows.append(row)
    if not rows:
        raise ReportInputError(f"{path} holds no results")
    return rows


def configurations(paths: list[Path]) -> list[Config]:
    """Every configuration in ``paths``, in the order first seen."""
    configs: dict[ConfigKey, Config] = {}
    for path in paths:
        for row in read_results(path):
            method, env, model, fingerprint, label = key = (
                str(row["method"]),
                str(row["env"]),
                str(row["model"]),
                str(row.get("fingerprint", "")),
                str(row.get("label") or ""),
            )
            if key not in configs:
                settings = dict(row.get("settings") or {})
                configs[key] = Config(len(configs) + 1, method, env, model, fingerprint, settings, label)
            config = configs[key]
            if str(path) not in config.sources:
                config.sources.append(str(path))
            attempt = (str(row["task_id"]), repeat_of(row))
            config.latest.pop(attempt, None)  # the latest row goes last, in file order
            config.latest[attempt] = row
    return list(configs.values())


def read_training(path: Path) -> dict[str, Any]:
    """A plan record ``introspect train`` wrote (JSON with its per-iteration history)."""
    if not path.is_file():
        raise ReportInputError(f"training record not found: {path}")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise ReportInputError(
            f"{path} is not JSON: give the plans file `introspect train` wrote (--plan-out)"
        ) from None
    if not isinstance(record, dict) or not isinstance(record.get("history"), list):
        raise ReportInputError(f"{path} is not a plan record of `introspect train` (no history)")
    return record
