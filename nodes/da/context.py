"""Devil's Advocate's settings (paper 000/001, section 4.1): the graph's ``context_schema``.

Defaults are the paper's setting: 30 actions per task, 7 episodes, temperature 1.0 (and the
shared max_tokens 512), R = 2 remedies as in its picture-frame example (three candidate
clicks), plan revision and backtracking on; the additions the appendix lacks are off.
"""

from __future__ import annotations

from dataclasses import dataclass

from nodes.runtime.context import Context, env, setting, temperature


@dataclass(kw_only=True)
class DAContext(Context):
    """The shared settings plus Devil's Advocate's own."""

    temperature: float = temperature(1.0)
    env: str = env("webarena")
    max_actions: int = setting(30, "actions per task (paper: 30)", min=1)
    max_episodes: int = setting(7, "episodes per task (paper: 7)", min=1)
    remedies: int = setting(2, "alternative actions per action, R (0 is the Plan+Act baseline)", min=0)
    observation_budget: int = setting(
        16_000,
        "observations longer than this many characters are summarised first (paper 3.2); 16,000 characters "
        "are about 4,000 tokens, half of the 8k context the paper used",
        min=1,
    )
    reasks: int = setting(
        0,
        "how often a malformed reply is answered with feedback before the node takes the paper's conservative "
        "branch (no action, not aligned, not complete); the paper re-asks never (0), 2 is this project's",
        min=0,
    )
    distinct_remedies: bool = setting(
        False,
        "a remedy that repeats an action already proposed is sent back as feedback instead of being pushed "
        "(not in the paper, which pushes what the model answers; a repeat only retries a known step)",
    )
    plan_revision: bool = setting(True, "revise the plan after a failed episode")
    backtracking: bool = setting(True, "backtrack to pushed alternatives (false: remedies are never tried)")
    alignment: bool = setting(
        True,
        "judge each executed action against its subtask (G_align); false, an ablation the paper does not run "
        "(introspect ablate): an action the env accepted is taken as aligned, without a call",
    )
    site_instructions: str = setting(
        "",
        "the plan prompt's {INSTRUCTION} (specific instructions to solve tasks); the paper leaves its "
        "content open, so it is None unless given here",
    )
    revision_notes: bool = setting(
        False, "an addition the appendix lacks: plan revision also shows the notes of the failed trials"
    )
    revision_review: bool = setting(False, "an addition the appendix lacks: plan revision first asks what went wrong")
    remedy_hint: bool = setting(
        False,
        "an addition the appendix lacks: the remedy question adds '(give one different action, in the same format)'",
    )

    @property
    def remedies_per_action(self) -> int:
        """R as the run uses it: without backtracking no saved state is revisited, so no remedy runs."""
        return self.remedies if self.backtracking else 0
