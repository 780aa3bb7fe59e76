"""Each task's runs in the report's index, linked: per env, one row per task with each
configuration's runs (one per repeat) linked to their viewer pages, and a link to the page that
compares the env's first configuration with each other one on that task.

The pages are those of a study's ``views/`` folder, found there by file name: a run's page is
named for its thread (``introspect.view.page_name``), a comparison for its two threads
(``introspect.view.compare_name``). ``pairs`` says which runs are compared, both for these links
and for the study, which writes the comparisons beside its viewer pages (``write_comparisons``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspect.report.tables import by_env
from introspect.view import compare_name, page_name
from nodes.report import Config

COMPARE = "compare"  # the folder of views/ that holds the comparisons


@dataclass(frozen=True)
class Pair:
    """Two configurations' runs of one task, compared: the first repeat both ran it in."""

    task: str
    repeat: int
    a: Config
    b: Config
    threads: tuple[str, str]


def pairs(configs: list[Config]) -> list[Pair]:
    """Per env, its first configuration against each other one (as the side-by-side tables
    compare them), on every task both ran with a thread."""
    out = []
    for group in by_env(configs).values():
        base = group[0]
        for other in group[1:]:
            seen: set[str] = set()
            for task, repeat in sorted(base.latest, key=lambda attempt: attempt[1]):
                a, b = base.latest[(task, repeat)], other.latest.get((task, repeat))
                if task in seen or b is None or not a.get("thread_id") or not b.get("thread_id"):
                    continue
                seen.add(task)
                out.append(Pair(task, repeat, base, other, (str(a["thread_id"]), str(b["thread_id"]))))
    return out


def _outcome(row: dict[str, Any]) -> str:
    return "error" if row.get("error") else "success" if row.get("success") else "failure"


def tables(configs: list[Config], found: dict[str, Path], link: Callable[[Path, str, str], str]) -> str:
    """Per env, the task table (a sortable table, ``tables.js``): each configuration's runs of a
    task as links to their pages in ``found`` (file name -> page), then its comparisons; a run
    or comparison without a page is shown unlinked. ``link(page, text, css)``: an <a> to page."""
    compared: dict[tuple[str, int], Pair] = {(p.task, p.b.number): p for p in pairs(configs)}
    out = []
    for env, group in by_env(configs).items():
        others = group[1:]
        head = "".join(f"<th>{html.escape(c.label)}</th>" for c in group)
        head += "".join(f"<th>{html.escape(f'#{group[0].number} vs #{c.number}')}</th>" for c in others)
        runs: dict[str, dict[int, list[tuple[int, dict[str, Any]]]]] = {}  # task -> configuration -> runs
        for c in group:
            for (task, repeat), row in sorted(c.latest.items(), key=lambda item: item[0][1]):
                runs.setdefault(task, {}).setdefault(c.number, []).append((repeat, row))
        rows = []
        for task, ran in runs.items():
            cells = [f"<td>{html.escape(task)}</td>"]
            for c in group:
                shown = []
                for repeat, row in ran.get(c.number, []):
                    text = _outcome(row) if len(c.repeats) == 1 else f"r{repeat} {_outcome(row)}"
                    page = found.get(page_name(str(row["thread_id"]))) if row.get("thread_id") else None
                    css = "ok" if row.get("success") else "bad"
                    shown.append(link(page, text, css) if page else f"<span class='{css}'>{html.escape(text)}</span>")
                cells.append(f"<td>{' '.join(shown) or '-'}</td>")
            for c in others:
                pair = compared.get((task, c.number))
                page = found.get(compare_name(*pair.threads)) if pair else None
                text = "compare" if pair is None or pair.repeat == 1 else f"compare r{pair.repeat}"
                cells.append(f"<td>{link(page, text, '') if page else '-'}</td>")
            rows.append(f"<tr>{''.join(cells)}</tr>")
        out.append(
            f"<h3>Tasks on {html.escape(env)}</h3><table class='sortable tasks'><thead><tr><th>task</th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(out)


async def write_comparisons(files: list[Path], views: Path, checkpoint: str) -> list[Path]:
    """The comparison pages of ``pairs`` over results ``files``, into ``views/compare/``, read
    from ``checkpoint``; a pair whose threads it does not hold is left out."""
    from introspect.report.load import configurations
    from introspect.runner import ThreadError
    from introspect.view import write_compare

    written = []
    for pair in pairs(configurations(files)):
        try:
            written.append(await write_compare(*pair.threads, views / COMPARE, checkpoint))
        except ThreadError:
            continue
    return written
