"""Helpers shared by the Structured Reflection graph tests (fake env and real MiniWoB).

FakePageEnv stands in for MiniWoB where the logic, not the browser, is under test: it has the
same action grammar, ends episodes with reward 1 / -1, supports ``set_disabled_ids`` and
snapshot/restore.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import envs.base
from envs.base import Env, Observation, StepResult, invalid
from envs.miniwob.interface import INTERFACE as MINIWOB
from graphs.structured_reflection import build_graph
from nodes.runtime.llm import model_for
from nodes.sr.context import SRContext


def scripted(tmp_path, replies: list[str]) -> str:
    """A ``scripted:`` spec answering ``replies`` in order."""
    path = tmp_path / f"sr-{uuid.uuid4().hex[:8]}.jsonl"
    path.write_text("".join(json.dumps({"content": r}) + "\n" for r in replies), encoding="utf-8")
    return f"scripted:{path}"


def prompts_seen(spec: str) -> list[str]:
    """Every prompt the scripted model was shown, in call order."""
    return [str(call["messages"][-1].content) for call in model_for(spec, SRContext().temperature, 512).calls]


def id_of(screen: str, text: str) -> str:
    """The id of the element showing ``text`` on a MiniWoB screen (a checkbox's id is on the line
    before its label)."""
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(f">{text}</text>") and 'type="checkbox"' in lines[i - 1]:
            line = lines[i - 1]
        elif f">{text}<" not in line:
            continue
        return re.search(r" id=(\d+)", line).group(1)
    raise AssertionError(f"{text!r} not on the screen:\n{screen}")


def screen_in(prompt: str) -> str:
    return prompt.split("<screen>", 1)[1].split("</screen>", 1)[0]


async def run_sr(spec: str, task: str, env: str, **options: Any) -> dict[str, Any]:
    """Run the SR graph on ``task`` of ``env`` to its end, in memory."""
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 500}
    return await graph.ainvoke({"task_id": task}, config, context=SRContext(model=spec, env=env, **options))


# task -> (goal, element ids to select, submit id)
TASKS = {
    "boxes": ("Select B, C and click Submit.", {2, 3}),
    "button": ("Click on the 'Submit' button.", set()),
}
LABELS = {1: "A", 2: "B", 3: "C", 4: "D"}


class FakePageEnv(Env):
    """Checkboxes 1-4 (task boxes) or buttons 1 and 3 (task button), Submit 5, a static label 6,
    tabs 7/8 and a text field 9."""

    name = "fakepage"
    interface = MINIWOB  # it speaks MiniWoB's grammar and shows its kind of screen

    def __init__(self) -> None:
        self.task = ""
        self.checked: set[int] = set()
        self.tab = 1
        self.text = ""
        self.disabled: set[int] = set()
        self.history: list[str] = []
        self.over = False

    def task_ids(self, split: str | None = None) -> list[str]:
        return [f"{t}/0" for t in TASKS]

    def _screen(self) -> str:
        def tag(i: int, name: str, body: str, extra: str = "") -> str:
            ident = "" if i in self.disabled else f" id={i}"
            return f"<{name}{ident}{extra}>{body}</{name}>"

        goal, _ = TASKS[self.task.split("/")[0]]
        lines = [f"<div>{goal}</div>"]
        if self.task.startswith("boxes"):
            lines += [tag(i, "checkbox", LABELS[i], f' value="{str(i in self.checked).lower()}"') for i in LABELS]
        else:
            lines += [tag(1, "button", "Cancel"), tag(3, "button", "Help")]
        lines += [
            tag(5, "button", "Submit"),
            tag(6, "span", "Instructions"),
            tag(7, "tab", "Tab 1"),
            tag(8, "tab", "Tab 2"),
            f"<p>Content of tab {self.tab}</p>",
            tag(9, "input_text", "", f' value="{self.text}"'),
        ]
        return "\n".join(lines)

    def _obs(self) -> Observation:
        return Observation(self._screen(), info={"goal": TASKS[self.task.split("/")[0]][0]})

    async def reset(self, task_id: str) -> Observation:
        self.check_task(task_id)
        self.__init__()
        self.task = task_id
        return self._obs()

    async def set_disabled_ids(self, ids: list[str]) -> Observation:
        self.disabled = {int(i) for i in ids}
        return self._obs()

    async def step(self, action: str) -> StepResult:
        obs = self._obs()
        if self.over:
            return invalid(obs, "the episode is over")
        click = re.fullmatch(r"click id=(\d+)", action)
        enter = re.fullmatch(r'enter "(.*)" to id=(\d+)', action)
        target = int((click or enter).group(click and 1 or 2)) if (click or enter) else None
        if target is not None and (target in self.disabled or not 1 <= target <= 9):
            return invalid(obs, f"no element with id={target} on the screen")
        self.history.append(action)
        if enter and target == 9:
            self.text = enter.group(1)
        elif click and target in LABELS and self.task.startswith("boxes"):
            self.checked ^= {target}
        elif click and target in (7, 8):
            self.tab = target - 6
        elif click and target in (1, 3, 5):
            self.over = True
            wanted = TASKS[self.task.split("/")[0]][1]
            ok = target == 5 and self.checked == wanted
            return StepResult(self._obs(), 1.0 if ok else -1.0, True, success=ok)
        elif not (click or enter or action.startswith(("press ", "hold ", "release "))):
            return invalid(obs, f"unknown action {action!r}")
        return StepResult(self._obs(), 0.0, False)

    async def snapshot(self) -> dict[str, Any]:
        return {"task": self.task, "history": list(self.history), "disabled": sorted(self.disabled)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        await self.reset(snapshot["task"])
        for action in snapshot["history"]:
            await self.step(action)
        self.disabled = set(snapshot["disabled"])
        return self._obs()


@pytest.fixture(autouse=True)
def fake_env(monkeypatch):
    """Registers FakePageEnv as env "fakepage" (import this fixture into a test module)."""
    monkeypatch.setitem(envs.base.ENV_CLASSES, "fakepage", f"{__name__}:FakePageEnv")
