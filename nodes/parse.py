"""Turning untrusted model text into structured answers, never by ``eval``.

Every parser returns ``None`` (or raises ``ParseError`` with a sentence the agent can
read) instead of crashing on a malformed reply, so nodes can turn it into feedback.
"""

from __future__ import annotations

import json
import re
from typing import Any


class ParseError(ValueError):
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


def yes_no(text: str) -> bool | None:
    """YES/NO at the start of a line or after 'Answer:'; None when neither is clear."""
    found = re.findall(r"\b(yes|no)\b", text, flags=re.IGNORECASE)
    if not found:
        return None
    return found[-1].lower() == "yes" if re.search(r"answer\s*:", text, re.I) else found[0].lower() == "yes"


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


def bracket_action(text: str, verbs: tuple[str, ...]) -> str | None:
    """The last ``verb[argument]`` in ``text`` for one of ``verbs`` (WebShop, HotpotQA)."""
    pattern = rf"\b({'|'.join(map(re.escape, verbs))})\[(.*?)\]"
    found = re.findall(pattern, text, flags=re.DOTALL)
    if not found:
        return None
    verb, argument = found[-1]
    return f"{verb}[{argument.strip()}]"
