"""Plan lines and reflection suggestions read as actions of the env's grammar.

The grammar itself (MiniWoB's ``click id=N``, ``enter "text" to id=N``, ``press KEY x N``; WebShop's
``search[..]``; ALFWorld's commands; ...), the words its actions start with and its canonical
spelling belong to the env (its ``interface``: ``parse_action``, ``verbs``, ``answer_action``); this
module adds what is particular to reading a *plan* or a *reflection*: a plan is one action per
line among commentary ("Your plan:", code fences, "That is all."), lines come numbered
("1.", "Step 2:"), wrapped in quotes, with a remark after the target id ("click id=7 (the OK
button)"), and reflections use the past tense ("you should have clicked id=7"). A line that
starts with an action verb of the env but is not an action is *malformed* (exception feedback); a
line without one is commentary and is skipped. An env whose tasks end with an answer
(``answer_action``, e.g. WebArena's ``stop [answer]``) takes that line as an action too. Nothing is
ever evaluated.

The paper's code reads less, and that is the default on MiniWoB (``plan_reading="code"``,
``read_plan_as_code``): it executes every line of the reply as it stands, sorted by how the line
starts (``util.categorize_action``): a line that starts with click, tap or move clicks the first
number in it, or, without one, the id the model names when asked (a grounding call, made where
the click is executed); press, type/enter and hold/release lines are actions; a line that starts
otherwise (a list marker, "Your plan:", commentary) is executed as nothing, so the trial ends
with "no change"; a blank line ends the plan. ``plan_reading="actions"`` (``read_plan``) reads the
plan for its actions instead (the paper asks for "a list of atomic actions", Appendix B, and
halts a plan at a non-executable action, Sec. 4.3: a malformed action line ends the trial with
"exception"). For a reply that is a bare list of actions, as the paper asks, both read the same
actions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from envs.base import ActionParseError, Interface

_PAST = {
    "clicked": "click",
    "tapped": "click",
    "entered": "enter",
    "typed": "type",
    "pressed": "press",
    "held": "hold",
    "released": "release",
}

_MARKER = re.compile(r"^\s*(?:(?:step\s*)?\d+\s*[.):]|[-*\u2022>])\s*", re.I)
_QUOTES = "\"'`\u201c\u201d"
# Everything after the last target id of a click/enter is a remark: "click id=7 (the OK button)".
_REMARK = re.compile(r"^(.*\bid\s*[=:]?\s*[\"']?\d+[\"']?)(?!\d)\s*(?:[(\[,:;\u2013\u2014-]|\s(?=\D)).*$", re.I | re.S)
_FULL_STOP = re.compile(r"(?<=[\w\])])\.$")


Reading = Literal["ground", "noop"]


@dataclass(frozen=True)
class ParsedLine:
    """A canonical action, or the original text with the reason it could not be read.

    Read as the paper's code reads a plan: ``written`` is the line as the plan wrote it (what
    the code shows the model of that step, when it differs from the action), and ``reading``
    marks a click whose id the model is asked for (``ground``) or a line executed as nothing
    (``noop``); ``action`` is then the line itself.
    """

    action: str
    error: str = ""
    written: str = ""
    reading: Reading | None = None


def _first_word(text: str) -> str:
    match = re.match(r"[A-Za-z_]+", text)
    return match.group(0).lower() if match else ""


def verbs(interface: Interface) -> tuple[str, ...]:
    """The words an action line starts with: the grammar's, and the answer action's."""
    answer = _first_word(interface.answer_action or "")
    return (*interface.verbs, answer) if answer else interface.verbs


def _clean(line: str, interface: Interface) -> str:
    """Strip list markers, wrapping quotes/backticks, past tense and a remark after the id."""
    text = _MARKER.sub("", line.strip(), count=1).strip().strip("`").strip()
    if text and text[0] in _QUOTES and _first_word(text[1:]) in verbs(interface):
        text = text[1:]
        if text.count('"') % 2 == 1 and text.endswith(tuple(_QUOTES)):  # the wrapper's closing quote
            text = text[:-1]
        elif text.endswith(("'", "`", "\u201d")):
            text = text[:-1]
    first, _, rest = text.strip().partition(" ")
    if first.lower() == "have":
        first, _, rest = rest.partition(" ")
    text = f"{_PAST.get(first.lower(), first)} {rest}".strip()
    if _first_word(text) in ("click", "tap", "enter", "type") and (match := _REMARK.match(text)):
        text = match.group(1)
    return text


def _answer(line: str, interface: Interface) -> str | None:
    """The line as the env's answer action (``stop [Walnut]``), or None when it is not one."""
    if not interface.answer_action:
        return None
    head, _, tail = interface.answer_action.partition("{answer}")
    loose = r"\s*".join(re.escape(part) for part in head.split())  # "stop [" also as "stop["
    match = re.fullmatch(rf"{loose}\s*(.*?)\s*{re.escape(tail)}", line, re.IGNORECASE | re.DOTALL)
    return f"{head}{match.group(1)}{tail}" if match else None


def parse_action(text: str, interface: Interface) -> ParsedLine:
    """One action in the env's canonical form, or the text with the env's feedback."""
    line = _clean(text, interface)
    if (answer := _answer(line, interface)) is not None:
        return ParsedLine(answer)
    # "you should go to countertop 1." ends a sentence: its full stop is not part of the action
    # (MiniWoB's parser drops it itself; ALFWorld's would keep it in the command)
    sentence = _FULL_STOP.sub("", line)
    for candidate in dict.fromkeys((sentence, line)):
        try:
            return ParsedLine(interface.parse_action(candidate))
        except ActionParseError as problem:
            error = f'"{line}" is not an action: {problem}'
    return ParsedLine(line, error)


def read_plan(text: str, interface: Interface) -> list[ParsedLine]:
    """The actions of a plan, one per line; lines without an action verb are skipped.

    A blank line after the first action ends the plan, as in the paper's code (its plan
    follower stops at an empty line, and the next stage plans on the screen reached).
    """
    lines: list[ParsedLine] = []
    for raw in text.splitlines():
        if not raw.strip() and lines:
            break
        if _first_word(_clean(raw, interface)) in verbs(interface):
            lines.append(parse_action(raw, interface))
    return lines


ORIGINAL_CLICKS = ("click", "tap", "move")  # the paper's code calls these clicks (util.categorize_action)
# how the paper's code sorts the rest of a plan's lines (util.categorize_action, after its clicks)
_ORIGINAL_ACTIONS = ("press", "type", "enter", "hold", "release")
_ORIGINAL_SCROLLS = ("scroll", "flip")


def read_plan_as_code(text: str, interface: Interface) -> list[ParsedLine]:
    """The plan's lines as the paper's code executes them (``plan_follow``, ``categorize_action``):
    the reply stripped and split at newlines, up to the first empty line; a line that starts
    (in any case) with click, tap or move is a click on its first number, or one to ground when
    it has none; a press, type/enter or hold/release line an action of the env's grammar (a
    malformed one ends the trial as an exception, as the code's ValueError does); any other line
    executes nothing (``noop``). A scroll line is skipped: the code skips it without moving on to
    the next line, so it would read that line forever."""
    lines: list[ParsedLine] = []
    for line in text.strip().split("\n"):
        if not line:
            break
        start = line.lower()
        if start.startswith(ORIGINAL_CLICKS):
            click = original_click(line, interface)
            lines.append(ParsedLine(click, written=line) if click else ParsedLine(line, reading="ground"))
            continue
        if start.startswith(_ORIGINAL_SCROLLS):
            continue
        elif start.startswith(_ORIGINAL_ACTIONS):
            parsed = parse_action(line, interface)
        else:
            lines.append(ParsedLine(line, reading="noop"))
            continue
        lines.append(ParsedLine(parsed.action, parsed.error, written=line))
    return lines


def original_click(text: str, interface: Interface) -> str | None:
    """A plan line or a suggestion as the paper's code executes a click: text that starts with
    click, tap or move clicks the first number in it (``util.parse_int``), so "click the button with id=7"
    clicks id=7 (and "click the 2nd box (id=7)" id=2, as there). None when the text is no such
    click, has no number, or the env's grammar has no ``click id=N``."""
    number = re.search(r"\d+", text)
    if not text.lower().startswith(ORIGINAL_CLICKS) or not number:
        return None
    parsed = parse_action(f"click id={number.group()}", interface)
    return None if parsed.error else parsed.action


def kind(action: str) -> str:
    """The verb of a canonical action: click, enter, press (MiniWoB), search (WebShop), go, ..."""
    return _first_word(action)


def clicked_element(action: str, interface: Interface) -> str | None:
    """The element id a canonical click acts on (the paper constrains click-type actions only,
    Sec. 5.2), else None; None on envs without element ids."""
    return interface.action_element(action) if kind(action) == "click" else None
