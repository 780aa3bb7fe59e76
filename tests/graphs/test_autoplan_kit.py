"""Test helpers for AutoPlan: a tiny ALFWorld-like household env and script builders.

ToyHousehold stands in for ALFWorld (registered under "alfworld" by the ``toy_alfworld``
fixture) so graph tests run in milliseconds: task ``heat/<n>`` is won by heating egg 1
with microwave 1 and putting it in/on countertop <n>. Refused commands answer with a
Table-6-style sentence after "Action failed. System Message: ", as the real env does.
"""

from __future__ import annotations

from typing import Any

import pytest

from envs import base
from envs.alfworld.feedback import REFUSED
from envs.alfworld.interface import INTERFACE as ALFWORLD
from envs.base import Env, Observation, StepResult, UnknownTaskError

TASKS = ("heat/1", "heat/2", "heat/3")


class ToyHousehold(Env):
    name = "alfworld"
    interface = ALFWORLD
    created: list[ToyHousehold] = []  # every instance, to count env sessions

    def __init__(self, **options: Any) -> None:
        self.task: str | None = None
        self.done_commands: list[str] = []
        self.won = False
        ToyHousehold.created.append(self)

    def task_ids(self, split: str | None = None) -> list[str]:
        return list(TASKS)

    def _admissible(self) -> list[str]:
        places = ["microwave 1"] + [f"countertop {n}" for n in (1, 2, 3)]
        return (
            [f"go to {p}" for p in places]
            + ["look", "heat egg 1 with microwave 1"]
            + [f"put egg 1 in/on countertop {n}" for n in (1, 2, 3)]
        )

    def _first(self) -> Observation:
        target = f"countertop {self.task.split('/')[1]}"
        text = (
            "You are in the middle of a room. Looking quickly around you, you see a microwave 1, "
            f"a countertop 1, a countertop 2, and a countertop 3.\n"
            f"Your task is to: heat some egg and put it in {target}."
        )
        return Observation(
            text,
            info={
                "goal": f"heat some egg and put it in {target}.",
                "task_type": "pick_heat_then_place_in_recep",
                "admissible_commands": self._admissible(),
            },
        )

    async def reset(self, task_id: str) -> Observation:
        if task_id not in TASKS:
            raise UnknownTaskError(f"unknown toy task {task_id!r}")
        self.task, self.done_commands, self.won = task_id, [], False
        return self._first()

    async def step(self, action: str) -> StepResult:
        self.done_commands.append(action)
        info: dict[str, Any] = {"admissible_commands": self._admissible()}
        if action not in self._admissible():
            sentence = f"{action or 'That'} is not a valid action in this household."
            return StepResult(Observation(REFUSED + sentence), 0.0, False, info, valid=False, feedback=sentence)
        target = f"countertop {self.task.split('/')[1]}"
        heated = "heat egg 1 with microwave 1" in self.done_commands
        self.won = heated and action == f"put egg 1 in/on {target}"
        text = "You heat the egg 1 using the microwave 1." if action.startswith("heat") else f"You did: {action}."
        return StepResult(Observation(text), 1.0 if self.won else 0.0, self.won, info, success=self.won)

    async def snapshot(self) -> dict[str, Any]:
        return {"task": self.task, "commands": list(self.done_commands)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        await self.reset(snapshot["task"])
        last = self._first()
        for command in snapshot["commands"]:
            last = (await self.step(command)).observation
        return last


@pytest.fixture
def toy_alfworld(monkeypatch):
    """Register ToyHousehold as the "alfworld" env for one test."""
    monkeypatch.setitem(base.ENV_CLASSES, "alfworld", f"{__name__}:ToyHousehold")
    ToyHousehold.created = []
    return ToyHousehold


def reply(content: str) -> dict[str, Any]:
    return {"content": content}


def step_replies(thought: str, action: str, command: str) -> list[dict[str, Any]]:
    """The three calls of one collection step: thought, free-form action, formalizer."""
    return [reply(thought), reply(action), reply(command)]
