"""Reading a report's Markdown back in tests: the body rows of a table under its title."""

from __future__ import annotations


def table(markdown: str, title: str) -> list[list[str]]:
    """The body rows of the Markdown table under ``## title``."""
    section = markdown.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    body = [line for line in section.splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in body]


def header(markdown: str, title: str) -> list[str]:
    """The column names of the Markdown table under ``## title``."""
    section = markdown.split(f"## {title}\n", 1)[1]
    line = next(line for line in section.splitlines() if line.startswith("| "))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def row_of(rows: list[list[str]], *first: str) -> list[str]:
    for r in rows:
        if r[: len(first)] == list(first):
            return r
    raise AssertionError(f"no row {first} in {rows}")
