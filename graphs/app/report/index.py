"""The report's HTML index page (``index.html``): one self-contained file a browser opens with
no network. It holds the comparison table, every figure (embedded as data: URIs, so the page
needs no other file), every other table folded away, a link to the Markdown, and the viewer
pages of a study's sibling ``views/`` folder: each run's page (found by its thread id, as
``introspect view`` names it) under its configuration, then every other page there (a results
file's index, a comparison of two runs).
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path

from graphs.app.view import page_name
from nodes.markup import STYLE
from nodes.report import Config, Table

EXTRA = """
table{border-collapse:collapse;background:#fff;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#eceaf6}.note{color:#555;font-size:12px;max-width:1100px}
.figures{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}img.figure{max-width:min(100%,560px);height:auto;
border:1px solid #ddd;background:#fff}details{margin:8px 0}header a{color:#cfd3ff}
ul.runs{columns:3;list-style:none;padding:0}.ok{color:#1d7a35}.bad{color:#b3261e}
"""


def table_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    note = f"<p class='note'>{html.escape(table.note)}</p>" if table.note else ""
    return f"<h3>{html.escape(table.title)}</h3><table><tr>{head}</tr>{body}</table>{note}"


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img class='figure' alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'>"


def _link(page: Path, index: Path, text: str, css: str = "") -> str:
    href = Path(os.path.relpath(page.resolve(), index.resolve().parent)).as_posix()
    return f"<a class='{css}' href='{html.escape(href)}'>{html.escape(text)}</a>"


def _views(configs: list[Config], views: Path, index: Path) -> str:
    """Each configuration's run pages found under ``views``, then every other page there."""
    if not views.is_dir():
        return ""
    found = sorted(views.rglob("*.html"))
    pages: dict[str, Path] = {}  # a thread's page by file name (the first, if two folders hold one)
    for path in found:
        pages.setdefault(path.name, path)
    linked: set[Path] = set()
    out = []
    for c in configs:
        items = []
        for (task, repeat), row in c.latest.items():
            page = pages.get(page_name(str(row["thread_id"]))) if row.get("thread_id") else None
            if page is None:
                continue
            linked.add(page)
            name = task if repeat == 1 else f"{task} r{repeat}"
            mark = "error" if row.get("error") else "success" if row.get("success") else "failure"
            css = "ok" if mark == "success" else "bad"
            items.append(f"<li>{_link(page, index, name, css)} ({mark})</li>")
        if items:
            out.append(f"<h3>{html.escape(c.label)}</h3><ul class='runs'>{''.join(items)}</ul>")
    others = [p for p in found if p not in linked]
    if others:
        listed = "".join(f"<li>{_link(p, index, p.relative_to(views).as_posix())}</li>" for p in others)
        out.append(f"<h3>Other pages</h3><ul>{listed}</ul>")
    return "<h2>Viewer pages</h2>" + "".join(out) if out else ""


def page(tables: list[Table], figures: list[Path], configs: list[Config], index: Path, views: Path) -> str:
    """The index page written at ``index``; ``tables[0]`` is the comparison, shown first."""
    first, rest = tables[0], tables[1:]
    folded = "".join(table_html(t) for t in rest)
    markdown = index.parent / "report.md"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Introspect report</title>"
        f"<style>{STYLE}{EXTRA}</style></head><body><header><h1>Introspect report</h1>"
        f"<div>{len(configs)} configurations · {_link(markdown, index, 'report.md')}</div></header><main>"
        f"{table_html(first)}"
        f"{'<h2>Figures</h2><div class=figures>' + ''.join(map(_figure, figures)) + '</div>' if figures else ''}"
        f"{_views(configs, views, index)}"
        f"<details><summary>Every table</summary>{folded}</details>"
        "</main></body></html>"
    )
