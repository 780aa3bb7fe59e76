"""Prompt templates kept as data: one Markdown file per prompt, ``{placeholders}`` in braces.

``load("laser/item_state")`` returns the template; ``render(name, **values)`` fills it and
refuses to leave a placeholder unfilled. Literal braces in a prompt are doubled (``{{``),
as in ``str.format``.

A method declares its prompt folder (``Method.prompts``): the shipped methods a folder of this
package (``SHIPPED.folder("laser")``), a method kept elsewhere its own (``Templates(path)``,
whose names are relative to that folder), so a new method's prompts need no file here.

Every template is read once, when its ``Templates`` is made (this package's at import, a
method's own when its module is imported): nodes render prompts on the event loop, where a
file read would block (LangGraph's server refuses blocking calls).
"""

from __future__ import annotations

import string
from pathlib import Path

from errors import IntrospectError

ROOT = Path(__file__).resolve().parent


class PromptError(IntrospectError, KeyError):
    """An unknown prompt or an unfilled placeholder: a bug (the code names the prompts and
    fills them), so not a user error."""


class Templates:
    """The prompt files under one folder, by name: their path in it without ``.md``."""

    def __init__(self, root: Path, texts: dict[str, str] | None = None) -> None:
        self.root = root
        self._texts = texts if texts is not None else _read(root)

    def folder(self, name: str) -> Templates:
        """The templates under subfolder ``name``, named relative to it (no file is read again)."""
        prefix = f"{name.strip('/')}/"
        return Templates(
            self.root / name, {key[len(prefix) :]: text for key, text in self._texts.items() if key.startswith(prefix)}
        )

    def load(self, name: str) -> str:
        """The raw template text of prompt ``name``."""
        try:
            return self._texts[name]
        except KeyError:
            raise PromptError(f"no prompt named {name!r}") from None

    def placeholders(self, name: str) -> set[str]:
        """The placeholder names a template expects."""
        return {field for _, field, _, _ in string.Formatter().parse(self.load(name)) if field}

    def render(self, name: str, **values: object) -> str:
        """Fill template ``name``; every placeholder must be given."""
        missing = self.placeholders(name) - values.keys()
        if missing:
            raise PromptError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
        return self.load(name).format(**values)

    def variant(self, view: str, name: str) -> str:
        """``view/name`` when a paper wrote prompt ``name`` for that view of an env (its own
        grammar and screens), else the generic ``name``."""
        specific = f"{view}/{name}"
        return specific if view and specific in self else name

    def __contains__(self, name: object) -> bool:
        return name in self._texts

    def names(self) -> list[str]:
        """Every template's name, sorted."""
        return sorted(self._texts)


def _read(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).with_suffix("").as_posix(): path.read_text(encoding="utf-8").strip("\n")
        for path in sorted(root.rglob("*.md"))
    }


SHIPPED = Templates(ROOT)  # every prompt of this package, as ``method/prompt``


def load(name: str) -> str:
    """The raw template text of shipped prompt ``name`` (``method/prompt``)."""
    return SHIPPED.load(name)


def placeholders(name: str) -> set[str]:
    """The placeholder names a shipped template expects."""
    return SHIPPED.placeholders(name)


def render(name: str, **values: object) -> str:
    """Fill shipped template ``name``; every placeholder must be given."""
    return SHIPPED.render(name, **values)


def variant(method: str, view: str, name: str) -> str:
    """``method/view/name`` when a paper wrote prompt ``name`` for that view of an env, else the
    method's generic ``method/name``. Read from the templates loaded at import, so choosing
    costs no file access on the event loop."""
    specific = f"{method}/{view}/{name}"
    return specific if view and specific in SHIPPED else f"{method}/{name}"


def names() -> list[str]:
    """Every prompt shipped, as ``method/prompt``."""
    return SHIPPED.names()
