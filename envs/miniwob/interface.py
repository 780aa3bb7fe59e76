"""What an agent is told about MiniWoB++ and how its replies are read (envs.base.Interface).

The grammar is paper 002's (Table 3; parsed in envs/miniwob/actions.py); the screen is its
compact HTML (envs/miniwob/screen.py), one line per visible leaf element with ``id=N``. An
element keeps its id across the screens of an episode; its signature is what its lines show
besides the id and the state an action changes (value, checked, position).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.base import Interface
from envs.miniwob.actions import canonical, parse_action

GRAMMAR = """\
- click id=N: click the element with id N, e.g. click id=6
- enter "text" to id=N: click the input with id N and type the text, always in double quotes, \
e.g. enter "Ashley" to id=10
- press KEY x N: press a key N times, e.g. press ARROWDOWN x 3, press ENTER, press CTRL+A
- hold KEY and release KEY: keep a modifier down between them, e.g. hold CTRL before clicking several items \
and release CTRL after"""

_ELEMENT_ACTION = re.compile(r"\A(click id=|enter \".*\" to id=)(\d+)\Z", re.DOTALL)
_CHANGES = re.compile(r' (?:id=\d+|value="[^"]*"|checked|pos="[^"]*")')


@dataclass(frozen=True)
class MiniWoBInterface(Interface):
    def parse_action(self, text: str) -> str:
        """One action line of the grammar, in its canonical spelling."""
        return canonical(parse_action(text))

    def element_signature(self, observation: str, element_id: str) -> tuple[str, ...] | None:
        """The lines that show ``id=element_id`` (an element and the text beside it), without
        the id, value, checked mark and position."""
        mark = re.compile(rf"\bid={re.escape(element_id)}(?!\d)")
        lines = [_CHANGES.sub("", line) for line in (observation or "").splitlines() if mark.search(line)]
        return tuple(lines) or None

    def action_element(self, action: str) -> str | None:
        match = _ELEMENT_ACTION.match(action.strip())
        return match.group(2) if match else None

    def with_element(self, action: str, element_id: str) -> str:
        match = _ELEMENT_ACTION.match(action.strip())
        return f"{match.group(1)}{element_id}" if match else action

    def without_elements(self, observation: str, element_ids: list[str]) -> str:
        """The screen with the ``id=N`` of ``element_ids`` removed, the elements kept (as
        envs.miniwob.screen renders a disabled target)."""
        for element_id in element_ids:
            observation = re.sub(rf"\s*\bid={re.escape(element_id)}\b(?!\d)", "", observation)
        return observation


INTERFACE = MiniWoBInterface(
    kind="web",
    intro="A MiniWoB++ task: a small web page in a browser, with the task's instruction at its top",
    grammar=GRAMMAR,
    element_ids=True,
    verbs=("click", "tap", "enter", "type", "press", "hold", "release"),
    name="miniwob",
)
