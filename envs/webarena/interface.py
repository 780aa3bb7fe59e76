"""What an agent is told about WebArena and how its replies are read (envs.base.Interface).

The agent answers in the grammar of the Devil's Advocate paper's action prompt (``click [id]``,
``type [id] [text]``, ``scroll [up|down]``, ``goto [url]``, ``go_back``, ``go_forward``,
``note_down [text]``); ``GRAMMAR`` is that prompt's "Note:" list, word for word. The answer
goes out as ``stop [answer]`` (``answer_action``). Screens show one ``[id] role 'name'`` line
per element; an element's signature is its line and the lines just above it, which is what
tells, after going back to a page, whether an id still names the same element.

The env itself executes the strict grammar of WebArena's own code (envs.webarena.actions);
this reads untrusted model text into one action of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.base import ActionParseError, Interface

AGENT_VERBS = ("click", "type", "scroll", "goto", "go_back", "go_forward", "note_down")

GRAMMAR = """\
- If the next action is to click, please indicate the element id in [] (format: click [element_id]).
- If the next action is to scroll, please indicate the direction in [] (format: scroll [up or down]).
- If you need to navigate to a URL, please indicate the URL in [] (format: goto [url]).
- If you need to go back to the previous page, please use go_back.
- If the next action is to type, please indicate both element id and the things to type in [] \
(format: type [element_id] [things to type]).
- If you want to note down something, use this format: note_down [things to note down]."""

ACTION_HELP = (
    "give exactly one action in one of these forms: click [element_id], "
    "type [element_id] [text to type], scroll [up] or scroll [down], goto [url], go_back, "
    "go_forward, note_down [text to note down]"
)

# The sites of the paper's plan and action prompts (Appendix, v4: "An online shopping site
# (OneStopShop): {webarena_root}:7770", ...), keyed by WebArena's site names as they appear in a
# task config's "sites"; "shop" is the project's local OneStopShop look-alike.
SITE_INTROS: dict[str, str] = {
    "shopping": "An online shopping site (OneStopShop)",
    "shopping_admin": "An e-commerce management site (Magento)",
    "reddit": "A Reddit site (Postmill)",
    "gitlab": "A GitLab site",
    "map": "A map site (OpenStreetMap)",
    "wikipedia": "A Wikipedia site",
    "shop": "An online shopping site (One Stop Market, served locally by the project)",
}

_VERB = re.compile(rf"(?<![\w-])({'|'.join(AGENT_VERBS)})(?![\w-])", re.IGNORECASE)
_ID = re.compile(r"\A\s*\[\s*(\d+)\s*\]")
_SCROLL = re.compile(r"\A\s*\[\s*(?:direction\s*=\s*)?(up|down)\s*\]", re.IGNORECASE)
_URL = re.compile(r"\A\s*\[\s*([^\s\]]+)\s*\]")
_REST_OF_LINE = re.compile(r"\A\s*\[(.*)\]", re.DOTALL)
_ENTER_FLAG = re.compile(r"\]\s*\[\s*(?:press_enter_after\s*=\s*)?([01])\s*\]\s*\Z")
_NO_ARGS = re.compile(r"\A\s*(?:\[\s*\])?")
_ELEMENT_ACTION = re.compile(r"\A(click|type|hover)\s*\[\s*(\d+)\s*\]")
_NOTE = re.compile(r"\Anote_down \[(.*)\]\Z", re.DOTALL)
_LINE = re.compile(r"^[ \t]*\[(\d+)\][ \t]+(.*)$", re.MULTILINE)
_ROLE_NAME = re.compile(r"""\A(\S+)\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")
CONTEXT_LINES = 5


def site_intro(sites: list[str], urls: dict[str, str]) -> str:
    """The task's sites in the appendix's words, one per line ("<intro>: <URL>")."""
    lines = []
    for name in sites:
        intro = SITE_INTROS.get(str(name), f"A website ({name})")
        url = urls.get(name)
        lines.append(f"{intro}: {url}" if url else intro)
    return "\n".join(lines)


def sandbox_intro(urls: dict[str, str]) -> str:
    """Every site of ``urls`` (site name -> URL) that the appendix introduces, in its order: the
    websites the plan and action prompts list whatever the task ("You are within a sandbox and only
    have access to the following websites"). WebArena's homepage, which it does not list, is left out."""
    return site_intro([name for name in SITE_INTROS if name in urls], urls)


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
    tail = line[element.end() :]
    flag = _ENTER_FLAG.search(tail)
    text_part = tail[: flag.start() + 1] if flag else tail
    body = _REST_OF_LINE.match(text_part)
    if not body:
        return None
    suffix = f" [{flag.group(1)}]" if flag else ""
    return f"type [{element.group(1)}] [{body.group(1)}]{suffix}"


def element_lines(observation: str) -> dict[str, str]:
    """``{id: "role 'name'"}`` of every element line of a screen."""
    return {eid: _role_and_name(rest) for eid, rest in _LINE.findall(observation or "")}


def _role_and_name(rest: str) -> str:
    """The ``role 'name'`` part of a line; properties after the name may change on reload."""
    match = _ROLE_NAME.match(rest.strip())
    return match.group(0) if match else rest.strip()


@dataclass(frozen=True)
class WebArenaInterface(Interface):
    def parse_action(self, text: str) -> str:
        """The first well-formed agent action in ``text``."""
        for match in _VERB.finditer(text or ""):
            action = _build(match.group(1).lower(), text[match.end() :])
            if action:
                return action
        raise ActionParseError(f"no valid action found in the reply; {ACTION_HELP}")

    def element_signature(self, observation: str, element_id: str) -> tuple[str, ...] | None:
        """The element's ``role 'name'`` with those of the lines just above it (ids left out).

        Rows of a table often repeat the same line (``link 'View Order'``); the cells above
        it (order number, date) tell which one it is.
        """
        lines = _LINE.findall(observation or "")
        for index, (line_id, _) in enumerate(lines):
            if line_id == element_id:
                window = lines[max(0, index - CONTEXT_LINES) : index + 1]
                return tuple(_role_and_name(rest) for _, rest in window)
        return None

    def action_element(self, action: str) -> str | None:
        match = _ELEMENT_ACTION.match(action.strip())
        return match.group(2) if match else None

    def with_element(self, action: str, element_id: str) -> str:
        return _ELEMENT_ACTION.sub(lambda m: f"{m.group(1)} [{element_id}]", action.strip(), count=1)

    def noted(self, action: str) -> str | None:
        match = _NOTE.match(action.strip())
        return match.group(1) if match else None

    def irreversible(self, action: str, observation: str) -> bool:
        """The answer (``stop [...]``) and what submits a form: a click on a button, or text typed
        into a text field with Enter (WebArena presses it unless the action ends in ``[0]``). A
        search (a button or field named for searching) only fetches a page, so it is not asked
        about. The screen cannot say whether a button submits, so every other button is."""
        action = action.strip()
        if action.startswith("stop"):
            return True
        element = self.action_element(action)
        line = element_lines(observation).get(element or "", "")
        role, _, name = line.partition(" ")
        if "search" in name.lower():
            return False
        if action.startswith("click"):
            return role == "button"
        return action.startswith("type") and not action.endswith("[0]") and role == "textbox"


INTERFACE = WebArenaInterface(
    kind="web",
    intro="Websites of WebArena reached through a browser: an online shop, its admin panel, a Reddit forum, "
    "GitLab, a map and Wikipedia",
    grammar=GRAMMAR,
    element_ids=True,
    answer_action="stop [{answer}]",
    verbs=(*AGENT_VERBS, "stop"),
    name="webarena",
)
