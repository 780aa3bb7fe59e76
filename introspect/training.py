"""The training driver: runs a method's training graph (``Method.training``) as a checkpointed
thread and writes what it learned.

AutoPlan is the method with a training phase: its graph learns a plan over batches of an
env's training tasks. The driver streams every step to a listener (the CLI prints them),
closes whatever a stopped run left open, and writes the method's record of the run (JSON,
every plan) with the final plan as text beside it; ``load_plan`` reads either file back for
``--plan FILE``. A training thread records its method, Context and output file in its
checkpoint metadata, so ``introspect resume`` continues it by id alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphs.method import Method
from nodes.runtime.context import TrainingContext

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from introspect.runner import OnQuestion


def training_config(method: Method, context: TrainingContext, thread_id: str, plan_out: Path) -> RunnableConfig:
    """The thread's config; its metadata lets ``introspect resume`` continue the training."""
    return {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": method.recursion_limit(context),
        # not "introspect_method": `introspect resume` drives inference graphs with that key; a
        # training thread continues with train(..., resume=True), which these keys are enough for
        "metadata": {
            "introspect_training": method.name,
            "introspect_context": json.dumps(context.to_dict()),
            "introspect_plan_out": str(plan_out),
        },
    }


async def train(
    method: Method,
    context: TrainingContext,
    *,
    task_ids: list[str],
    plan_out: Path,
    checkpointer: Any = None,
    thread_id: str,
    resume: bool = False,
    on_update: Callable[[str, dict[str, Any]], None] | None = None,
    on_question: OnQuestion | None = None,
) -> dict[str, Any]:
    """Run ``method``'s training loop on ``task_ids`` and write every plan to ``plan_out``.

    ``resume=True`` continues the checkpointed run of ``thread_id`` instead of starting one.
    ``on_update(node, update)`` hears every step of the loop as it happens; ``on_question``
    answers the questions of a run with Context.confirm (as in ``runner.drive``; unanswered,
    the thread stays paused). Returns the record written (``method.training.record`` of the
    final state).
    """
    from langgraph.types import Command

    from introspect.runner import DURABILITY, bound, questions

    training = method.training
    if training is None:
        raise ValueError(f"{method.name} has no training phase")
    if not task_ids and not resume:
        raise ValueError(f"{method.title} training needs at least one task id")
    method.check(context, True)
    runner = bound(training.graph, checkpointer)
    config = training_config(method, context, thread_id, plan_out)
    state: dict[str, Any] = dict((await runner.aget_state(config)).values or {}) if resume else {}
    graph_input: Any = None if resume else {"task_ids": list(task_ids)}
    pending = await questions(runner, config) if resume and on_question else []
    try:
        while True:
            if pending:
                assert on_question is not None  # questions are only gathered for it
                answers = await on_question(pending)
                if answers is None:
                    break
                graph_input = Command(resume=answers)
            mode: str
            chunk: Any  # a list of stream modes yields (mode, chunk) pairs, which the stubs do not tell apart
            async for mode, chunk in runner.astream(
                graph_input, config, context=context, stream_mode=["updates", "values"], durability=DURABILITY
            ):
                if mode == "values":
                    state = chunk
                elif on_update is not None:
                    for node, update in chunk.items():
                        if isinstance(update, dict):
                            on_update(node, update)
            pending = await questions(runner, config) if on_question else []
            if not pending:
                break
    finally:
        if runner.checkpointer is not None:  # what a stopped run left open (finished branches closed theirs)
            await training.release(dict((await runner.aget_state(config)).values or {}))
    record = training.record(state, context)
    write_plans(Path(plan_out), record)
    return record


def write_plans(path: Path, record: dict[str, Any]) -> None:
    """The JSON record at ``path`` and the final plan as text beside it (``.txt``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    path.with_suffix(".txt").write_text(record["final_plan"].strip() + "\n", encoding="utf-8")


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
