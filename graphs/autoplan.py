"""AutoPlan (Ouyang & Li, EMNLP Findings 2023; paper 004) as two LangGraph graphs.

Collection, which is also inference (one task, the plan in Context.plan, greedy; an
empty plan is the ReAct zero-shot baseline)::

    START -> start -> think -> act -> formalize -> execute -+-> think   (until the episode ends
                                                           +-> finish -> END    or the step cap)

(with Context.transcript="original", ALFWorld's step cap leads to one more ``think``, which
then goes to ``finish``, as the original code asks that thought; see nodes.autoplan.transcript;
with Context.after_look="restart", a look, inventory or examine the game accepted leads from
``execute`` back to ``start``: the original code restarts such an episode with a fresh chat)

Training (paper 3.2, B = Context.batch_size, I = Context.iterations, seeded by Context.seed)::

    START -> sample_batch =Send x B=> collect -> score_batch =Send x B=> reflect -> plan -+-> sample_batch
                                                                                         +-> END

``collect`` is the collection graph itself, one Send branch per task instance, each in
its own env session; ``reflect`` is SIR (Summary, flaw Identification, Revision) per
experience; ``plan`` rewrites the plan from the whole batch (Upd-prompt). Every plan is
kept in ``plans``; the app's training driver (introspect.training) runs the loop and writes
them (``training_record``) to a file that ``introspect eval autoplan --plan FILE`` reads back.

Scripted models and parallel branches: every branch of a fan-out reads the script from
the same line on, in lockstep, and the run then moves on by its longest branch, positions
derived from the model-call counters in state (see nodes.autoplan.batch), so the replies
never depend on which branch is scheduled first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from graphs.edges import add_nodes, add_sent_node, inline
from graphs.method import BaseAgent, Intervention, Method, Report, Training, View
from nodes.autoplan import bound as autoplan_bound
from nodes.autoplan import few_shot, report, training_view
from nodes.autoplan.batch import (
    of_iteration,
    release_batch,
    sample_batch,
    score_batch,
    send_collections,
    send_reflections,
    training_pool,
)
from nodes.autoplan.collect import (
    ANSWERED,
    act,
    after_thought,
    execute_command,
    finish,
    formalize,
    next_step,
    start,
    think,
)
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.plan import next_iteration, plan
from nodes.autoplan.reflect import reflect
from nodes.autoplan.state import Collected, CollectState, Reflection, TrainState
from nodes.autoplan.variants import variant
from nodes.runtime.channels import added, length
from nodes.runtime.usage import add_usage, empty_usage
from prompts import SHIPPED

NODES_PER_STEP = 4  # think, act, formalize, execute


def recursion_limit(context: AutoPlanContext) -> int:
    """Supersteps a run needs: four per action plus start and finish (and the loop), for each
    time an ALFWorld episode may start again (Context.after_look)."""
    episodes = 1 + context.max_restarts if variant(context.env).restarts_after else 1
    return max(NODES_PER_STEP * (context.steps() + 1) * episodes, 5 * context.iterations) + 20


def _collection(output_schema: type | None = None) -> StateGraph[CollectState, AutoPlanContext, CollectState, Any]:
    """The collection graph; in training it hands back only its experience (``Collected``)."""
    builder = StateGraph(CollectState, context_schema=AutoPlanContext, output_schema=output_schema)
    add_nodes(
        builder,
        {
            "start": start,
            "think": think,
            "act": act,
            "formalize": formalize,
            "execute": execute_command,
            "finish": finish,
        },
    )
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", inline(next_step), ["think", "finish"])
    builder.add_conditional_edges("think", inline(after_thought), ["act", "finish"])
    builder.add_edge("act", "formalize")
    builder.add_edge("formalize", "execute")
    builder.add_conditional_edges("execute", inline(next_step), ["think", "finish", "start"])
    builder.add_edge("finish", END)
    return builder


def build_graph(checkpointer: Any = None):
    """The inference graph: input ``{"task_id": ...}``, plan from Context.plan."""
    return _collection().compile(checkpointer=checkpointer, name="autoplan")


def build_training_graph(checkpointer: Any = None):
    """The training graph: input ``{"task_ids": [...]}``, the pool batches are drawn from."""
    builder = StateGraph(TrainState, context_schema=AutoPlanContext)
    add_nodes(builder, {"sample_batch": sample_batch})
    builder.add_node("collect", _collection(Collected).compile(name="collect"))  # a subgraph
    add_nodes(builder, {"score_batch": score_batch})
    add_sent_node(builder, "reflect", reflect)
    add_nodes(builder, {"plan": plan})
    builder.add_edge(START, "sample_batch")
    builder.add_conditional_edges("sample_batch", inline(send_collections), ["collect"])
    builder.add_edge("collect", "score_batch")
    builder.add_conditional_edges("score_batch", inline(send_reflections), ["reflect"])
    builder.add_edge("reflect", "plan")
    builder.add_conditional_edges("plan", inline(next_iteration), ["sample_batch", END])
    return builder.compile(checkpointer=checkpointer, name="autoplan_training")


graph = build_graph()
training_graph = build_training_graph()


def check_context(context: AutoPlanContext, training: bool) -> None:
    """Contradicting settings, refused before anything runs (EnvError); each field's own
    values are checked by Context."""
    few_shot.check(context.few_shot, context.plan, training, context.env)


def result(state: CollectState) -> dict[str, Any]:
    """Per-task extras for evaluation: the model usage and cost of this question (Table 4)."""
    usage = state.get("usage") or empty_usage()
    return {
        "model_calls": usage["model_calls"],
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "cost_usd": usage["cost_usd"],
        "with_plan": bool((state.get("plan") or "").strip()),
        "stop_reason": state.get("stop_reason", ""),
        "restarts": state.get("restarts", 0),
    }


def training_record(state: TrainState, context: AutoPlanContext) -> dict[str, Any]:
    """What training writes (introspect.training): every plan, the final one, and what each
    iteration saw."""
    plans = list(state.get("plans") or [context.plan])
    experiences = state.get("experiences") or []
    usage = add_usage(state.get("usage"), None)
    iterations = []
    pool = list(dict.fromkeys(state.get("task_ids") or []))
    unreflected = Reflection()  # what an experience without a reflection shows
    for i in range(len(plans) - 1):
        reflections = {r.get("index"): r for r in of_iteration(state.get("reflections") or [], i)}
        jobs = [
            {
                "task_id": e.get("task_id"),
                "success": bool(e.get("success")),
                "steps": e.get("steps", 0),
                "summary": reflections.get(e.get("index"), unreflected).get("summary", ""),
                "flaw": reflections.get(e.get("index"), unreflected).get("flaw", ""),
                "revision": reflections.get(e.get("index"), unreflected).get("revision", ""),
            }
            for e in of_iteration(experiences, i)
        ]
        iterations.append(
            {"iteration": i, "batch_size": len(jobs), "plan": plans[i], "new_plan": plans[i + 1], "jobs": jobs}
        )
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
        "cost_per_question": (
            None if usage["cost_usd"] is None else usage["cost_usd"] / len(experiences) if experiences else 0.0
        ),
    }


def narrate(node: str, update: dict[str, Any]) -> str | None:
    """One line for the CLI: the thought, the free-form action and its formalized command."""
    if node == "think" and update.get("thought"):
        return f"thought: {update['thought']}"
    if node == "act" and "raw_action" in update:
        return f"action: {update['raw_action']}"
    if node == "formalize" and "command" in update:
        return f"command: {update['command']}"
    if node == "execute" and update.get("trajectory"):
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
        return (
            f"experience {e.get('task_id')}: {'success' if e.get('success') else 'failure'} after "
            f"{e.get('steps', 0)} steps ({e.get('stop_reason', '')})"
        )
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


def structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``introspect view``: the plan followed, and the step's thought, free-form and formalized action."""
    values = states[-1]
    return [
        ("plan", values.get("plan") or "(none: ReAct zero-shot)"),
        ("thought", values.get("thought")),
        ("free-form action", values.get("raw_action")),
        ("formalized", values.get("command")),
    ]


def introspection(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``introspect export --format steps``: the plan followed and the step's thought."""
    values = states[-1]
    return {
        "plan": values.get("plan") or "",
        "thought": values.get("thought") or "",
        "free_form_action": values.get("raw_action") or "",
    }


def planned(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """The run started with a plan to follow (its first start; a restart keeps it)."""
    return not before.get("plan") and bool(after.get("plan"))


METHOD = Method(
    name="autoplan",
    title="AutoPlan",
    summary="plan optimisation by batched reflection",
    paper="Ouyang & Li 2023",
    build_graph=build_graph,
    graph=graph,
    envs=("alfworld", "hotpotqa", "webshop", "miniwob", "webarena"),
    paper_envs=("alfworld", "hotpotqa"),
    paper_model="openai:gpt-4-0314",
    context=AutoPlanContext,
    result=result,
    recursion_limit=recursion_limit,
    narrate=narrate,
    check=check_context,
    training=Training(
        build_graph=build_training_graph,
        graph=training_graph,
        pool=training_pool,
        record=training_record,
        release=release_batch,
        narrate=narrate_training,
        envs=("alfworld", "hotpotqa"),
        page=training_view.page,
    ),
    studio_graphs={"autoplan": "graph", "autoplan_training": "training_graph"},
    baselines={"ReAct zero-shot": "no --plan", "ReAct few-shot": "--set few_shot=react"},
    view=View(structures=structures, introspection=introspection),
    report=Report(tables=report.tables, figures=report.figures),
    prompts=SHIPPED.folder("autoplan"),
    bound=autoplan_bound.bound,
    verdicts=(ANSWERED,),
    base_agent=BaseAgent({"plan": ""}, "the learned plan (ReAct zero-shot)"),
    # its plan revision happens while it trains; what a run can be ablated of is the plan it learned
    interventions=(
        Intervention(
            "plan",
            "start",
            {"plan": ""},
            "follow the plan it learned (without it: ReAct zero-shot, the paper's baseline)",
            fired=planned,
        ),
    ),
)
