"""Experience batching (paper 3.2.1): the batches, the Send fan-outs and their fan-ins, and
the model-call positions of parallel branches.

Batches walk through the training pool without replacement, as the original's training
loop does (a DataLoader over the training set: batch k of an epoch is items kB..kB+B-1,
the last one may be shorter, and the next epoch starts over). The paper selects the
instances "randomly", so each epoch walks a permutation seeded by (Context.seed, epoch);
``Context.shuffle_pool=False`` walks the pool in its listed order instead, as the original
code (``shuffle=False``). Iteration i's batch depends only on the pool, the seed and i, so
a resumed or repeated run draws the same batches. A pool smaller than B gives batches of
the whole pool. Every branch plays its task in its own env session,
``f"{thread}/{iteration}/{task_id}"``, so parallel games never share an env.

Model-call positions (what a scripted model answers from) in parallel phases:
the run keeps ``position``, the position of its next sequential call. A fan-out phase
(the B collections, then the B reflections) hands every branch that position as its
``call_offset``; inside a branch the position is call_offset + the branch's own call
count. So all branches read the same script lines in lockstep: line position+k answers
step k of every branch, whichever branch the scheduler runs first. After the fan-in the
run's position advances by the longest branch's call count (``advance``), and the next
sequential call (the plan update) reads the line after it. Real models ignore positions;
the branch's usage still counts every call for cost. Positions and counts are in
checkpointed state, so a resumed run reads the same lines as an uninterrupted one. The
Callers are made here for that reason; how each call decodes is nodes.autoplan.decoding's.
"""

from __future__ import annotations

import random
import re
from typing import Any, Iterable, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Send

from envs.base import Env, EnvError
from nodes.autoplan.decoding import GREEDY, acting_sampling
from nodes.autoplan.state import (
    BatchItem,
    Branch,
    CollectState,
    IterationScore,
    ReflectInput,
    TrainState,
)
from nodes.channels import edit
from nodes.context import Context
from nodes.environment import release_session, session_key, training_splits
from nodes.llm import Caller

T = TypeVar("T", bound=dict)


def training_pool(env: Env, split: str | None = None, task_type: str | None = None) -> list[str]:
    """The tasks training draws its batches from: a training split of the env (its
    ``training_splits``: ALFWorld ``train`` or ``valid_train``, HotpotQA ``train``), never an
    evaluation split; by default the first of them that has tasks (the full ALFWorld
    download's ``train``, else the shipped ``valid_train``), narrowed to ``task_type``."""
    allowed = training_splits(env)
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


async def release_batch(state: dict[str, Any]) -> None:
    """Close the env sessions of a batch a stopped run left open (finished branches closed theirs)."""
    for item in state.get("batch") or []:
        await release_session(item["session"])


def batch_tasks(pool: list[str], size: int, seed: int, iteration: int, shuffle: bool = True) -> list[str]:
    """Iteration ``iteration``'s task instances: the next B of the pool's walk (see the
    module docstring); the whole pool when it is smaller than B."""
    size = max(1, min(size, len(pool)))
    per_epoch = -(-len(pool) // size)
    epoch, k = divmod(iteration, per_epoch)
    order = list(pool)
    if shuffle:
        random.Random(f"autoplan:{seed}:{epoch}").shuffle(order)
    return order[k * size:(k + 1) * size]


def branch_session(root: str, iteration: int, task_id: str) -> str:
    """The env session key of one branch: unique per iteration and task."""
    return f"{root}/{iteration}/{task_id}"


def session_config(state: CollectState, config: RunnableConfig) -> RunnableConfig:
    """The config whose thread id keys this collection's env (the branch's own session)."""
    branch = state.get("branch")
    return {"configurable": {"thread_id": branch["session"]}} if branch else config


def caller_at(context: Context, position: int, temperature: float = GREEDY, top_p: float | None = None,
              task: str | None = None) -> Caller:
    """A Caller that starts at model-call ``position`` (see the module docstring); greedy
    unless told otherwise, whatever Context.temperature says (it sets acting calls only)."""
    return Caller(context.model, temperature=temperature, top_p=top_p, max_tokens=context.max_tokens,
                  calls_before=position, timeout=context.timeout, retries=context.retries, task=task)


def branch_caller(context: Context, state: dict[str, Any], temperature: float = GREEDY,
                  top_p: float | None = None) -> Caller:
    """The Caller of a node inside a branch: the branch offset plus its own calls."""
    branch = state.get("branch") or {}
    own = int((state.get("usage") or {}).get("model_calls", 0))
    return caller_at(context, int(branch.get("call_offset", 0)) + own, temperature, top_p, state.get("task_id"))


def acting_caller(context: Context, state: CollectState) -> Caller:
    """The Caller of the thought and action calls (a branch is a training collection)."""
    return branch_caller(context, state, *acting_sampling(context, bool(state.get("branch"))))


def iteration_of(state: TrainState) -> int:
    """The iteration under way: plans[0] is X_0, so iteration i runs with plans[i]."""
    return len(state.get("plans") or [""]) - 1


def of_iteration(items: Iterable[T], iteration: int) -> list[T]:
    """The records of one iteration in batch order (parallel writes land in any order)."""
    return sorted((x for x in items if x.get("iteration") == iteration), key=lambda x: x.get("index", 0))


def advance(position: int, records: Iterable[dict]) -> int:
    """The position after a fan-out phase: its longest branch's call count further."""
    return position + max((int(r.get("usage", {}).get("model_calls", 0)) for r in records), default=0)


async def sample_batch(state: TrainState, runtime: Runtime[Context], config: RunnableConfig) -> dict:
    """This iteration's B task instances; start from Context.plan on the first one."""
    pool = list(dict.fromkeys(str(t) for t in state.get("task_ids") or []))
    if not pool:
        raise ValueError("AutoPlan training needs task_ids to sample batches from")
    plans = state.get("plans") or [runtime.context.plan]
    iteration = len(plans) - 1
    root = state.get("session_root") or session_key(config)
    chosen = batch_tasks(pool, runtime.context.batch_size, runtime.context.seed, iteration,
                         runtime.context.shuffle_pool)
    batch = [
        BatchItem(task_id=task, session=branch_session(root, iteration, task), index=i)
        for i, task in enumerate(chosen)
    ]
    return {"batch": batch, "plans": edit(state.get("plans") or [], plans), "session_root": root,
            "position": state.get("position", 0)}


def send_collections(state: TrainState) -> list[Send]:
    """One ``collect`` branch per task instance, each with the current plan X_i."""
    iteration = iteration_of(state)
    return [
        Send(
            "collect",
            {
                "task_id": item["task_id"],
                "plan": state["plans"][-1],
                "branch": Branch(
                    session=item["session"],
                    iteration=iteration,
                    index=item["index"],
                    call_offset=int(state.get("position", 0)),
                ),
            },
        )
        for item in state["batch"]
    ]


async def score_batch(state: TrainState) -> dict:
    """Fan-in of the collections: the iteration's training success, the next position."""
    iteration = iteration_of(state)
    experiences = of_iteration(state.get("experiences") or [], iteration)
    score = IterationScore(
        iteration=iteration, successes=sum(bool(e.get("success")) for e in experiences), size=len(experiences)
    )
    return {
        "scores": edit(state.get("scores") or [], [*(state.get("scores") or []), score]),
        "position": advance(int(state.get("position", 0)), experiences),
    }


def send_reflections(state: TrainState) -> list[Send]:
    """One ``reflect`` branch per experience of this iteration."""
    offset = int(state.get("position", 0))
    return [
        Send("reflect", ReflectInput(experience=experience, call_offset=offset))
        for experience in of_iteration(state.get("experiences") or [], iteration_of(state))
    ]
