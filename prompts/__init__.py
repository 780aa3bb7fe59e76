"""Prompt templates kept as data: one Markdown file per prompt, ``{placeholders}`` in braces.

``load("laser/item_state")`` returns the template; ``render(name, **values)`` fills it and
refuses to leave a placeholder unfilled. Literal braces in a prompt are doubled (``{{``),
as in ``str.format``.

Every template is read once, when this package is imported: nodes render prompts on the
event loop, where a file read would block (LangGraph's server refuses blocking calls).
"""

from __future__ import annotations

import string
from pathlib import Path

from errors import IntrospectError

ROOT = Path(__file__).resolve().parent


class PromptError(IntrospectError, KeyError):
    """An unknown prompt or an unfilled placeholder: a bug (the code names the prompts and
    fills them), so not a user error."""


def _read_all() -> dict[str, str]:
    return {
        path.relative_to(ROOT).with_suffix("").as_posix(): path.read_text(encoding="utf-8").strip("\n")
        for path in sorted(ROOT.rglob("*.md"))
    }


_TEMPLATES = _read_all()


def load(name: str) -> str:
    """The raw template text of prompt ``name`` (``method/prompt``)."""
    try:
        return _TEMPLATES[name]
    except KeyError:
        raise PromptError(f"no prompt named {name!r}") from None


def placeholders(name: str) -> set[str]:
    """The placeholder names a template expects."""
    return {field for _, field, _, _ in string.Formatter().parse(load(name)) if field}


def render(name: str, **values: object) -> str:
    """Fill template ``name``; every placeholder must be given."""
    missing = placeholders(name) - values.keys()
    if missing:
        raise PromptError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
    return load(name).format(**values)


def variant(method: str, view: str, name: str) -> str:
    """``method/view/name`` when a paper wrote prompt ``name`` for that view of an env (its own
    grammar and screens), else the method's generic ``method/name``. Read from the templates
    loaded at import, so choosing costs no file access on the event loop."""
    specific = f"{method}/{view}/{name}"
    return specific if view and specific in _TEMPLATES else f"{method}/{name}"


def names() -> list[str]:
    """Every prompt shipped, as ``method/prompt``."""
    return sorted(_TEMPLATES)
