"""``introspect view`` of a training thread (``introspect train autoplan``): one page, a card
per iteration of AutoPlan's loop (paper 3.2). AutoPlan declares it as its ``Training.page``;
``introspect view`` (introspect.view) calls it for a thread its training wrote.

An iteration shows the batch as ``sample_batch`` drew it, the plan the batch was played
with, each experience's outcome (with its whole interaction, folded), each SIR reflection
(summary, flaw, revision) and the plan the update wrote. The batch is read from the
checkpoint taken right after it was drawn (the field is overwritten by the next iteration);
everything else is kept whole in the final state (nodes.autoplan.state.TrainState), so a
stopped run shows what it got to, its last iteration without an updated plan.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from nodes.autoplan.batch import of_iteration
from nodes.markup import STYLE, structure_html
from nodes.runtime.context import TrainingContext

EXPERIENCE = ("task_id", "success", "reward", "steps", "stop_reason", "outcome")
REFLECTION = ("task_id", "summary", "flaw", "revision")


@dataclass
class Iteration:
    number: int  # 0-based, as the state's records count them
    batch: list[str]
    plan: str  # the plan the batch was played with
    new_plan: str | None  # the plan the update wrote; None before the update ran
    score: dict[str, Any] | None
    experiences: list[dict[str, Any]] = field(default_factory=list)
    reflections: list[dict[str, Any]] = field(default_factory=list)


async def training_iterations(graph: Any, thread_id: str) -> tuple[dict[str, Any], list[Iteration]]:
    """The thread's final state and its iterations, oldest first."""
    config = {"configurable": {"thread_id": thread_id}}
    batches: dict[int, list[str]] = {}
    final: dict[str, Any] | None = None
    async for snap in graph.aget_state_history(config):  # newest first
        values = dict(snap.values)
        final = values if final is None else final
        if "collect" in snap.next:  # sample_batch has just drawn this iteration's batch
            batches.setdefault(len(values.get("plans") or []) - 1, [b["task_id"] for b in values.get("batch") or []])
    final = final or {}
    plans = list(final.get("plans") or [])
    scores = {s.get("iteration"): s for s in final.get("scores") or []}
    iterations = [
        Iteration(
            number=i,
            batch=batches[i],
            plan=plans[i] if i < len(plans) else "",
            new_plan=plans[i + 1] if i + 1 < len(plans) else None,
            score=scores.get(i),
            experiences=of_iteration(final.get("experiences") or [], i),
            reflections=of_iteration(final.get("reflections") or [], i),
        )
        for i in sorted(batches)
    ]
    return final, iterations


def _plan(title: str, css: str, plan: str | None) -> str:
    text = (
        "<i>not updated: the run stopped before the plan update</i>"
        if plan is None
        else f"<pre>{html.escape(plan.strip())}</pre>"
        if plan.strip()
        else "<i>empty: the first batch is played without a plan (ReAct zero-shot)</i>"
    )
    return f"<div class='plan {css}'><b>{html.escape(title)}</b>{text}</div>"


def _interaction(experience: dict[str, Any]) -> str:
    chat = "\n\n".join(f"[{t.get('role')}] {t.get('content', '')}" for t in experience.get("messages") or [])
    return (
        f"<details class='interaction'><summary>interaction of {html.escape(str(experience.get('task_id')))}"
        f"</summary><pre>{html.escape(chat)}</pre></details>"
    )


def _iteration_html(it: Iteration) -> str:
    score = f"{it.score['successes']}/{it.score['size']} succeeded" if it.score else "not scored yet"
    experiences = [{k: e.get(k) for k in EXPERIENCE} for e in it.experiences]
    reflections = [{k: r.get(k, "") for k in REFLECTION} for r in it.reflections]
    return (
        f"<section class='iteration' id='iteration-{it.number + 1}'><h2>Iteration {it.number + 1}"
        f"<span class='reward'>{html.escape(score)}</span></h2>"
        f"<p class='batch'>batch of {len(it.batch)}: {html.escape(', '.join(it.batch))}</p>"
        + _plan("plan before", "before", it.plan)
        + f"<details open class='experiences'><summary>experiences</summary>{structure_html(experiences)}"
        + "".join(_interaction(e) for e in it.experiences)
        + "</details>"
        + f"<details open class='reflections'><summary>SIR reflections</summary>{structure_html(reflections)}</details>"
        + _plan("plan after the update", "after", it.new_plan)
        + "</section>"
    )


def training_page(
    thread_id: str, title: str, context: TrainingContext, final: dict[str, Any], its: list[Iteration]
) -> str:
    """The training thread's page: a header with the run's settings and usage, an iteration per card."""
    usage = final.get("usage") or {}
    done = sum(it.new_plan is not None for it in its)
    summary = (
        f"{done} of {context.iterations} iterations done · pool of {len(set(final.get('task_ids') or []))} tasks · "
        f"batch {context.batch_size} · model calls={usage.get('model_calls', 0)} "
        f"tokens={usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)}"
    )
    heading = f"{title} training on {context.env}"
    body = "".join(_iteration_html(it) for it in its) or "<p>No batch was drawn.</p>"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(heading)}</title>"
        f"<style>{STYLE}</style></head><body><header><h1>{html.escape(heading)}</h1>"
        f"<div>thread {html.escape(thread_id)} · model {html.escape(context.model)}</div>"
        f"<div>{html.escape(summary)}</div></header><main>{body}</main></body></html>"
    )


async def page(graph: Any, thread_id: str, context: TrainingContext) -> str:
    """The page of training thread ``thread_id`` (``Training.page``): ``graph`` is the training
    graph bound to the thread's checkpointer."""
    final, iterations = await training_iterations(graph, thread_id)
    return training_page(thread_id, "AutoPlan", context, final, iterations)
