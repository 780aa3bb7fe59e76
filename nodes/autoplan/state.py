"""AutoPlan's graph state: one collection (a task played with a plan) and the training loop.

The collection graph runs as a node of the training graph, once per task through ``Send``;
there it hands back only ``Collected`` (its experience, a log), so B parallel collections
add their experiences without touching each other, and the training loop counts their usage
from the experiences' counters (nodes.autoplan.batch.score_batch).
Everything is plain JSON so any checkpointer stores it and Studio shows it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.channels import log, record
from nodes.runtime.state import RunState
from nodes.runtime.usage import Usage, add_usage


class Turn(TypedDict):
    """One chat message of an experience (paper: H_t, the interaction history)."""

    role: Literal["user", "assistant"]
    content: str


class Branch(TypedDict):
    """Where a collection sits in training: its env session, iteration and place in the batch."""

    session: str  # env session key, f"{thread}/{iteration}/{task_id}"
    iteration: int
    index: int  # position in the batch; fixes the order of experiences in the Upd-prompt


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
    usage: Usage  # the collection's usage counter: its tokens and cost (paper Table 4); its model_calls count
    # on from the run's count when its batch began (0 at inference; nodes.autoplan.batch)


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
    restart: bool  # the original starts this episode again (Context.after_look)
    restarts: int  # how many times it did
    experiences: Annotated[list[Experience], log()]


class Collected(TypedDict, total=False):
    """What a training collection hands back to the training loop."""

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
    """The Send payload of one reflection: the experience, and the counter its calls count on
    from (the run's count at the phase's start; nodes.autoplan.batch)."""

    experience: Experience
    usage: Usage


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
    # plan_calls[i]: the model calls of iteration i's plan update (more than one when a person
    # rejected a plan and the updater wrote it again); where the next iteration's calls start
    plan_calls: Annotated[list[int], record()]
    batch: list[BatchItem]  # the current iteration's task instances P_1..P_B
    scores: Annotated[list[IterationScore], record()]  # training success per iteration
    experiences: Annotated[list[Experience], log()]
    reflections: Annotated[list[Reflection], log()]
    usage: Annotated[Usage, add_usage]
