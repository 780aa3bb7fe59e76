"""The report's HTML index page (``index.html``): a file a browser opens with no network. It
leads with the answer (the paper's published numbers beside the reproduced ones, the paired
comparisons with their intervals, the comparison of every configuration), then every figure
(embedded as data: URIs), every other table under its section's heading (none folded away), a
link to the Markdown, and the tasks of a study's sibling ``views/`` folder: per env, each
task's run pages and its comparisons (introspect.report.tasks), then every other page there (a
results file's index). Its tables sort and filter in the page through ``tables.js``, a small
script written beside it (no library, nothing fetched; it works from file://).
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path

from introspect.report import tasks
from introspect.report.contents import Section
from nodes.markup import STYLE
from nodes.report import Config, Table

EXTRA = """
table{border-collapse:collapse;background:#fff;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#eceaf6}.note{color:#555;font-size:12px;max-width:1100px}
.figures{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}img.figure{max-width:min(100%,560px);height:auto;
border:1px solid #ddd;background:#fff}details{margin:8px 0}header a{color:#cfd3ff}
.ok{color:#1d7a35}.bad{color:#b3261e}table.sortable th{cursor:pointer}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
input.filter{display:block;margin:4px 0;padding:2px 6px;width:240px}
"""


def table_html(table: Table) -> str:
    """A table the page's script (``tables.js``) sorts by a clicked column and filters."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    note = f"<p class='note'>{html.escape(table.note)}</p>" if table.note else ""
    return (
        f"<h3>{html.escape(table.title)}</h3><table class='sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>{note}"
    )


SCRIPT = "tables.js"  # shipped beside the page: sorting and filtering of its tables, offline


def script() -> str:
    """The text of ``tables.js``, kept in this package."""
    return (Path(__file__).with_name(SCRIPT)).read_text(encoding="utf-8")


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img class='figure' alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'>"


def _link(page: Path, index: Path, text: str, css: str = "") -> str:
    href = Path(os.path.relpath(page.resolve(), index.resolve().parent)).as_posix()
    return f"<a class='{css}' href='{html.escape(href)}'>{html.escape(text)}</a>"


def _views(configs: list[Config], views: Path, index: Path) -> str:
    """Each env's tasks with their run pages and comparisons found under ``views``
    (introspect.report.tasks), then every other page there."""
    if not views.is_dir():
        return ""
    found = sorted(views.rglob("*.html"))
    pages: dict[str, Path] = {}  # a page by file name (the first, if two folders hold one)
    for path in found:
        pages.setdefault(path.name, path)
    linked: set[Path] = set()

    def link(page: Path, text: str, css: str) -> str:
        linked.add(page)
        return _link(page, index, text, css)

    out = [tasks.tables(configs, pages, link)]
    others = [p for p in found if p not in linked]
    if others:
        listed = "".join(f"<li>{_link(p, index, p.relative_to(views).as_posix())}</li>" for p in others)
        out.append(f"<h3>Other pages</h3><ul>{listed}</ul>")
    return "<h2>Tasks: their runs and comparisons</h2>" + "".join(out)


def _section(section: Section) -> str:
    return f"<h2>{html.escape(section.heading)}</h2>" + "".join(table_html(t) for t in section.tables)


def page(sections: list[Section], figures: list[Path], configs: list[Config], index: Path, views: Path) -> str:
    """The index page written at ``index``: the answer first (``sections[0]``: the paper's numbers
    beside the reproduced ones, the paired comparisons with their intervals, the comparison of
    every configuration), then the figures, each task's pages, and every other section open."""
    answer, rest = sections[0], sections[1:]
    markdown = index.parent / "report.md"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Introspect report</title>"
        f"<style>{STYLE}{EXTRA}</style><script src='{SCRIPT}'></script></head><body><header><h1>Introspect report</h1>"
        f"<div>{len(configs)} configurations · {_link(markdown, index, 'report.md')}</div></header><main>"
        f"{_section(answer)}"
        f"{'<h2>Figures</h2><div class=figures>' + ''.join(map(_figure, figures)) + '</div>' if figures else ''}"
        f"{''.join(_section(s) for s in rest if s.tables)}"
        f"{_views(configs, views, index)}"
        "</main></body></html>"
    )
