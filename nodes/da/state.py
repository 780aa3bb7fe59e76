"""The graph state of Devil's Advocate and the settings a run takes from its Context.

Algorithm 1 keeps a stack of ``(S_t, a_t, tau)`` entries; here each entry is plain JSON
holding the env snapshot of S_t (what backtracking restores), the observation and the
model's view of it (what element mapping compares), the action and the subtask index.
Everything a node needs between steps is in this state, so a checkpointed run resumes
in the middle of an episode with its stack intact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

from nodes.channels import current, record
from nodes.state import RunState

# The paper's settings (section 4.1): 30 actions per task, 7 episodes, temperature 1.0
# (and max_tokens 512, Context's default); R = 2 remedies as in its picture-frame example
# (three candidate clicks).
DEFAULTS: dict[str, Any] = {
    "max_actions": 30,
    "max_episodes": 7,
    "remedies": 2,
    "temperature": 1.0,
    # Characters of one screen shown to the model before it is summarised (paper 3.2).
    # 16,000 characters are about 4,000 tokens, half of the 8k context the paper used.
    "observation_budget": 16_000,
    # How often a malformed reply is answered with feedback before the node gives up.
    "reasks": 2,
}


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


@dataclass(frozen=True)
class Settings:
    """The limits and switches of one run, from the Context or the paper's defaults."""

    max_actions: int
    max_episodes: int
    remedies: int
    backtracking: bool
    plan_revision: bool
    observation_budget: int
    reasks: int
    # Additions the paper's appendix lacks, off unless the Context turns them on.
    revision_notes: bool
    revision_review: bool
    remedy_hint: bool
    site_instructions: str

    @classmethod
    def of(cls, context: Any) -> Settings:
        backtracking = bool(context.backtracking)
        # Without backtracking no saved state is ever revisited, so remedies would never run.
        remedies = context.limit("remedies", DEFAULTS["remedies"]) if backtracking else 0
        return cls(
            max_actions=context.limit("max_actions", DEFAULTS["max_actions"]),
            max_episodes=context.limit("max_episodes", DEFAULTS["max_episodes"]),
            remedies=max(0, remedies),
            backtracking=backtracking,
            plan_revision=bool(context.plan_revision),
            observation_budget=context.limit("observation_budget", DEFAULTS["observation_budget"]),
            reasks=DEFAULTS["reasks"],
            revision_notes=bool(context.revision_notes),
            revision_review=bool(context.revision_review),
            remedy_hint=bool(context.remedy_hint),
            site_instructions=str(context.site_instructions or ""),
        )
