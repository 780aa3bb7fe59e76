"""AutoPlan's graph state: one collection (a task played with a plan) and the training loop.

The two schemas share only ``experiences`` and ``usage`` (both reducers). That is what
lets the collection graph run as a node of the training graph, once per task through
``Send``: LangGraph writes back only the keys the parent knows, so B parallel
collections add their experience and their usage without touching each other.
Everything is plain JSON so any checkpointer stores it and Studio shows it.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from nodes.channels import log, record
from nodes.state import RunState
from nodes.usage import Usage, add_usage


class Turn(TypedDict):
    """One chat message of an experience (paper: H_t, the interaction history)."""

    role: Literal["user", "assistant"]
    content: str


class Branch(TypedDict):
    """Where a collection sits in training: its env session and its script offset."""

    session: str  # env session key, f"{thread}/{iteration}/{task_id}"
    iteration: int
    index: int  # position in the batch; fixes the order of experiences in the Upd-prompt
    call_offset: int  # model-call position the branch starts at (see nodes.autoplan.batch)


class Experience(TypedDict, total=False):
    """A finished collection: what SIR reflection and the plan update read."""

    iteration: int
    index: int
    task_id: str
    task_type: str  # ALFWorld's type of the game ("" where the env has none)
    objective: str
    plan: str
    messages: list[Turn]  # the whole interaction, ending with the last observation
    success: bool
    reward: float
    steps: int
    stop_reason: str  # "done" (the env ended the episode) or "max_actions"
    outcome: str  # the result sentence the reflection prompts start from
    usage: Usage  # the collection's own model usage (paper Table 4)


class CollectState(RunState, total=False):
    """One collection (paper 3.2.1); in training it runs as one Send branch."""

    plan: str
    task_type: str  # ALFWorld's type of the game, for the task description's job line
    opening: str  # o_0 as the chat shows it (nodes.autoplan.transcript.opening)
    intro: str  # the task's own introduction of its site or world (obs.info["intro"]), "" for the env's
    branch: Branch  # absent in the inference graph
    # A record written as edits, not a log: LangGraph turns {"role", "content"} dicts written
    # in a list to a DeltaChannel into message objects, which would leave state's plain JSON.
    messages: Annotated[list[Turn], record()]
    thought: str  # the latest thought ~a_t
    raw_action: str  # the latest free-form action a'_t
    command: str  # the latest formalized action a_t = F(a'_t)
    experiences: Annotated[list[Experience], log()]


class Reflection(TypedDict, total=False):
    """SIR reflection of one experience (paper 3.2.2): summary s_j, flaw f_j, revision r_j."""

    iteration: int
    index: int
    task_id: str
    summary: str
    flaw: str  # "" when the ablation leaves out flaw identification and revision
    revision: str
    usage: Usage


class ReflectInput(TypedDict):
    """The Send payload of one reflection."""

    experience: Experience
    call_offset: int


class BatchItem(TypedDict):
    task_id: str
    session: str
    index: int


class IterationScore(TypedDict):
    iteration: int
    successes: int
    size: int


class TrainState(TypedDict, total=False):
    """The training loop (paper 3.2): a batch, its experiences and reflections, every plan."""

    task_ids: Annotated[list[str], record()]  # the pool batches are sampled from
    session_root: str  # thread id (or a fresh run id) the branch sessions hang under
    plans: Annotated[list[str], record()]  # plans[0] is the initial plan X_0, plans[i] the plan after iteration i
    batch: list[BatchItem]  # the current iteration's task instances P_1..P_B
    position: int  # model-call position of the next sequential call (scripted models)
    scores: Annotated[list[IterationScore], record()]  # training success per iteration
    experiences: Annotated[list[Experience], log()]
    reflections: Annotated[list[Reflection], log()]
    usage: Annotated[Usage, add_usage]
