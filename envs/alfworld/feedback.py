"""AutoPlan's augmented feedback for refused ALFWorld commands in the paper's words (paper 004, Table 6).

ALFWorld answers every inadmissible command with "Nothing happens.". AutoPlan replaces that
with a sentence naming the cause, which is what lets its reflection learn from a failed
step. The cause is found from the command, the admissible commands and the game's own
state (the PDDL facts the engine reports: where the agent is, what it holds, which
receptacles are open, what can heat, cool or clean), so it is exact rather than guessed
from earlier observations.

The Table 6 sentences are kept word for word, including "... is not a valid action in this
household." for a receptacle the household does not have (the original code's words are
"... is not a valid receptacle ..."; either way the sentence is about receptacles only: an
object that is not there gets the rule's own answer, "There is no apple 9 in/on
countertop 1.", "You are not carrying apple 9."). Causes the table does not list (an
object that is not there, a receptacle that cannot hold the object, a command in the wrong
form, ...) get a sentence in the same style; ``Feedback.error`` names the cause.

The agent reads the sentence as AutoPlan's original shows a refused command: after
``REFUSED`` ("Action failed. System Message: "), the system message its Flaw prompt calls
always correct.

This is the env's ``feedback_wording="table6"``; its default is the original code's own
sentences and order of checks (envs.alfworld.original_feedback), which differ: "The index of
tomato is missing. For example, tomato 0." for Table 6's "You miss the index of tomato, e.g.,
tomato 1.", "You cannot take tomato 1 from countertop 9. " for "countertop 9 is not a valid
action in this household.", and the location checked before the appliance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

FAILED = "Action failed. "  # the original's observation of a refused command, before its system message
SYSTEM = "System Message: "
REFUSED = FAILED + SYSTEM
ENTITY = re.compile(r"^[a-z]+ \d+$")
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("go", re.compile(r"^go to (?P<r>.+)$")),
    ("take", re.compile(r"^take (?P<o>.+?) from (?P<r>.+)$")),
    ("put", re.compile(r"^put (?P<o>.+?) (?:in/on|in|on|into|onto) (?P<r>.+)$")),
    ("heat", re.compile(r"^heat (?P<o>.+?) with (?P<r>.+)$")),
    ("cool", re.compile(r"^cool (?P<o>.+?) with (?P<r>.+)$")),
    ("clean", re.compile(r"^clean (?P<o>.+?) with (?P<r>.+)$")),
    ("slice", re.compile(r"^slice (?P<o>.+?) with (?P<r>.+)$")),
    ("open", re.compile(r"^open (?P<r>.+)$")),
    ("close", re.compile(r"^close (?P<r>.+)$")),
    ("examine", re.compile(r"^examine (?P<o>.+)$")),
    ("use", re.compile(r"^use (?P<o>.+)$")),
)
# verb -> (receptacle types that can do it, the gerund of Table 6, the object property needed)
APPLIANCES: dict[str, tuple[frozenset[str], str, str]] = {
    "heat": (frozenset({"microwave"}), "heating", "heatable"),
    "cool": (frozenset({"fridge"}), "cooling", "coolable"),
    "clean": (frozenset({"sinkbasin"}), "cleaning", "cleanable"),
}
PARTICIPLE = {"heat": "heated", "cool": "cooled", "clean": "cleaned"}
COMMAND_FORMS = (
    "go to X, open X, close X, take X from Y, put X in/on Y, heat X with Y, cool X with Y, "
    "clean X with Y, use X, examine X, look, inventory"
)


@dataclass(frozen=True)
class Feedback:
    """Why a command was refused: a short cause name and the sentence shown to the agent."""

    error: str
    sentence: str


def _kind(name: str) -> str:
    """``toaster 1`` -> ``toaster``."""
    return name.rsplit(" ", 1)[0]


@dataclass
class World:
    """The facts of one game state that the feedback rules need, with readable names."""

    agent_at: str | None = None
    receptacle_at: dict[str, str] = field(default_factory=dict)
    object_at: dict[str, str] = field(default_factory=dict)
    rtype: dict[str, str] = field(default_factory=dict)
    otype: dict[str, str] = field(default_factory=dict)
    inside: dict[str, str] = field(default_factory=dict)
    holding: set[str] = field(default_factory=set)
    openable: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)
    props: dict[str, set[str]] = field(default_factory=dict)
    can_contain: set[tuple[str, str]] = field(default_factory=set)
    # not a fact: the target of the last "go to" the game accepted ("" before the first), which is
    # where AutoPlan's code believes the agent is (envs.alfworld.original_feedback)
    went_to: str = ""

    @classmethod
    def from_facts(cls, facts: Iterable[Any], names: dict[str, str] | None = None) -> World:
        """Build from textworld Propositions; ``names`` maps PDDL ids to ALFWorld's readable
        names (``apple 1``), for the engine's raw ``state["_facts"]``."""
        world = cls()
        names = names or {}
        for fact in facts:
            args = [names.get(v.name, v.name).strip() for v in fact.arguments]
            name = fact.name
            if name == "atlocation":
                world.agent_at = args[1]
            elif name == "receptacleatlocation":
                world.receptacle_at[args[0]] = args[1]
            elif name == "objectatlocation":
                world.object_at[args[0]] = args[1]
            elif name == "receptacletype":
                world.rtype[args[0]] = args[1].removesuffix("type")
            elif name == "objecttype":
                world.otype[args[0]] = args[1].removesuffix("type")
            elif name == "inreceptacle":
                world.inside[args[0]] = args[1]
            elif name == "holds":
                world.holding.add(args[1])
            elif name == "openable":
                world.openable.add(args[0])
            elif name == "opened":
                world.opened.add(args[0])
            elif name == "cancontain":
                world.can_contain.add((args[0].removesuffix("type"), args[1].removesuffix("type")))
            elif len(args) == 1:
                world.props.setdefault(name, set()).add(args[0])
        return world

    def exists(self, name: str) -> bool:
        return name in self.rtype or name in self.otype

    def has(self, prop: str, name: str) -> bool:
        return name in self.props.get(prop, set())

    def where(self, name: str) -> str | None:
        return self.receptacle_at.get(name) or self.object_at.get(name)


def parse(command: str) -> tuple[str, dict[str, str]] | None:
    """``"take apple 1 from countertop 1"`` -> ``("take", {"o": "apple 1", "r": "countertop 1"})``."""
    for verb, pattern in PATTERNS:
        match = pattern.match(command)
        if match:
            return verb, {k: v.strip() for k, v in match.groupdict().items()}
    return None


def canonical(verb: str, args: dict[str, str]) -> str:
    """The command in ALFWorld's own form (``put X in/on Y``)."""
    forms = {
        "go": "go to {r}",
        "take": "take {o} from {r}",
        "put": "put {o} in/on {r}",
        "heat": "heat {o} with {r}",
        "cool": "cool {o} with {r}",
        "clean": "clean {o} with {r}",
        "slice": "slice {o} with {r}",
        "open": "open {r}",
        "close": "close {r}",
        "examine": "examine {o}",
        "use": "use {o}",
    }
    return forms[verb].format(**args)


def explain(command: str, world: World, admissible: Iterable[str]) -> Feedback:
    """The augmented feedback for ``command``, which the game refused ("Nothing happens.")."""
    written = " ".join(command.split())
    command = " ".join(written.lower().rstrip(".!").split())
    parsed = parse(command)
    if parsed is None:
        return Feedback(
            "unknown_command",
            f'"{command}" is not a valid action in this household. Valid actions are: {COMMAND_FORMS}.',
        )
    verb, args = parsed
    fixed = canonical(verb, args)
    if fixed != written and fixed in set(admissible):
        return Feedback("wrong_form", f'Use the form "{fixed}".')
    for name in args.values():
        if not ENTITY.match(name) and re.fullmatch(r"[a-z]+", name):
            return Feedback("missing_index", f"You miss the index of {name}, e.g., {name} 1.")
    recep = args.get("r") if verb != "slice" else None  # slice's second argument is a knife
    if recep is not None and recep not in world.rtype:
        return Feedback("invalid_receptacle", f"{recep} is not a valid action in this household.")
    rule = RULES[verb]
    return rule(world, **args) or Feedback("not_possible", f"You cannot {command} now.")


def _at(world: World, recep: str) -> Feedback | None:
    if recep not in world.rtype:
        return Feedback("invalid_receptacle", f"{recep} is not a valid action in this household.")
    if world.receptacle_at.get(recep) != world.agent_at:
        return Feedback("wrong_location", f"You are not at {recep}.")
    return None


def _open(world: World, recep: str) -> Feedback | None:
    if recep in world.openable and recep not in world.opened:
        return Feedback("closed_receptacle", f"{recep} is closed.")
    return None


def _carrying(world: World, obj: str) -> Feedback | None:
    if obj not in world.holding:
        return Feedback("not_in_inventory", f"You are not carrying {obj}.")
    return None


def _go(world: World, r: str) -> Feedback | None:
    if r not in world.rtype:
        return Feedback("invalid_receptacle", f"{r} is not a valid action in this household.")
    if world.receptacle_at.get(r) == world.agent_at:
        return Feedback("already_there", f"You are already at {r}.")
    return None


def _take(world: World, o: str, r: str) -> Feedback | None:
    found = _at(world, r) or _open(world, r)
    if found:
        return found
    if world.holding:
        return Feedback("inventory_limit", "You cannot hold more than one object.")
    if world.inside.get(o) != r:
        return Feedback("not_there", f"There is no {o} in/on {r}.")
    if not world.has("pickupable", o):
        return Feedback("not_pickupable", f"{o} cannot be picked up.")
    return None


def _put(world: World, o: str, r: str) -> Feedback | None:
    found = _carrying(world, o) or _at(world, r) or _open(world, r)
    if found:
        return found
    if (world.rtype.get(r), world.otype.get(o)) not in world.can_contain:
        return Feedback("cannot_contain", f"{o} cannot be put in/on {r}.")
    return None


def _appliance(verb: str):  # noqa: ANN202 - returns a rule with the same signature as the others
    kinds, gerund, prop = APPLIANCES[verb]

    def rule(world: World, o: str, r: str) -> Feedback | None:
        if world.rtype.get(r) not in kinds:
            return Feedback(f"invalid_{gerund}_appliance", f"{_kind(r)} cannot be used for {gerund}.")
        found = _carrying(world, o) or _at(world, r)
        if found:
            return found
        if not world.has(prop, o):
            return Feedback(f"not_{prop}", f"{o} cannot be {PARTICIPLE[verb]}.")
        return None

    return rule


def _slice(world: World, o: str, r: str) -> Feedback | None:
    if world.otype.get(r) not in {"knife", "butterknife"}:
        return Feedback("invalid_slicing_tool", f"{_kind(r)} cannot be used for slicing.")
    return _carrying(world, r)


def _open_close(opening: bool):  # noqa: ANN202 - returns a rule
    def rule(world: World, r: str) -> Feedback | None:
        found = _at(world, r)
        if found:
            return found
        if r not in world.openable:
            return Feedback("not_openable", f"{r} cannot be {'opened' if opening else 'closed'}.")
        if (r in world.opened) == opening:
            return Feedback(
                "already_open" if opening else "already_closed", f"{r} is already {'open' if opening else 'closed'}."
            )
        return None

    return rule


def _examine(world: World, o: str) -> Feedback | None:
    if o in world.rtype:
        return _at(world, o)
    if world.object_at.get(o) != world.agent_at and o not in world.holding:
        return Feedback("not_here", f"{o} is not here.")
    return None


# What the original code adds when "use" is tried on an appliance another command works
# (tasks/alfworld.py of owaski/AutoPlan): the command that does the job instead.
USE_INSTEAD = {
    "microwave": 'You can use "heat" action to heat object with microwave.',
    "sinkbasin": 'You can use "clean" action to clean object with sinkbasin.',
    "fridge": 'You can use "cool" action to cool object with fridge.',
}


def _use(world: World, o: str) -> Feedback | None:
    if not world.has("toggleable", o):
        instead = next((hint for kind, hint in USE_INSTEAD.items() if kind in o), "")
        sentence = f'In this game you cannot apply "use" action to {o}.'  # the original's words
        return Feedback("not_usable", f"{sentence} {instead}" if instead else sentence)
    if world.where(o) != world.agent_at:
        return Feedback("not_here", f"{o} is not here.")
    return None


RULES = {
    "go": _go,
    "take": _take,
    "put": _put,
    "heat": _appliance("heat"),
    "cool": _appliance("cool"),
    "clean": _appliance("clean"),
    "slice": _slice,
    "open": _open_close(True),
    "close": _open_close(False),
    "examine": _examine,
    "use": _use,
}
