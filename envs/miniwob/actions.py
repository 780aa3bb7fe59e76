"""Paper 002's MiniWoB action grammar (Table 3, Appendix A), parsed from untrusted model text.

    click id=6
    enter "text" to id=10          (a real click on the element, then key presses)
    press ARROWDOWN x 3            (also press ENTER, press TAB, press CTRL+A, ...)
    hold CTRL / release CTRL       (also SHIFT, ALT, META)

Why lenient: the planner writes one action per line, so list markers (``1.``, ``-``), trailing
punctuation, keyword case, curly quotes and quotes inside the typed text must not turn a good
action into an error. Anything else becomes an ``ActionError`` whose message is the feedback the
agent reads; nothing is ever evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.base import ActionParseError

MAX_PRESSES = 50

MODIFIERS = {
    "CTRL": "Control",
    "CONTROL": "Control",
    "SHIFT": "Shift",
    "ALT": "Alt",
    "META": "Meta",
    "CMD": "Meta",
    "COMMAND": "Meta",
}

_ARROWS = {
    name: f"Arrow{d}"
    for d in ("Up", "Down", "Left", "Right")
    for name in (f"ARROW{d.upper()}", f"{d.upper()}ARROW", d.upper())
}
# Names a model may use -> Playwright key names.
KEYS = {
    **_ARROWS,
    "ENTER": "Enter",
    "RETURN": "Enter",
    "TAB": "Tab",
    "SPACE": "Space",
    "SPACEBAR": "Space",
    "BACKSPACE": "Backspace",
    "DELETE": "Delete",
    "DEL": "Delete",
    "ESC": "Escape",
    "ESCAPE": "Escape",
    "HOME": "Home",
    "END": "End",
    "PAGEUP": "PageUp",
    "PAGEDOWN": "PageDown",
    "INSERT": "Insert",
    **{f"F{i}": f"F{i}" for i in range(1, 13)},
}


class ActionError(ActionParseError):
    """A line that is not an action of the grammar; the message is the agent's feedback."""


@dataclass(frozen=True)
class Click:
    id: str


@dataclass(frozen=True)
class Enter:
    text: str
    id: str


@dataclass(frozen=True)
class Press:
    key: str  # Playwright key or chord, e.g. "ArrowDown", "Control+a"
    count: int = 1


@dataclass(frozen=True)
class Hold:
    key: str  # Playwright modifier, e.g. "Control"
    down: bool


Action = Click | Enter | Press | Hold

GRAMMAR = 'click id=N | enter "text" to id=N | press KEY x N | hold CTRL | release CTRL'

_MARKER = re.compile(r"^\s*(?:\d+\s*[.)]|[-*\u2022])\s+")
_ID = r"(?:the\s+)?(?:element\s+)?(?:with\s+)?id\s*[=:]?\s*[\"']?(\d+)[\"']?"
_CLICK = re.compile(rf"^(?:click|tap)\s+(?:on\s+)?{_ID}$", re.I)
_ENTER = re.compile(
    rf"^(?:enter|type)\s+(?:\"(?P<dq>.*)\"|\u201c(?P<cq>.*)\u201d|'(?P<sq>.*)')"
    rf"\s+(?:to|into|in)\s+{_ID}$",
    re.I | re.S,
)
_PRESS = re.compile(r"^press\s+(?:the\s+)?(?P<key>.+?)(?:\s+key)?(?:\s*[x\u00d7*]\s*(?P<n>\d+))?$", re.I)
_HOLD = re.compile(r"^(?P<verb>hold|release)\s+(?:the\s+)?(?P<key>\w+)(?:\s+key)?$", re.I)


def _key(name: str) -> str:
    """One key of a chord in Playwright's naming; single characters stay themselves."""
    upper = re.sub(r"[\s_-]", "", name).upper()
    if upper in MODIFIERS:
        return MODIFIERS[upper]
    if upper in KEYS:
        return KEYS[upper]
    if len(name) == 1 and name.isprintable() and not name.isspace():
        return name.lower() if name.isalpha() else name
    raise ActionError(f"unknown key {name!r}; use e.g. ARROWDOWN, ENTER, TAB, SPACE, CTRL+A")


def parse_action(line: str) -> Action:
    """Parse one action line; raises ActionError (with feedback) when it is not in the grammar."""
    text = _MARKER.sub("", line.strip().strip("`")).strip()
    text = re.sub(r"[.;,]+$", "", text).strip() if not text.endswith(('"', "\u201d", "'")) else text
    if not text:
        raise ActionError(f"empty action; use one of: {GRAMMAR}")
    if match := _CLICK.match(text):
        return Click(match.group(1))
    if match := _ENTER.match(text):
        typed = next(g for g in (match.group("dq"), match.group("cq"), match.group("sq")) if g is not None)
        return Enter(typed, match.group(4))
    if match := _HOLD.match(text):
        key = MODIFIERS.get(match.group("key").upper())
        if key is None:
            wrong = match.group("key")
            raise ActionError(f"can only hold or release CTRL, SHIFT, ALT or META, not {wrong!r}")
        return Hold(key, match.group("verb").lower() == "hold")
    if match := _PRESS.match(text):
        count = int(match.group("n") or 1)
        if not 1 <= count <= MAX_PRESSES:
            raise ActionError(f"press count must be between 1 and {MAX_PRESSES}, not {count}")
        chord = "+".join(_key(part.strip()) for part in match.group("key").split("+"))
        return Press(chord, count)
    first = text.split()[0].lower()
    if first in ("click", "tap", "enter", "type"):
        raise ActionError(
            f"could not read the target of {line.strip()!r}; write it like "
            + ("click id=6" if first in ("click", "tap") else 'enter "text" to id=10')
        )
    raise ActionError(f"unknown action {line.strip()!r}; use one of: {GRAMMAR}")


def canonical(action: Action) -> str:
    """The action written in the grammar (what snapshots record and replay)."""
    if isinstance(action, Click):
        return f"click id={action.id}"
    if isinstance(action, Enter):
        return f'enter "{action.text}" to id={action.id}'
    if isinstance(action, Press):
        return f"press {action.key}" + (f" x {action.count}" if action.count > 1 else "")
    return f"{'hold' if action.down else 'release'} {action.key}"
