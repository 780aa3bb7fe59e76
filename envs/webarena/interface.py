"""WebArena's action grammar and element lines, read from untrusted model text.

The agent answers in the grammar of the paper's action prompt (``click [id]``,
``type [id] [text]``, ``scroll [up|down]``, ``goto [url]``, ``go_back``, ``go_forward``,
``note_down [text]``); the answer itself goes out as ``stop [answer]`` from the
completion node only. Screens show one ``[id] role 'name'`` line per element, which
is what backtracking compares to decide whether an element id must be remapped.
"""

from __future__ import annotations

import re

from nodes.parse import ParseError

AGENT_VERBS = ("click", "type", "scroll", "goto", "go_back", "go_forward", "note_down")

_VERB = re.compile(rf"(?<![\w-])({'|'.join(AGENT_VERBS)})(?![\w-])", re.IGNORECASE)
_ID = re.compile(r"\A\s*\[\s*(\d+)\s*\]")
_SCROLL = re.compile(r"\A\s*\[\s*(?:direction\s*=\s*)?(up|down)\s*\]", re.IGNORECASE)
_URL = re.compile(r"\A\s*\[\s*([^\s\]]+)\s*\]")
_REST_OF_LINE = re.compile(r"\A\s*\[(.*)\]", re.DOTALL)
_ENTER_FLAG = re.compile(r"\]\s*\[\s*(?:press_enter_after\s*=\s*)?([01])\s*\]\s*\Z")
_NO_ARGS = re.compile(r"\A\s*(?:\[\s*\])?")
_ELEMENT_ACTION = re.compile(r"\A(click|type|hover)\s*\[\s*(\d+)\s*\]")
_LINE = re.compile(r"^[ \t]*\[(\d+)\][ \t]+(.*)$", re.MULTILINE)

ACTION_HELP = (
    "give exactly one action in one of these forms: click [element_id], "
    "type [element_id] [text to type], scroll [up] or scroll [down], goto [url], go_back, "
    "go_forward, note_down [text to note down]"
)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def _build(verb: str, rest: str) -> str | None:
    """The normalised action for ``verb`` followed by ``rest``, or None if malformed."""
    line = _first_line(rest)
    if verb == "click":
        match = _ID.match(line)
        return f"click [{match.group(1)}]" if match else None
    if verb == "scroll":
        match = _SCROLL.match(line)
        return f"scroll [{match.group(1).lower()}]" if match else None
    if verb == "goto":
        match = _URL.match(line)
        return f"goto [{match.group(1)}]" if match else None
    if verb in ("go_back", "go_forward"):
        return verb if _NO_ARGS.match(line) is not None else None
    if verb == "note_down":
        match = _REST_OF_LINE.match(line)
        return f"note_down [{match.group(1).strip()}]" if match and match.group(1).strip() else None
    # type [id] [text] with WebArena's optional [press_enter_after] flag
    element = _ID.match(line)
    if not element:
        return None
    tail = line[element.end():]
    flag = _ENTER_FLAG.search(tail)
    text_part = tail[: flag.start() + 1] if flag else tail
    body = _REST_OF_LINE.match(text_part)
    if not body:
        return None
    suffix = f" [{flag.group(1)}]" if flag else ""
    return f"type [{element.group(1)}] [{body.group(1)}]{suffix}"


def parse_action(text: str) -> str:
    """The first well-formed agent action in ``text``; ParseError (feedback) if none."""
    for match in _VERB.finditer(text or ""):
        action = _build(match.group(1).lower(), text[match.end():])
        if action:
            return action
    raise ParseError(f"no valid action found in the reply; {ACTION_HELP}")


def element_id(action: str) -> str | None:
    """The element id an action acts on (click, type), if any."""
    match = _ELEMENT_ACTION.match(action.strip())
    return match.group(2) if match else None


def with_element(action: str, new_id: str) -> str:
    """``action`` acting on element ``new_id`` instead of its own."""
    return _ELEMENT_ACTION.sub(lambda m: f"{m.group(1)} [{new_id}]", action.strip(), count=1)


def element_lines(observation: str) -> dict[str, str]:
    """``{id: "role 'name'"}`` of every element line of a screen."""
    return {eid: _role_and_name(rest) for eid, rest in _LINE.findall(observation or "")}


_ROLE_NAME = re.compile(r"""\A(\S+)\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def _role_and_name(rest: str) -> str:
    """The ``role 'name'`` part of a line; properties after the name may change on reload."""
    match = _ROLE_NAME.match(rest.strip())
    return match.group(0) if match else rest.strip()


CONTEXT_LINES = 5


def _signature(observation: str, eid: str) -> tuple[str, ...] | None:
    """The element's ``role 'name'`` with those of the lines just above it (ids left out).

    Rows of a table often repeat the same line (``link 'View Order'``); the cells above
    it (order number, date) tell which one it is.
    """
    lines = _LINE.findall(observation or "")
    for index, (line_id, _) in enumerate(lines):
        if line_id == eid:
            window = lines[max(0, index - CONTEXT_LINES) : index + 1]
            return tuple(_role_and_name(rest) for _, rest in window)
    return None


def same_element(action: str, before: str, after: str) -> bool:
    """Whether the element ``action`` names is the same element on screen ``after``.

    True for actions without an element. False when the id is gone or now names another
    line (or the same line in another place): then the id must be mapped (the paper's
    Element Mapping prompt).
    """
    eid = element_id(action)
    if eid is None:
        return True
    old = _signature(before, eid)
    return old is not None and old == _signature(after, eid)


def parse_element_id(text: str, observation: str) -> str:
    """The element id named in a mapping reply, checked against the screen it is for."""
    ids = element_lines(observation)
    candidates = re.findall(r"\[?\b(\d+)\b\]?", text or "")
    for candidate in candidates:
        if candidate in ids:
            return candidate
    if candidates:
        raise ParseError(f"element id {candidates[0]} is not on the new screen; give an id shown there")
    raise ParseError("no element id found; answer with the new element id, e.g. 1234")
