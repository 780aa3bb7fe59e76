"""The graph state every method shares; each graph extends it with its own structures.

Everything here is plain JSON (TypedDicts of str, numbers, lists and dicts), so any
checkpointer can store it and Studio can show and edit it. Live objects never appear
in state: the env lives in ``envs.sessions`` and the model client in ``nodes.runtime.llm``.
Fields that grow during a run are checkpointed as each step's change (nodes.runtime.channels).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar, cast

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.calls import ModelCall
from nodes.runtime.channels import current, log
from nodes.runtime.usage import Usage, add_usage


class Step(TypedDict, total=False):
    """One executed (or refused) action in the trajectory."""

    node: str
    action: str
    rationale: str
    observation: str
    reward: float
    valid: bool
    feedback: str
    by: str  # "harness": the method's harness chose the action, not the model (absent: the model)


class RunState(TypedDict, total=False):
    """Fields shared by all methods; the eval harness reads reward, success, actions, usage."""

    task_id: str
    run_id: str  # the env session key: the thread id, or a fresh id without a checkpointer
    goal: str
    observation: Annotated[str, current()]
    env_snapshot: Annotated[dict[str, Any], current()]
    trajectory: Annotated[list[Step], log()]  # each step's write is stored, not the whole list
    actions: int
    reward: float
    done: bool
    success: bool
    stop_reason: str
    evaluation: dict[str, Any]  # the env's scoring of the final step (evaluators, EM/F1, judge)
    usage: Annotated[Usage, add_usage]
    # every model call, as made (nodes.runtime.calls): model_node writes a node's calls; each step's are stored
    calls: Annotated[list[ModelCall], log()]


S = TypeVar("S", bound=RunState)


def updated(state: S, update: Mapping[str, Any]) -> S:
    """``state`` as a node sees it after its own ``update`` so far, key by key (no reducer runs:
    the node reads back what it wrote, such as the observation an action led to). The update is
    a node's partial state, built as a plain dict, so its keys are the state's by construction."""
    return cast(S, {**state, **update})
