"""Prompt templates kept as data: one Markdown file per prompt, ``{placeholders}`` in braces.

``load("laser/item_state")`` returns the template; ``render(name, **values)`` fills it and
refuses to leave a placeholder unfilled. Literal braces in a prompt are doubled (``{{``),
as in ``str.format``.
"""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent


class PromptError(KeyError):
    """An unknown prompt or an unfilled placeholder."""


@lru_cache(maxsize=None)
def load(name: str) -> str:
    """The raw template text of prompt ``name`` (``method/prompt``)."""
    path = (ROOT / f"{name}.md").resolve()
    if ROOT not in path.parents or not path.is_file():
        raise PromptError(f"no prompt named {name!r}")
    return path.read_text(encoding="utf-8").strip("\n")


def placeholders(name: str) -> set[str]:
    """The placeholder names a template expects."""
    return {field for _, field, _, _ in string.Formatter().parse(load(name)) if field}


def render(name: str, **values: object) -> str:
    """Fill template ``name``; every placeholder must be given."""
    missing = placeholders(name) - values.keys()
    if missing:
        raise PromptError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
    return load(name).format(**values)


def names() -> list[str]:
    """Every prompt shipped, as ``method/prompt``."""
    return sorted(str(p.relative_to(ROOT).with_suffix("")) for p in ROOT.rglob("*.md"))
