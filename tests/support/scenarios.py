"""One known run of every graph Studio serves, as test material: the graph, its input, its
Context, the scripted model's replies and what the final state must show.

The four method graphs replay their shipped demos (each on its paper's environment: LASER on
WebShop, Structured Reflection on MiniWoB++ in Chromium, Devil's Advocate on the local shop
through the WebArena env, AutoPlan on a real ALFWorld game), without the demos' imitation
latency unless asked; ``autoplan_training`` runs one training iteration on two HotpotQA
training questions (SQLite full-text search), its batch in parallel branches.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.openai_stub import Reply

ROOT = Path(__file__).resolve().parents[2]
DEMOS = ROOT / "introspect" / "demos"
GRAPH_IDS = tuple(json.loads((ROOT / "langgraph.json").read_text())["graphs"])


@dataclass(frozen=True)
class Scenario:
    graph: str  # the graph's id in langgraph.json
    method: str
    env: str
    graph_input: dict[str, Any]
    replies: list[dict[str, Any]]
    context: dict[str, Any] = field(default_factory=dict)  # Context fields besides model and env
    check: Callable[[dict[str, Any]], None] = lambda state: None  # asserts on the final state

    def context_for(self, spec: str) -> dict[str, Any]:
        """The settings as JSON (what Studio and the method's Context class take) for model ``spec``."""
        return {"model": spec, "env": self.env, **self.context}

    def settings(self, spec: str) -> Any:
        """The method's own Context for model ``spec``."""
        from graphs import method_named

        return method_named(self.method).context(**self.context_for(spec))

    def stub_replies(self) -> list[Reply]:
        """The replies for the OpenAI-compatible stub (tests.support.openai_stub)."""
        return [Reply(content=r.get("content", ""), tool_calls=r.get("tool_calls", [])) for r in self.replies]

    def write_script(self, path: Path, *, latency: bool = False) -> str:
        """The replies as a script at ``path`` (their ``delay`` kept only with ``latency``);
        returns the ``scripted:`` spec."""
        lines = [r if latency else {k: v for k, v in r.items() if k != "delay"} for r in self.replies]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return f"scripted:{path}"


def demo_replies(method: str) -> list[dict[str, Any]]:
    spec = json.loads((DEMOS / f"{method}.json").read_text())
    return [json.loads(line) for line in (DEMOS / spec["recording"]).read_text().splitlines() if line.strip()]


def _demo(method: str, check: Callable[[dict[str, Any]], None]) -> Scenario:
    spec = json.loads((DEMOS / f"{method}.json").read_text())
    return Scenario(
        method,
        method,
        spec["env"],
        {"task_id": spec["task_id"]},
        demo_replies(method),
        dict(spec.get("context", {})),
        check,
    )


def _won(state: dict[str, Any]) -> None:
    assert state["success"] is True and state["reward"] == 1.0, (state.get("reward"), state.get("stop_reason"))


def _laser(state: dict[str, Any]) -> None:
    _won(state)
    assert state["trajectory"][-1]["action"] == "click[Buy Now]"


def _sr(state: dict[str, Any]) -> None:
    _won(state)
    assert [t["status"] for t in state["trials"]] == ["no change", "correct"]


def _da(state: dict[str, Any]) -> None:
    _won(state)
    assert len(state["backtracks"]) == 1


# HotpotQA questions (gold "yes", then "Greenwich Village, New York City"); the graph trains on the
# pool it is given (the CLI's `train` is what restricts it to the training split)
QA_TRAIN = ("5a8b57f25542995d1e6f1371", "5a8e3ea95542995a26add48d")
NEW_PLAN = "1. Search each entity.\n2. Answer with finish[answer]."


def _training(state: dict[str, Any]) -> None:
    assert state["plans"] == ["", NEW_PLAN]
    assert sorted(e["task_id"] for e in state["experiences"]) == sorted(QA_TRAIN)
    assert {e["task_id"]: e["success"] for e in state["experiences"]} == {QA_TRAIN[0]: True, QA_TRAIN[1]: False}


SCENARIOS: dict[str, Scenario] = {
    "laser": _demo("laser", _laser),
    "structured_reflection": _demo("structured_reflection", _sr),
    "devils_advocate": _demo("devils_advocate", _da),
    "autoplan": _demo("autoplan", _won),
    # both branches read the script in lockstep: thought, action, formalized command; then a
    # summary per experience (no plan yet: HotpotQA asks no flaw, no revision); the plan update
    "autoplan_training": Scenario(
        "autoplan_training",
        "autoplan",
        "hotpotqa",
        {"task_ids": list(QA_TRAIN)},
        [
            {"content": c}
            for c in ("Both are American.", "finish with yes", "finish[yes]", "Summary.", "New Task Plan:\n" + NEW_PLAN)
        ],
        {"batch_size": 2, "iterations": 1, "max_actions": {"hotpotqa": 1}, "judge": "off"},
        _training,
    ),
}
assert set(SCENARIOS) == set(GRAPH_IDS), "a graph of langgraph.json has no scenario"

# Structured Reflection on click-checkboxes/2 (select fzzqo, NYYyS82, Submit): trial 1 ticks a
# wrong box and fails; the lesson at index 2 is enforced in trial 2 after the first action is
# replayed, and a new plan submits.
CHECKBOXES = Scenario(
    "structured_reflection",
    "structured_reflection",
    "miniwob",
    {"task_id": "click-checkboxes/2"},
    [
        {"content": c, "delay": 0.3}
        for c in (
            "click id=5\nclick id=11\nclick id=14",  # one action a line, as the code reads a plan
            "ticked fzzqo",
            "ticked the wrong box",
            "submitted",
            "For action index=2, you should click id=8.",
            "ticked NYYyS82",
            "click id=14",
        )
    ],
    check=lambda state: _checkboxes(state),  # defined below
)


def _checkboxes(state: dict[str, Any]) -> None:
    _won(state)
    assert [t["status"] for t in state["trials"]] == ["failed", "correct"]
    assert state["trials"][1]["sources"] == ["replay", "enforce", "plan"]


# Devil's Advocate sending a message through the local shop's contact form (task shop-15, a
# side effect the site keeps a record of): two subtasks, each action with its two remedies,
# described, aligned and judged; the last one submits the form.
_TYPE_ORDER, _TYPE_QUESTION, _SUBMIT = (
    "type [47] [000000174] [0]",
    "type [50] [Can this order still be changed?] [0]",
    "click [52]",
)
CONTACT = Scenario(
    "devils_advocate",
    "devils_advocate",
    "webarena",
    {"task_id": "shop-15"},
    [
        {"content": c, "delay": 0.2}
        for c in (
            "List:\n1. Fill in the order number and the question.\n2. Send the message.",
            _TYPE_ORDER,
            "type [45] [000000174] [0]",
            "type [49] [000000174] [0]",
            "The action is to type the order number 000000174 into the Order Number field.",
            "The action typed the order number into its field, as the step asks. YES",
            "NO",
            "NO",
            _TYPE_QUESTION,
            "type [45] [Can this order still be changed?] [0]",
            "type [39] [Can this order still be changed?] [0]",
            "The action is to type the question into the message field.",
            "The question is now in the message field. YES",
            "NO",
            "YES",
            _SUBMIT,
            "click [55]",
            "click [7]",
            "The action is to send the message; the shop thanks the sender.",
            "The message was sent. YES",
            "YES",
            "###Answer: The message was sent.",
        )
    ],
    {"env_options": {"viewport_height": 1000}},  # the Submit button in view
    lambda state: _contact(state),  # defined below
)


def _contact(state: dict[str, Any]) -> None:
    _won(state)
    assert [s["action"] for s in state["trajectory"]] == [
        _TYPE_ORDER,
        _TYPE_QUESTION,
        _SUBMIT,
        "stop [The message was sent.]",
    ]
