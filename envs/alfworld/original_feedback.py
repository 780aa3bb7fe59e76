"""The refusals of AutoPlan's original code: its ``error_msg`` (owaski/AutoPlan, tasks/alfworld.py).

ALFWorld answers a command it cannot run with "Nothing happens."; the original code shows
"Action failed. " and a system message that ``error_msg`` builds. This is a port of that
function: its sentences word for word (trailing spaces included, and the missing index's
sentence without one), in its order of checks, concatenated as it concatenates them. So a
missing index reads "The index of apple is missing. For example, apple 0.", a receptacle the
household does not have "You cannot take apple 1 from countertop 9. " (take, put, heat, cool,
clean) or "... is not a valid receptacle in this household. " (go to, open, close), and a
refused take may name two causes at once ("You are not at countertop 1. You cannot hold more
than one object. ").

As the original does, the check that runs is chosen by the first verb the command contains
anywhere, in its order: "go to ", take, put, open, close, use, clean, heat, cool (so "cool
houseplant 1 with fridge 1" is read as a "use" for the "use" in "houseplant"); a command in
the wrong form gets that verb's "The action should be in the form of ..." and one with none
of them "Invalid action format. ...".

Where the agent is, the original takes from its own record: the target of the last "go to"
the game accepted (``World.went_to``), "middle of a room" before the first. So "You are not at
coffeemachine 1. " after "go to countertop 1", though both stand at one place of the game, and
"use" names that target as the current location. What the agent carries and what a
receptacle holds or whether it is closed, the original reads from what it gathered from
earlier observations; this reads the game's own facts (``World``), so those causes are the
game's. Table 6's wording (envs.alfworld.feedback) is the other choice of the env's
``feedback_wording``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from envs.alfworld.feedback import USE_INSTEAD, Feedback, World

OBJECT = r"([^\d]+( \d+|))"  # the original's re_obj: a name and its index (group 1)
APPLIANCE = {  # verb -> (the receptacle kind that does it, gerund, participle)
    "clean": ("sinkbasin", "cleaning", "cleaned"),
    "heat": ("microwave", "heating", "heated"),
    "cool": ("fridge", "cooling", "cooled"),
}
FORMS = {  # the original's sentence for a command of the verb in another form (each verbatim)
    "go to ": 'The action should be in the form of "go to receptacle i". ',
    "take": 'The action should be in the form of "take object i from receptacle j". ',
    "put": 'The action should be in the form of "put object i in/on receptacle j" .',
    "open": 'The action should be in the form of "open receptacle i". ',
    "close": 'The action should be in the form of "close receptacle i". ',
    "use": 'The action should be in the form of "use receptacle i". ',
    "clean": 'The action should be in the form of "clean object i with object j". ',
    "heat": 'The action should be in the form of "heat object i with object j". ',
    "cool": 'The action should be in the form of "cool object i with object j". ',
}
INVALID = "Invalid action format. Check the game description for the right formats."
MIDDLE = "middle of a room"  # where the original places the agent before its first "go to"


class Message:
    """The system message as ``error_msg`` builds it: sentences appended in order, the
    cause of the first one named (``Feedback.error``)."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []

    def add(self, error: str, sentence: str) -> None:
        self.parts.append((error, sentence))

    def __bool__(self) -> bool:
        return bool(self.parts)

    def feedback(self) -> Feedback:
        text = "".join(sentence for _, sentence in self.parts)
        return Feedback(self.parts[0][0] if self.parts else "not_possible", text)


def _index(message: Message, name: str) -> None:
    """The original's obj_fmt_err: a name needs one index, "apple 1"."""
    name = name.strip()
    words = name.split(" ")
    if len(words) == 1:
        message.add("missing_index", f"The index of {name} is missing. For example, {name} 0.")
    elif len(words) > 2:
        message.add("wrong_format", f"The format of {name} is wrong. ")


def _location(world: World) -> str:
    """Where the original believes the agent is: its last accepted "go to" target."""
    return world.went_to or MIDDLE


def _exists(world: World, recep: str) -> bool:
    """A place the agent can go to: the original's "all locations"."""
    return recep.strip() in world.receptacle_at


def _closed(world: World, recep: str) -> bool:
    return recep in world.openable and recep not in world.opened


def _contents(world: World, recep: str) -> set[str]:
    return {obj for obj, inside in world.inside.items() if inside == recep}


def _go(world: World, message: Message, recep: str) -> None:
    _index(message, recep)
    if not message:
        if not _exists(world, recep):
            message.add("invalid_receptacle", f"{recep.strip()} is not a valid receptacle in this household. ")
        else:
            message.add("already_there", f"You are already at {recep}. ")


def _reachable(world: World, message: Message, recep: str, invalid: str) -> bool:
    """Take's and put's first checks, in the original's order: the receptacle exists (else
    ``invalid``), the agent is at it, it is open. True when none of them failed."""
    if not _exists(world, recep):
        message.add("invalid_receptacle", invalid)
    elif recep.strip() != _location(world):
        message.add("wrong_location", f"You are not at {recep}. ")
    elif _closed(world, recep):
        message.add("closed_receptacle", f"{recep} is closed. ")
    else:
        return True
    return False


def _take(world: World, message: Message, obj: str, recep: str) -> None:
    _index(message, obj)
    _index(message, recep)
    if not message:
        reachable = _reachable(world, message, recep, f"You cannot take {obj} from {recep}. ")
        if reachable and obj not in _contents(world, recep):
            message.add("not_there", f"{obj} is not in {recep}. ")
        if world.holding:
            message.add("inventory_limit", "You cannot hold more than one object. ")
    if not message:
        message.add("not_possible", f"You cannot take {obj} from {recep}. ")


def _put(world: World, message: Message, obj: str, recep: str) -> None:
    _index(message, obj)
    _index(message, recep)
    if not message:
        _reachable(world, message, recep, f"You cannot put {obj} in/on {recep}. ")
        if obj not in world.holding:
            message.add("not_in_inventory", f"You are not carrying {obj}. ")


def _open_close(opening: bool) -> Callable[[World, Message, str], None]:
    state, verb = ("open", "openable") if opening else ("closed", "closable")

    def check(world: World, message: Message, recep: str) -> None:
        _index(message, recep)
        if not message:
            if recep.strip() != _location(world):
                message.add("wrong_location", f"You are not at {recep.strip()}. ")
            if not _exists(world, recep):
                message.add("invalid_receptacle", f"{recep.strip()} is not a valid receptacle in this household. ")
            if not message:
                # the original marks every receptacle it saw into as open, a countertop too
                if ("closed" if _closed(world, recep) else "open") == state:
                    message.add(f"already_{state}", f"{recep} is already {state}. ")
                else:
                    message.add(f"not_{verb}", f"{recep} is not {verb}. ")

    return check


def _use(world: World, message: Message, recep: str) -> None:
    _index(message, recep)
    if not message:
        location = _location(world)
        elsewhere = "middle" in location or (
            not _closed(world, location) and recep not in _contents(world, location) and recep != location
        )
        if elsewhere:
            message.add("not_here", f"{recep} is not in/on your current location {location}. ")
        else:
            message.add("not_usable", f' In this game you cannot apply "use" action to {recep}. ')
            hint = next((hint for kind, hint in USE_INSTEAD.items() if kind in recep), "")
            if hint:
                message.add("not_usable", hint + " ")


def _appliance(verb: str) -> Callable[[World, Message, str, str], None]:
    kind, gerund, participle = APPLIANCE[verb]

    def check(world: World, message: Message, obj: str, recep: str) -> None:
        _index(message, obj)
        _index(message, recep)
        if not message:
            if not _exists(world, recep):
                message.add("invalid_receptacle", f"You cannot {verb} {obj} with {recep}. ")
            elif recep.strip() != _location(world):
                message.add("wrong_location", f"You are not at {recep}. ")
            else:
                if obj not in world.holding:
                    message.add("not_in_inventory", f"You need to carry {obj} to {verb} it. ")
                if kind not in recep:
                    message.add(f"invalid_{gerund}_appliance", f"{recep.split(' ')[0]} cannot be used for {gerund}. ")
                if not message:
                    message.add(f"not_{participle}", f"{obj} cannot be {participle}. ")

    return check


# the original's checks, in its order: the first verb the command contains anywhere picks one
CHECKS: tuple[tuple[str, re.Pattern[str], Callable[..., None]], ...] = (
    ("go to ", re.compile(f"go to {OBJECT}"), _go),
    ("take", re.compile(f"take {OBJECT} from {OBJECT}"), _take),
    ("put", re.compile(f"put {OBJECT} in/on {OBJECT}"), _put),
    ("open", re.compile(f"open {OBJECT}"), _open_close(True)),
    ("close", re.compile(f"close {OBJECT}"), _open_close(False)),
    ("use", re.compile(f"use {OBJECT}"), _use),
    ("clean", re.compile(f"clean {OBJECT} with {OBJECT}"), _appliance("clean")),
    ("heat", re.compile(f"heat {OBJECT} with {OBJECT}"), _appliance("heat")),
    ("cool", re.compile(f"cool {OBJECT} with {OBJECT}"), _appliance("cool")),
)


def explain_original(command: str, world: World) -> Feedback:
    """The original's system message for ``command``, which the game refused ("" when the
    original has nothing to add, as for a put it cannot tell the cause of)."""
    action = command.lower()
    message = Message()
    for verb, pattern, check in CHECKS:
        if verb in action:
            match = pattern.fullmatch(action)
            if match is None:
                return Feedback("wrong_form", FORMS[verb])
            names = [group for i, group in enumerate(match.groups()) if i % 2 == 0]  # names, not their indices
            check(world, message, *names)
            return message.feedback()
    return Feedback("unknown_command", INVALID)
