"""The paper's action grammar (Sec. 3.3, Table 3), read from untrusted model text.

A plan is one action per line. Models decorate lines (``1.``, ``- ``, backticks, a final
period, "click on id 5") so each line is normalised to the canonical form the MiniWoB env
grounds: ``click id=N``, ``enter "text" to id=N``, ``press KEY`` / ``press KEY x N``,
``hold KEY`` / ``release KEY``. A line that starts like an action but cannot be read is
*malformed* (it becomes exception feedback); a line that does not start with an action
verb at all is commentary and is skipped. Nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VERBS = ("click", "tap", "enter", "type", "press", "hold", "release")
# Reflections often say "you should have clicked id=7": past tense -> the verb.
_PAST = {"clicked": "click", "tapped": "click", "entered": "enter", "typed": "type",
         "pressed": "press", "held": "hold", "released": "release"}

_MARKER = re.compile(r"^\s*(?:(?:step\s*)?\d+\s*[.):]|[-*\u2022>])\s*", re.I)
_QUOTES = "\"'`\u201c\u201d"
_ID = r"id\s*[=:#]?\s*(\d+)"
_CLICK = re.compile(rf"^(?:click|tap)\b.*?\b{_ID}", re.I)
_ENTER = re.compile(
    rf"^(?:enter|type)\s+[\"\u201c](.*)[\"\u201d]\s+(?:to|into|in|on)\s+(?:the\s+)?(?:[\w-]+\s+)?{_ID}",
    re.I | re.S,
)
_PRESS = re.compile(r"^press\s+([A-Za-z0-9_]+(?:\s*\+\s*[A-Za-z0-9_]+)*)(?:\s*[x\u00d7*]\s*(\d+))?\s*$", re.I)
_TOGGLE = re.compile(r"^(hold|release)\s+([A-Za-z]+)\s*$", re.I)


@dataclass(frozen=True)
class ParsedLine:
    """A canonical action, or the original text with the reason it could not be read."""

    action: str
    error: str = ""


def _clean(line: str) -> str:
    """Strip list markers, wrapping backticks/quotes and a trailing period or comma."""
    text = _MARKER.sub("", line.strip(), count=1).strip().strip("`").strip()
    lowered = text.lstrip(_QUOTES).lower()
    if text and text[0] in _QUOTES and lowered.startswith(VERBS):
        text = text[1:]
        if text.count('"') % 2 == 1 and text.endswith(tuple(_QUOTES)):  # the wrapper's closing quote
            text = text[:-1]
        elif text.endswith(("'", "`", "\u201d")):
            text = text[:-1]
    text = text.strip()
    while text and text[-1] in ".,;":
        text = text[:-1].rstrip()
    first, _, rest = text.partition(" ")
    if first.lower() == "have":  # "have clicked id=7"
        first, _, rest = rest.partition(" ")
    verb = _PAST.get(first.lower(), first)
    return f"{verb} {rest}".strip()


def starts_like_action(text: str) -> bool:
    """Does the (cleaned) text begin with one of the grammar's verbs?"""
    word = re.match(r"[A-Za-z]+", text)
    return bool(word) and word.group(0).lower() in VERBS


def parse_action(text: str) -> ParsedLine:
    """One action in canonical form, or the text with an error for the model."""
    line = _clean(text)
    if match := _CLICK.match(line):
        return ParsedLine(f"click id={int(match.group(1))}")
    if match := _ENTER.match(line):
        return ParsedLine(f'enter "{match.group(1)}" to id={int(match.group(2))}')
    if match := _PRESS.match(line):
        key = re.sub(r"\s+", "", match.group(1)).upper()
        count = int(match.group(2)) if match.group(2) else 1
        return ParsedLine(f"press {key}" + (f" x {count}" if count != 1 else ""))
    if match := _TOGGLE.match(line):
        return ParsedLine(f"{match.group(1).lower()} {match.group(2).upper()}")
    return ParsedLine(
        line,
        f'"{line}" is not an action: use "click id=N", "enter "text" to id=N", '
        '"press KEY x N", "hold KEY" or "release KEY".',
    )


def read_plan(text: str) -> list[ParsedLine]:
    """The actions of a plan, one per line; commentary lines are skipped."""
    lines = []
    for raw in text.splitlines():
        cleaned = _clean(raw)
        if cleaned and starts_like_action(cleaned):
            lines.append(parse_action(raw))
    return lines


def kind(action: str) -> str:
    """click / enter / press / hold / release for a canonical action."""
    return action.split(" ", 1)[0]


def click_id(action: str) -> int | None:
    """The target id of a canonical click, else None."""
    match = re.fullmatch(r"click id=(\d+)", action)
    return int(match.group(1)) if match else None


def target_id(action: str) -> int | None:
    """The element id a canonical click or enter acts on, else None."""
    match = re.search(r"id=(\d+)$", action) if kind(action) in ("click", "enter") else None
    return int(match.group(1)) if match else None
