"""Long scripted runs of every method, for the benchmarks (not tests).

Each workload is a run of 30 graph steps or more on the method's own environment, with a
scripted model whose replies keep the agent moving: LASER examines five items (every
detail page of each) before its backup strategy buys one; Structured Reflection switches
tabs on MiniWoB's click-tab-2 over several stages and trials; Devil's Advocate scrolls and
takes notes on the local shop, each action with two remedies on the stack; AutoPlan plays
ALFWorld and HotpotQA episodes, and trains on HotpotQA for seven iterations. Nothing here
is tuned for speed: the replies are what a model could answer, and every one is valid, so
the runs go as long as the method lets them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs import make_env


@dataclass
class Workload:
    """A method, its env and task, the Context settings and the scripted replies."""

    name: str
    method: str
    env: str
    task_id: str  # "" for training, which draws from ``pool``
    replies: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    pool: list[str] = field(default_factory=list)

    def script(self, folder: Path) -> str:
        """Write the replies as a JSONL script; returns the ``scripted:`` model spec."""
        path = folder / f"{self.name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.replies), encoding="utf-8")
        return f"scripted:{path}"


def _say(text: str) -> dict[str, Any]:
    return {"content": text}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args}]}


async def laser() -> Workload:
    """Search, then five items examined in full (Description, Features, Reviews) and left,
    a refused answer, a second search; at 13 transitions the backup strategy buys one."""
    env = make_env("webshop")
    for task_id in env.task_ids("synthetic"):
        await env.reset(task_id)
        goal = env.goal
        result = await env.step(f"search[{goal['name']}]")
        ids = result.observation.info["item_ids"]
        if len(ids) >= 6:
            break
    item_page = await env.step(f"click[{ids[1]}]")
    options = {kind: values[0] for kind, values in (item_page.observation.info.get("options") or {}).items() if values}
    await env.close()
    replies = [_say("Rationale: search for the product."), _call("Search", keywords=goal["name"], max_price="1000000")]
    for item in ids[1:6]:
        replies += [_say(f"Rationale: {item} might match."), _call("select_item", item_id=item)]
        for detail in ("Description", "Features", "Reviews"):
            replies += [_say(f"Rationale: read the {detail.lower()}."), _call(detail)]
        replies += [_say("Rationale: it does not match; back to the results."), _call("Prev")]
    refused = [_call("select_item", item_id="no-such-item")] * 3  # an id not on the page, three times
    replies += [_say("Rationale: try another item."), *refused]
    replies += [_say("Rationale: nothing fits; search again."), _call("Back_to_Search")]
    replies += [_say("Rationale: search with other words."), _call("Search", keywords=goal["name"][:40])]
    replies += [
        _say("Rationale: the backup strategy picks the first examined item."),
        _call("select_item", item_id=ids[1]),
    ]
    replies += [  # the customisation step (LASER's default): the option types, the rationale, the call
        _say("Customization types: " + (", ".join(options) or "None")),
        _say("Rationale: buy it with its first options."),
        _call("Buy_Now", **options),
    ]
    return Workload("laser", "laser", "webshop", task_id, replies)


def structured_reflection() -> Workload:
    """click-tab-2: a first trial of tab switches, two per stage (each paraphrased), until the
    planner has nothing more (incomplete); the reflection names index 2, so the second trial
    replays the first action, is made to take B there, and switches tabs again."""

    def stages(count: int) -> list[dict[str, Any]]:
        tabs, out = ["7", "9", "5"], []
        for stage in range(count):
            first, second = tabs[(2 * stage) % 3], tabs[(2 * stage + 1) % 3]
            out += [
                _say(f"click id={first}\nclick id={second}"),
                _say(f"I switched to the tab with id {first}."),
                _say(f"I switched to the tab with id {second}."),
            ]
        return [*out, _say("")]  # an empty plan: nothing more (the code reads any line as an action)

    replies = [
        *stages(6),
        _say("For action index=2, you should click id=5."),
        _say("I switched back to the first tab."),
        *stages(4),
    ]
    return Workload(
        "structured_reflection", "structured_reflection", "miniwob", "click-tab-2/0", replies, {"max_trials": 2}
    )


def devils_advocate(actions: int = 8) -> Workload:
    """The local shop's task shop-14: a one-step plan; each action (a scroll or a note) gets
    two remedies (pushed on the stack), a description, an aligned verdict and "not done"."""
    replies = [_say("List:\n1. Look through the page for the product.")]
    for n in range(actions):
        act = "scroll [down]" if n % 2 == 0 else f"note_down [item {n}]"
        remedies = ["scroll [up]", f"note_down [remedy {n}]"] if n % 2 == 0 else ["scroll [down]", "go_back"]
        replies += [_say(act), *(_say(r) for r in remedies)]
        replies += [
            _say(f"The action {act} moved along the page."),
            _say("It helps with the step. YES"),
            _say("NO"),
            _say("NO"),
        ]
    return Workload("devils_advocate", "devils_advocate", "webarena", "shop-14", replies, {"max_actions": actions})


_ALFWORLD_PLACES = ["countertop 1", "cabinet 1", "drawer 1", "shelf 1", "sinkbasin 1", "fridge 1", "stoveburner 1"]


def autoplan_alfworld(steps: int = 12) -> Workload:
    """An ALFWorld game walked from place to place (thought, action, formalized command)."""
    env = make_env("alfworld")
    task_id = env.task_ids("valid_unseen")[0]
    replies: list[dict[str, Any]] = []
    for n in range(steps):
        place = _ALFWORLD_PLACES[n % len(_ALFWORLD_PLACES)]
        replies += [_say(f"Maybe the object is at {place}."), _say(f"go to the {place}"), _say(f"go to {place}")]
    replies.append(_say("The object was not found."))  # the thought the original's chat asks at the step cap
    return Workload(
        "autoplan_alfworld",
        "autoplan",
        "alfworld",
        task_id,
        replies,
        {"plan": "1. Look for the object everywhere.", "max_actions": steps},
    )


def _hotpotqa_steps(entities: list[str], finish: bool) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for entity in entities:
        replies += [_say(f"I need to search {entity}."), _say(f"search {entity}"), _say(f"search[{entity}]")]
    if finish:
        replies += [_say("I can answer now."), _say("answer yes"), _say("finish[yes]")]
    return replies


def autoplan_hotpotqa() -> Workload:
    """A HotpotQA question searched ten times (the step cap)."""
    env = make_env("hotpotqa", backend="local")
    task_id = env.task_ids("test")[0]
    entities = [
        "Ed Wood",
        "Scott Derrickson",
        "Doctor Strange",
        "Los Angeles",
        "Hollywood",
        "film director",
        "screenwriter",
        "horror film",
        "Sinister",
        "Deliver Us from Evil",
    ]
    return Workload(
        "autoplan_hotpotqa",
        "autoplan",
        "hotpotqa",
        task_id,
        _hotpotqa_steps(entities, False),
        {
            "plan": "1. Search each entity of the question.",
            "max_actions": 10,
            "env_options": {"backend": "local", "judge": "off"},
        },
    )


def autoplan_training(iterations: int = 7, batch: int = 2) -> Workload:
    """AutoPlan training on HotpotQA: B=2, seven iterations; each collection searches
    twice and answers, each experience gets Summary, Flaw and Revision, then the plan."""
    env = make_env("hotpotqa", backend="local")
    pool = env.task_ids("train")[:4]
    replies: list[dict[str, Any]] = []
    for i in range(iterations):
        replies += _hotpotqa_steps(["Ed Wood", f"topic {i}"], True)
        replies.append(_say(f"Summary {i}: searched twice and answered."))
        if i:  # the first iteration has no plan: no flaw to find in it, nothing to revise
            replies += [_say(f"Flaw {i}: the plan is vague."), _say(f"Revision {i}: search the first entity first.")]
        replies.append(_say(f"New Plan:\n1. Search each entity (iteration {i + 1}).\n2. Answer."))
    return Workload(
        "autoplan_training",
        "autoplan",
        "hotpotqa",
        "",
        replies,
        # no judge: AutoPlan's paper setting asks gpt-4-0314 for each answer's verdict, and a benchmark calls no model
        {"batch_size": batch, "iterations": iterations, "seed": 1, "env_options": {"backend": "local", "judge": "off"}},
        pool,
    )


async def all_workloads() -> list[Workload]:
    return [
        await laser(),
        structured_reflection(),
        devils_advocate(),
        autoplan_alfworld(),
        autoplan_hotpotqa(),
        autoplan_training(),
    ]


async def run(workload: Workload, spec: str, saver: Any, thread_id: str, folder: Path) -> dict[str, Any]:
    """Run ``workload`` as users do (``drive``, or ``train`` for AutoPlan training) on
    ``saver``; returns the final state (the training record for training)."""
    from graphs import method_named
    from introspect.runner import drive

    context = method_named(workload.method).context(model=spec, env=workload.env, **workload.settings)
    if workload.pool:
        from introspect.training import train

        return await train(
            method_named(workload.method),
            context,
            task_ids=workload.pool,
            plan_out=folder / f"{thread_id}.json",
            checkpointer=saver,
            thread_id=thread_id,
        )
    outcome = await drive(method_named(workload.method), context, thread_id, saver, {"task_id": workload.task_id})
    return outcome.state
