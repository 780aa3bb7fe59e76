"""Experience batching (paper 3.2.1): the batches, the Send fan-outs and their fan-ins, and
the model-call positions of parallel branches.

Batches walk through the training pool without replacement, as the original's training
loop does (a DataLoader over the training set: batch k of an epoch is items kB..kB+B-1,
the last one may be shorter, and the next epoch starts over), in the pool's listed order as
the original code (``shuffle=False``; the default ``Context.shuffle_pool=False``). The paper
selects the instances "randomly": ``Context.shuffle_pool=True`` walks, each epoch, a
permutation seeded by (Context.seed, epoch) instead. Iteration i's batch depends only on
the pool, the seed and i, so a resumed or repeated run draws the same batches. A pool
smaller than B gives batches of the whole pool. Every branch plays its task in its own env
session, ``f"{thread}/{iteration}/{task_id}"``, so parallel games never share an env.

Model-call positions (what a scripted model answers from) derive from model-call counters
in state, as in every node (nodes.runtime.llm.caller_for): a Caller starts at its state's
``usage["model_calls"]``. In parallel phases every branch's counter starts at the same
count, the run's calls before the phase counted in lockstep: a collection is sent with its
``usage`` counter at that count (``counted_from``; calls only, its tokens and cost are its
own), a reflection likewise (its Caller starts at that count and reports only its own
calls). So all branches read the same
script lines in lockstep: line start+k answers step k of every branch, whichever branch
the scheduler runs first. The count after a phase is its longest branch's: the run's next
sequential call (the plan update) reads the line after it. ``phase_starts`` derives these
counts from the records the run keeps (each experience's counter, each reflection's calls,
each plan update's calls: ``plan_calls``, more than one when a person rejected a plan), so
nothing but counters is kept for them, and a resumed run reads the same lines as an
uninterrupted one. Real models ignore positions; ``score_batch`` counts each collection's
own calls (its counter less its start) into the run's usage. The Callers are made here for
that reason: each model-calling node of a branch is a ``nodes.runtime.node.model_node`` over one of
these factories, which adds its own calls to the branch's counter as any node adds them to
the run's; how each call decodes is nodes.autoplan.decoding's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Send

from envs.base import Env, EnvError
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.decoding import GREEDY, acting_sampling
from nodes.autoplan.state import (
    BatchItem,
    Branch,
    CollectState,
    IterationScore,
    ReflectInput,
    TrainState,
)
from nodes.runtime.channels import edit
from nodes.runtime.environment import release_session, session_key, training_splits
from nodes.runtime.llm import Caller
from nodes.runtime.usage import Usage, add_usage, empty_usage

T = TypeVar("T", bound=Mapping[str, Any])


def training_pool(env: Env, split: str | None = None, task_type: str | None = None) -> list[str]:
    """The tasks training draws its batches from: a training split of the env (its
    ``training_splits``: ALFWorld ``train`` or ``valid_train``, HotpotQA ``train``), never an
    evaluation split; by default the first of them that has tasks (the full ALFWorld
    download's ``train``, else the shipped ``valid_train``), narrowed to ``task_type``."""
    allowed = training_splits(env)
    if not allowed:
        raise EnvError(
            f"AutoPlan trains on an env's training split and {env.name} declares none (its tasks are for "
            "evaluation): run it there with a plan trained elsewhere (--plan) or with none (ReAct zero-shot)"
        )
    names = [split] if split else list(allowed)
    for name in names:
        base = re.split(r"[:\[]", name, maxsplit=1)[0].strip()
        if base not in allowed:
            raise EnvError(
                f"AutoPlan trains on a training split of {env.name} ({', '.join(allowed) or 'none'}), "
                f"not {name!r}: evaluation tasks must stay unseen"
            )
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


async def release_batch(state: TrainState) -> None:
    """Close the env sessions of a batch a stopped run left open (finished branches closed theirs)."""
    for item in state.get("batch") or []:
        await release_session(item["session"])


def batch_tasks(pool: list[str], size: int, seed: int, iteration: int, shuffle: bool) -> list[str]:
    """Iteration ``iteration``'s task instances: the next B of the pool's walk (see the
    module docstring); the whole pool when it is smaller than B."""
    size = max(1, min(size, len(pool)))
    per_epoch = -(-len(pool) // size)
    epoch, k = divmod(iteration, per_epoch)
    order = list(pool)
    if shuffle:
        random.Random(f"autoplan:{seed}:{epoch}").shuffle(order)
    return order[k * size : (k + 1) * size]


def branch_session(root: str, iteration: int, task_id: str) -> str:
    """The env session key of one branch: unique per iteration and task."""
    return f"{root}/{iteration}/{task_id}"


def session_config(state: CollectState, config: RunnableConfig) -> RunnableConfig:
    """The config whose thread id keys this collection's env (the branch's own session)."""
    branch = state.get("branch")
    return {"configurable": {"thread_id": branch["session"]}} if branch else config


def caller_at(
    context: AutoPlanContext,
    position: int,
    temperature: float = GREEDY,
    top_p: float | None = None,
    task: str | None = None,
    spec: str | None = None,
) -> Caller:
    """A Caller that starts at model-call ``position`` (see the module docstring); greedy
    unless told otherwise, whatever Context.temperature says (it sets acting calls only);
    ``spec``: another model than the run's (the reflection's)."""
    return Caller(
        spec or context.model,
        temperature=temperature,
        top_p=top_p,
        max_tokens=context.max_tokens,
        calls_before=position,
        timeout=context.timeout,
        retries=context.retries,
        task=task,
    )


def branch_caller(
    context: AutoPlanContext, state: Mapping[str, Any], temperature: float = GREEDY, top_p: float | None = None
) -> Caller:
    """The Caller of a node of a collection or a reflection: it starts at the branch's counter
    (which a training branch starts at the phase's count: see the module docstring)."""
    return caller_at(context, calls(state.get("usage")), temperature, top_p, state.get("task_id"))


def reflect_caller(context: AutoPlanContext, state: Mapping[str, Any]) -> Caller:
    """A reflection's Caller: a branch's, on the reflection model (Context.reflect_model)."""
    return caller_at(context, calls(state.get("usage")), task=state.get("task_id"), spec=context.reflection_model())


def acting_caller(context: AutoPlanContext, state: CollectState) -> Caller:
    """The Caller of the thought and action calls (a branch is a training collection)."""
    return branch_caller(context, state, *acting_sampling(context, bool(state.get("branch"))))


def formalizer_caller(context: AutoPlanContext, state: CollectState) -> Caller:
    """The formalizer's Caller: sampled as the acting calls are, as the original code calls it
    (Context.formalizer_sampling="acting"), or greedy ("greedy")."""
    if context.formalizer_sampling == "greedy":
        return branch_caller(context, state)
    return acting_caller(context, state)


def update_caller(context: AutoPlanContext, state: TrainState) -> Caller:
    """The plan update's Caller: greedy, at the count after the iteration's reflections, on the
    reflection model (Context.reflect_model)."""
    return caller_at(context, phase_starts(state, iteration_of(state))[2], spec=context.reflection_model())


def iteration_of(state: TrainState) -> int:
    """The iteration under way: plans[0] is X_0, so iteration i runs with plans[i]."""
    return len(state.get("plans") or [""]) - 1


def of_iteration(items: Iterable[T], iteration: int) -> list[T]:
    """The records of one iteration in batch order (parallel writes land in any order)."""
    return sorted((x for x in items if x.get("iteration") == iteration), key=lambda x: x.get("index", 0))


def calls(usage: Usage | dict | None) -> int:
    """The model calls a usage counter holds."""
    return int((usage or {}).get("model_calls", 0))


def counted_from(count: int) -> Usage:
    """A branch's usage counter as it starts: at the run's ``count`` of calls, nothing of its own."""
    return Usage(**{**empty_usage(), "model_calls": count})


def phase_starts(state: TrainState, iteration: int) -> tuple[int, int, int]:
    """Where iteration ``iteration``'s collections, reflections and plan update start on the
    run's lockstep count of model calls, derived from the counters of the run's records: a
    collection's counter ends where it started plus its calls, a reflection counts its own
    calls, a plan update its own (``plan_calls``; a checkpoint written before that field
    existed made one call per update)."""
    experiences, reflections = state.get("experiences") or [], state.get("reflections") or []
    updates = state.get("plan_calls") or []
    start = 0
    for i in range(iteration + 1):
        reflect = max((calls(e.get("usage")) for e in of_iteration(experiences, i)), default=start)
        update = reflect + max((calls(r.get("usage")) for r in of_iteration(reflections, i)), default=0)
        if i == iteration:
            return start, reflect, update
        start = update + (updates[i] if i < len(updates) else 1)
    raise ValueError(f"no iteration {iteration}")


async def sample_batch(state: TrainState, runtime: Runtime[AutoPlanContext], config: RunnableConfig) -> dict:
    """This iteration's B task instances; start from Context.plan on the first one."""
    pool = list(dict.fromkeys(str(t) for t in state.get("task_ids") or []))
    if not pool:
        raise ValueError("AutoPlan training needs task_ids to sample batches from")
    plans = state.get("plans") or [runtime.context.plan]
    iteration = len(plans) - 1
    root = state.get("session_root") or session_key(config)
    chosen = batch_tasks(
        pool, runtime.context.batch_size, runtime.context.seed, iteration, runtime.context.shuffle_pool
    )
    batch = [
        BatchItem(task_id=task, session=branch_session(root, iteration, task), index=i) for i, task in enumerate(chosen)
    ]
    return {"batch": batch, "plans": edit(state.get("plans") or [], plans), "session_root": root}


def send_collections(state: TrainState) -> Sequence[Send]:
    """One ``collect`` branch per task instance, each with the current plan X_i and its
    counter at the phase's start."""
    iteration = iteration_of(state)
    start = phase_starts(state, iteration)[0]
    return [
        Send(
            "collect",
            {
                "task_id": item["task_id"],
                "plan": state["plans"][-1],
                "branch": Branch(session=item["session"], iteration=iteration, index=item["index"]),
                "usage": counted_from(start),
            },
        )
        for item in state["batch"]
    ]


async def score_batch(state: TrainState) -> dict:
    """Fan-in of the collections: the iteration's training success, and the collections'
    own usage counted into the run's (each counter less the phase's start)."""
    iteration = iteration_of(state)
    experiences = of_iteration(state.get("experiences") or [], iteration)
    score = IterationScore(
        iteration=iteration, successes=sum(bool(e.get("success")) for e in experiences), size=len(experiences)
    )
    start = phase_starts(state, iteration)[0]
    usage = empty_usage()
    for experience in experiences:
        counter = add_usage(experience.get("usage"), None)
        usage = add_usage(usage, Usage(**{**counter, "model_calls": counter["model_calls"] - start}))
    return {"scores": edit(state.get("scores") or [], [*(state.get("scores") or []), score]), "usage": usage}


def send_reflections(state: TrainState) -> Sequence[Send]:
    """One ``reflect`` branch per experience of this iteration, each starting at the phase's count."""
    iteration = iteration_of(state)
    start = phase_starts(state, iteration)[1]
    return [
        Send("reflect", ReflectInput(experience=experience, usage=counted_from(start)))
        for experience in of_iteration(state.get("experiences") or [], iteration)
    ]
