"""What an agent is told about ALFWorld and how its replies are read (envs.base.Interface).

The household's commands (the forms of AutoPlan's task description, plus examine, look and
inventory, which the game also admits). A reply is read as the game reads a command: lower
case, single spaces, ``put X in Y`` / ``on`` / ``into`` / ``onto`` written as the game's own
``put X in/on Y`` (envs.alfworld.feedback's patterns). Whether the command is possible here is
the game's call: an impossible one is refused with feedback when executed.
"""

from __future__ import annotations

from dataclasses import dataclass

from envs.alfworld.feedback import canonical, parse
from envs.base import ActionParseError, Interface

GRAMMAR = """\
- go to recep j, e.g. go to countertop 1
- take object i from recep j
- put object i in/on recep j
- open recep j, close recep j
- use recep j (e.g. a desk lamp)
- clean object i with recep j, heat object i with recep j, cool object i with recep j
- examine object i (or recep j), look, inventory"""

BARE = ("look", "inventory")


@dataclass(frozen=True)
class ALFWorldInterface(Interface):
    def parse_action(self, text: str) -> str:
        command = self.as_written(text)
        if command in BARE:
            return command
        parsed = parse(command)
        if parsed is None:
            raise ActionParseError(f'"{command}" is not a command of this household; use one of:\n{GRAMMAR}')
        return canonical(*parsed)

    def as_written(self, text: str) -> str:
        """Lower case, single spaces: the game's commands are written so."""
        return " ".join((text or "").lower().split())


INTERFACE = ALFWorldInterface(
    kind="text",
    intro="A simulated household (ALFWorld): you move between receptacles and act on objects to complete a job",
    grammar=GRAMMAR,
    verbs=("go", "take", "put", "open", "close", "use", "clean", "heat", "cool", "examine", *BARE),
    name="alfworld",
)
