"""Reading what ``introspect eval`` and ``introspect train`` wrote, checked before anything
is printed or written.

A results file is JSONL, one row per task (graphs.app.evaluate). Rows are grouped into
configurations the way ``eval`` itself groups them: method, env, model and settings
fingerprint; within one, the latest row of a task wins (a re-run after an error appends a
new row), across every file given, in the order given. A torn last line (an evaluation
killed mid-write) is skipped, as ``eval`` skips it; any other line that is not a JSON
object with a ``task_id`` makes the file unreadable as results: one line, exit 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.app.options import UsageError

ConfigKey = tuple[str, str, str, str]  # method, env, model, fingerprint
REQUIRED = ("task_id", "method", "env", "model", "success")


class ReportInputError(UsageError):
    """A file the report cannot read: one line, exit 2, nothing written."""


@dataclass
class Config:
    """One evaluated configuration and its latest row per task."""

    number: int  # 1, 2, ... in the order first seen: tables name a configuration "#N method"
    method: str
    env: str
    model: str
    fingerprint: str
    settings: dict[str, Any]
    sources: list[str] = field(default_factory=list)  # the files its rows came from
    by_task: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return list(self.by_task.values())

    @property
    def ran(self) -> list[dict[str, Any]]:
        """Rows that ran to an outcome: an error row is not a failure (graphs.app.evaluate)."""
        return [r for r in self.by_task.values() if not r.get("error")]

    @property
    def label(self) -> str:
        """``#N method env``: short enough for a table column; ``description`` says the rest."""
        return f"#{self.number} {self.method} {self.env}"

    @property
    def model_name(self) -> str:
        """The model spec, a script named by its file (``scripted:run.jsonl``), not its folders."""
        provider, sep, name = self.model.partition(":")
        return f"{provider}{sep}{Path(name).name}" if provider in ("scripted", "replay") else self.model

    def limit(self, key: str) -> int:
        """A limit the runs had (``max_trials``, ``max_episodes``): the setting (rows keep the
        settings that differ from the defaults), else the method's default."""
        from graphs import method_named

        value = self.settings.get(key)
        return int(value if value is not None else method_named(self.method).context.default(key))

    @property
    def caveat(self) -> str:
        """What its rows' env said about comparing them with the paper (each distinct caveat
        once, in row order; "" when none did)."""
        return "; ".join(dict.fromkeys(str(r["caveat"]) for r in self.rows if r.get("caveat")))

    @property
    def settings_text(self) -> str:
        """The settings that differ from the defaults, ``key=value`` (long values cut)."""
        return " ".join(f"{k}={_short(v)}" for k, v in sorted(self.settings.items())) or "defaults"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


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
                continue
            raise ReportInputError(f"{path} is not JSONL: line {number} is not JSON") from None
        missing = [key for key in REQUIRED if key not in row] if isinstance(row, dict) else list(REQUIRED)
        if missing:
            raise ReportInputError(
                f"{path} line {number} is not a results row of `introspect eval` (no {', '.join(missing)})"
            )
        rows.append(row)
    if not rows:
        raise ReportInputError(f"{path} holds no results")
    return rows


def configurations(paths: list[Path]) -> list[Config]:
    """Every configuration in ``paths``, in the order first seen."""
    configs: dict[ConfigKey, Config] = {}
    for path in paths:
        for row in read_results(path):
            key = (str(row["method"]), str(row["env"]), str(row["model"]), str(row.get("fingerprint", "")))
            if key not in configs:
                configs[key] = Config(len(configs) + 1, *key, dict(row.get("settings") or {}))
            config = configs[key]
            if str(path) not in config.sources:
                config.sources.append(str(path))
            config.by_task.pop(str(row["task_id"]), None)  # the latest row goes last, in file order
            config.by_task[str(row["task_id"])] = row
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
