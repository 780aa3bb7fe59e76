"""Tables for people: rich tables in the terminal, GitHub Markdown in a file."""

from __future__ import annotations

import os
from pathlib import Path

from nodes.report import Table

WIDE = 160  # characters per line when the output is not a terminal


def terminal(tables: list[Table]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console(soft_wrap=False)
    if not console.is_terminal:  # a pipe or a file: wide enough that tables keep their rows whole
        console = Console(soft_wrap=False, width=WIDE)
    for table in tables:
        shown = RichTable(
            title=table.title,
            caption=table.note or None,
            box=box.SIMPLE_HEAD,
            title_justify="left",
            caption_justify="left",
            show_lines=False,
        )
        for i, column in enumerate(table.columns):
            figures = all(_figure(row[i]) for row in table.rows)
            shown.add_column(column, justify="right" if figures and i else "left", overflow="fold")
        for row in table.rows:
            shown.add_row(*row)
        console.print(shown)
        console.print()


def _figure(text: str) -> bool:
    """A cell that is a number, a cost, a missing value or an interval: right-aligned."""
    return text[:1].isdigit() or text[:1] in "-+$(" or text == "unpriced"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(tables: list[Table], sources: list[str], figures: list[Path], target: Path) -> str:
    """The report as Markdown; figures are linked relative to ``target``'s folder."""
    out = ["# Introspect report", "", "Results: " + ", ".join(f"`{s}`" for s in sources), ""]
    for table in tables:
        out += [
            f"## {table.title}",
            "",
            "| " + " | ".join(_cell(c) for c in table.columns) + " |",
            "|" + "---|" * len(table.columns),
        ]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
        out += ["", f"_{table.note}_", ""] if table.note else [""]
    if figures:
        out += ["## Figures", ""]
        for figure in figures:
            link = Path(os.path.relpath(figure.resolve(), target.resolve().parent)).as_posix()
            out += [f"![{figure.stem}]({link})", ""]
    return "\n".join(out)
