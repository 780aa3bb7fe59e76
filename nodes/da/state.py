"""The graph state of Devil's Advocate.

Algorithm 1 keeps a stack of ``(S_t, a_t, tau)`` entries; here each entry is plain JSON
holding the env snapshot of S_t (what backtracking restores), the observation and the
model's view of it (what element mapping compares), the action and the subtask index.
Everything a node needs between steps is in this state, so a checkpointed run resumes
in the middle of an episode with its stack intact.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.channels import current, record
from nodes.runtime.state import RunState


class Screen(TypedDict):
    """One state S_t: how to get back to it, what the env showed, what the model saw."""

    snapshot: dict[str, Any]
    observation: str
    summary: str  # what the model sees instead when the observation exceeds the budget, else ""
    url: str


class StackEntry(TypedDict):
    """``(S_t, a_t, tau)`` of Algorithm 1; an empty action is the episode's root entry."""

    state: Screen
    action: str
    subtask: int  # index into the plan; -1 is the empty subtask of the root entry
    origin: Literal["root", "action", "remedy"]


class HistoryItem(TypedDict):
    """One element of H: the description of an executed action (G_describe)."""

    episode: int
    action: str
    text: str


class Backtrack(TypedDict, total=False):
    """A return to a saved state, and the element mapping it needed (for inspection)."""

    episode: int
    url: str
    action: str
    mapped_action: str


class DAState(RunState, total=False):
    """RunState plus the structures of Algorithm 1."""

    site: Annotated[dict[str, str], record()]  # websites, website_intro, instruction for the prompts
    initial: Annotated[Screen, record()]  # S_0, where every episode starts (eq. 10)
    current: Annotated[Screen, current()]  # S_t, the state the agent is in
    previous: Annotated[Screen, current()]  # the state before the last executed action (S_t of the align prompt)
    plan: list[str]  # P, one subtask per item
    plans: Annotated[list[list[str]], record()]  # every plan of the run: plans[0] and its revisions
    subtask: int  # index of tau in the plan; -1 = none, len(plan) = plan exhausted
    stack: Annotated[list[StackEntry], record()]
    # the entry taken by the last pop; {} when there was none (the stack was empty, or the entry was dropped)
    popped: Annotated[StackEntry, current()]
    proposal: list[str]  # a_t followed by its remedies, waiting to be pushed
    aligned: bool  # C_tau
    task_done: bool  # C_T
    history: Annotated[list[HistoryItem], record()]
    notes: Annotated[list[str], record()]
    episode: int
    episode_actions: Annotated[list[list[str]], record()]  # executed actions, one list per episode
    backtracks: Annotated[list[Backtrack], record()]
    answer: str
