"""Turning untrusted model text into structured answers, never by ``eval``.

Every parser returns ``None`` (or raises ``ParseError`` with a sentence the agent can
read) instead of crashing on a malformed reply, so nodes can turn it into feedback.
"""

from __future__ import annotations

import json
import re
from typing import Any

from errors import IntrospectError


class ParseError(IntrospectError, ValueError):
    """The reply did not have the expected form; the message is feedback for the model."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (fenced or bare)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for start in (i for i, ch in enumerate(candidate) if ch == "{"):
            try:
                value, _ = decoder.raw_decode(candidate[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ParseError("no JSON object found in the reply; answer with one JSON object")


def after_label(text: str, label: str) -> str | None:
    """The text after ``label:`` up to the next ``Label:`` line or the end."""
    match = re.search(
        rf"(?:^|\n)\s*(?:#+\s*)?{re.escape(label)}\s*:?\s*(.*?)(?=\n\s*(?:#+\s*)?[A-Z][\w ]{{0,30}}:|\Z)",
        text,
        flags=re.DOTALL | re.IGNORECASE,
    )
    return match.group(1).strip() if match else None


def numbered_list(text: str) -> list[str]:
    """Items of a ``1. ...`` / ``- ...`` list, in order."""
    items = re.findall(r"^\s*(?:\d+[.)]|[-*])\s+(.+?)\s*$", text, flags=re.MULTILINE)
    return [item for item in items if item]
