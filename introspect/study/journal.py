"""A study's journal: one JSON line per event (a session started, a run's repeat began or
ended, a budget stopped the study), appended whole and flushed, so a killed study still says
what it did. ``plan`` events record each run's identity (method, env, model, settings
fingerprint, tasks): what a later session compares its spec with, and what ``status`` reads.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

NAME = "journal.jsonl"


def append(folder: Path, event: str, **fields: Any) -> None:
    """Add one event (blocking: callers on an event loop send it to a thread)."""
    line = {"event": event, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **fields}
    with (folder / NAME).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def events(folder: Path) -> list[dict[str, Any]]:
    """Every event so far (a torn last line from a kill is left out)."""
    path = folder / NAME
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def latest_plan(folder: Path) -> list[dict[str, Any]] | None:
    """The runs of the latest session's plan, or None when no session has started."""
    plans = [e for e in events(folder) if e.get("event") == "plan"]
    return plans[-1]["runs"] if plans else None
