"""AutoPlan (Ouyang & Li, EMNLP Findings 2023; paper 004) as two LangGraph graphs.

Collection, which is also inference (one task, the plan in Context.plan, greedy; an
empty plan is the ReAct zero-shot baseline)::

    START -> start -> think -> act -> formalize -> step -+-> think   (until the episode ends
                                                        +-> finish -> END    or the step cap)

(with Context.transcript="original", ALFWorld's step cap leads to one more ``think``, which
then goes to ``finish``, as the original code asks that thought; see nodes.autoplan.transcript)

Training (paper 3.2, B = Context.batch_size, I = Context.iterations, seeded by Context.seed)::

    START -> sample_batch =Send x B=> collect -> score_batch =Send x B=> reflect -> plan -+-> sample_batch
                                                                                         +-> END

``collect`` is the collection graph itself, one Send branch per task instance, each in
its own env session; ``reflect`` is SIR (Summary, flaw Identification, Revision) per
experience; ``plan`` rewrites the plan from the whole batch (Upd-prompt). Every plan is
kept in ``plans``; ``train`` runs the loop and writes them to a file that ``load_plan``
reads back for ``introspect eval autoplan --plan FILE``.

Scripted models and parallel branches: every branch of a fan-out reads the script from
the same line on, in lockstep, and the run then moves on by its longest branch (see
nodes.autoplan.batch), so the replies never depend on which branch is scheduled first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from langgraph.graph import END, START, StateGraph

from envs.base import Env, EnvError
from envs.sessions import SESSIONS
from graphs.context import Context
from graphs.edges import inline
from nodes.autoplan.batch import (
    of_iteration,
    sample_batch,
    score_batch,
    send_collections,
    send_reflections,
)
from nodes.autoplan import few_shot, transcript
from nodes.autoplan.decoding import TRAIN_TEMPERATURE, TRAIN_TOP_P
from nodes.autoplan.collect import (
    MAX_ACTIONS,
    act,
    after_thought,
    finish,
    formalize,
    max_actions,
    next_step,
    start,
    step,
    think,
)
from nodes.autoplan.plan import next_iteration, plan
from nodes.autoplan.reflect import reflect
from nodes.autoplan.state import CollectState, TrainState
from nodes.channels import added, length
from nodes.usage import add_usage

DEFAULT_ENV = "alfworld"
ENVS = ("alfworld", "hotpotqa")
DEFAULTS: dict[str, Any] = {
    "max_actions": MAX_ACTIONS[DEFAULT_ENV],
    "max_actions_by_env": dict(MAX_ACTIONS),
    "batch_size": 4,
    "iterations": 3,
    "temperature": 0.0,  # inference, formalizer, reflection, plan update (greedy)
    "train_temperature": TRAIN_TEMPERATURE,  # acting calls of the training collection
    "train_top_p": TRAIN_TOP_P,  # nucleus sampling of those calls (paper 4.2)
}
NODES_PER_STEP = 4  # think, act, formalize, step


def recursion_limit(context: Context) -> int:
    """Supersteps a run needs: four per action plus start and finish (and the loop)."""
    return max(NODES_PER_STEP * max_actions(context), 5 * context.iterations) + 20


def _collection() -> StateGraph:
    builder = StateGraph(CollectState, context_schema=Context)
    builder.add_node("start", start)
    builder.add_node("think", think)
    builder.add_node("act", act)
    builder.add_node("formalize", formalize)
    builder.add_node("step", step)
    builder.add_node("finish", finish)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", inline(next_step), ["think", "finish"])
    builder.add_conditional_edges("think", inline(after_thought), ["act", "finish"])
    builder.add_edge("act", "formalize")
    builder.add_edge("formalize", "step")
    builder.add_conditional_edges("step", inline(next_step), ["think", "finish"])
    builder.add_edge("finish", END)
    return builder


def build_graph(checkpointer: Any = None):
    """The inference graph: input ``{"task_id": ...}``, plan from Context.plan."""
    return _collection().compile(checkpointer=checkpointer, name="autoplan")


def build_training_graph(checkpointer: Any = None):
    """The training graph: input ``{"task_ids": [...]}``, the pool batches are drawn from."""
    builder = StateGraph(TrainState, context_schema=Context)
    builder.add_node("sample_batch", sample_batch)
    builder.add_node("collect", _collection().compile(name="collect"))
    builder.add_node("score_batch", score_batch)
    builder.add_node("reflect", reflect)
    builder.add_node("plan", plan)
    builder.add_edge(START, "sample_batch")
    builder.add_conditional_edges("sample_batch", inline(send_collections), ["collect"])
    builder.add_edge("collect", "score_batch")
    builder.add_conditional_edges("score_batch", inline(send_reflections), ["reflect"])
    builder.add_edge("reflect", "plan")
    builder.add_conditional_edges("plan", inline(next_iteration), ["sample_batch", END])
    return builder.compile(checkpointer=checkpointer, name="autoplan_training")


graph = build_graph()
training_graph = build_training_graph()


def training_pool(env: Env, split: str | None = None, task_type: str | None = None) -> list[str]:
    """The tasks training draws its batches from: a training split of the env (its
    ``training_splits``: ALFWorld ``train`` or ``valid_train``, HotpotQA ``train``), never an
    evaluation split; by default the first of them that has tasks (the full ALFWorld
    download's ``train``, else the shipped ``valid_train``), narrowed to ``task_type``."""
    allowed = tuple(getattr(env, "training_splits", ()))
    names = [split] if split else list(allowed)
    for name in names:
        base = re.split(r"[:\[]", name, maxsplit=1)[0].strip()
        if base not in allowed:
            raise EnvError(f"AutoPlan trains on a training split of {env.name} ({', '.join(allowed) or 'none'}), "
                           f"not {name!r}: evaluation tasks must stay unseen")
        try:
            tasks = env.task_ids(f"{name}:{task_type}" if task_type else name)
        except EnvError:
            if split:
                raise
            continue  # e.g. the shipped ALFWorld sample has no train folder
        if tasks:
            return tasks
    kind = f" of type {task_type}" if task_type else ""
    raise EnvError(f"no {env.name} training tasks{kind} in {' or '.join(names) or 'any split'}")


def check_context(context: Context, training: bool = False) -> None:
    """Unknown or contradicting settings, refused before anything runs (EnvError)."""
    few_shot.check(context.few_shot, context.plan, training)
    transcript.check(context.transcript)


def result(state: dict[str, Any]) -> dict[str, Any]:
    """Per-task extras for evaluation: the model usage and cost of this question (Table 4)."""
    usage = state.get("usage") or {}
    return {
        "model_calls": int(usage.get("model_calls", 0)),
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "cost_usd": float(usage.get("cost_usd", 0.0)),
        "with_plan": bool((state.get("plan") or "").strip()),
        "stop_reason": state.get("stop_reason", ""),
    }


def training_record(state: TrainState, context: Context) -> dict[str, Any]:
    """What ``train`` writes: every plan, the final one, and what each iteration saw."""
    plans = list(state.get("plans") or [context.plan])
    experiences = state.get("experiences") or []
    usage = add_usage(state.get("usage"), None)
    iterations = []
    pool = list(dict.fromkeys(state.get("task_ids") or []))
    for i in range(len(plans) - 1):
        reflections = {r.get("index"): r for r in of_iteration(state.get("reflections") or [], i)}
        jobs = [
            {
                "task_id": e.get("task_id"),
                "success": bool(e.get("success")),
                "steps": e.get("steps", 0),
                "summary": reflections.get(e.get("index"), {}).get("summary", ""),
                "flaw": reflections.get(e.get("index"), {}).get("flaw", ""),
                "revision": reflections.get(e.get("index"), {}).get("revision", ""),
            }
            for e in of_iteration(experiences, i)
        ]
        iterations.append({"iteration": i, "batch_size": len(jobs), "plan": plans[i], "new_plan": plans[i + 1],
                           "jobs": jobs})
    return {
        "method": "autoplan",
        "env": context.env,
        "model": context.model,
        "batch_size": min(context.batch_size, len(pool)) if pool else context.batch_size,  # what batches held
        "batch_size_requested": context.batch_size,
        "pool_size": len(pool),
        "iterations": context.iterations,
        "seed": context.seed,
        "reflect_flaw_revision": context.reflect_flaw_revision,
        "task_ids": list(state.get("task_ids") or []),
        "plans": plans,
        "final_plan": plans[-1],
        "history": iterations,
        "usage": usage,
        "cost_per_question": usage["cost_usd"] / len(experiences) if experiences else 0.0,
    }


def write_plans(path: Path, record: dict[str, Any]) -> None:
    """The JSON record at ``path`` and the final plan as text beside it (``.txt``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    path.with_suffix(".txt").write_text(record["final_plan"].strip() + "\n", encoding="utf-8")


async def train(
    context: Context,
    *,
    task_ids: list[str],
    plan_out: Path,
    checkpointer: Any = None,
    thread_id: str,
    resume: bool = False,
    on_update: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run the training loop on ``task_ids`` and write every plan to ``plan_out``.

    ``resume=True`` continues the checkpointed run of ``thread_id`` instead of starting one.
    ``on_update(node, update)`` hears every step of the loop as it happens (see
    ``narrate_training``). Returns the record written (see ``training_record``).
    """
    if not task_ids and not resume:
        raise ValueError("AutoPlan training needs at least one task id")
    check_context(context, training=True)
    runner = training_graph.copy(update={"checkpointer": checkpointer})  # compiled once (graphs.runner)
    config = {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": recursion_limit(context),
        # not "introspect_method": `introspect resume` drives inference graphs; this thread
        # continues with train(..., resume=True), which these keys are enough for
        "metadata": {"introspect_training": "autoplan", "introspect_context": json.dumps(context.to_dict()),
                     "introspect_plan_out": str(plan_out)},
    }
    state: dict[str, Any] = {}
    try:
        async for mode, chunk in runner.astream(None if resume else {"task_ids": list(task_ids)}, config,
                                                context=context, stream_mode=["updates", "values"]):
            if mode == "values":
                state = chunk
            elif on_update is not None:
                for node, update in chunk.items():
                    if isinstance(update, dict):
                        on_update(node, update)
    finally:
        await _release_batch(runner, config)
    record = training_record(state, context)  # type: ignore[arg-type]
    write_plans(Path(plan_out), record)
    return record


async def _release_batch(runner: Any, config: dict[str, Any]) -> None:
    """Close the env sessions of a batch a failed run left open (finished branches closed theirs)."""
    if runner.checkpointer is None:
        return
    snapshot = await runner.aget_state(config)
    for item in (snapshot.values or {}).get("batch") or []:
        await SESSIONS.release(item["session"])


def load_plan(path: str | Path) -> str:
    """The final plan from a file ``train`` wrote (JSON), or a plain-text plan file."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"plan file not found: {file}")
    body = file.read_text(encoding="utf-8")
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return body.strip()
    plan_text = data.get("final_plan") if isinstance(data, dict) else None
    if not isinstance(plan_text, str):
        raise ValueError(f"{file} has no final_plan: write it with `introspect train autoplan`")
    return plan_text.strip()


__all__ = [
    "DEFAULTS", "DEFAULT_ENV", "ENVS", "build_graph", "build_training_graph", "check_context", "graph",
    "load_plan", "narrate", "narrate_training", "recursion_limit", "result", "train", "training_graph",
    "training_pool",
]


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI: the thought, the free-form action and its formalized command."""
    if node == "think" and update.get("thought"):
        return f"thought: {update['thought']}"
    if node == "act" and "raw_action" in update:
        return f"action: {update['raw_action']}"
    if node == "formalize" and "command" in update:
        return f"command: {update['command']}"
    if node == "step" and update.get("trajectory"):
        return f"observation: {update['trajectory'][-1].get('observation', '')}"
    return None


def narrate_training(node: str, update: dict[str, Any]) -> str | None:
    """One account per step of the training loop for the CLI: the batch drawn, each
    experience's outcome, each reflection and the updated plan (their text on the lines
    after the first)."""
    if node == "sample_batch" and update.get("batch"):
        tasks = [item["task_id"] for item in update["batch"]]
        return f"iteration {length(update.get('plans')) or 1}: batch of {len(tasks)}: {', '.join(tasks)}"
    if node == "collect" and added(update.get("experiences")):
        e = added(update["experiences"])[-1]
        return (f"experience {e.get('task_id')}: {'success' if e.get('success') else 'failure'} after "
                f"{e.get('steps', 0)} steps ({e.get('stop_reason', '')})")
    if node == "score_batch" and added(update.get("scores")):
        score = added(update["scores"])[-1]
        return f"batch: {score['successes']}/{score['size']} succeeded"
    if node == "reflect" and added(update.get("reflections")):
        r = added(update["reflections"])[-1]
        parts = [f"{k}: {' '.join(str(r[k]).split())}" for k in ("summary", "flaw", "revision") if r.get(k)]
        return "\n".join([f"reflection on {r.get('task_id')}:", *parts])
    if node == "plan" and added(update.get("plans")):
        return f"plan updated (plan {length(update['plans']) - 1}):\n{added(update['plans'])[-1].strip()}"
    return None
