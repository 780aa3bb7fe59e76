"""The run-time configuration of every graph (LangGraph ``context_schema``).

One JSON-typed dataclass serves all four methods so that the CLI, the evaluation
harness and LangGraph Studio edit the same fields. Limits left at ``None`` take the
method's published default (for instance 15 transitions for LASER, 30 actions for
Devil's Advocate); see each graph module's ``DEFAULTS``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal


@dataclass(kw_only=True)
class Context:
    """What a run needs besides its task: the model, the env and the method's limits."""

    # The model: ``provider:model`` (``openai:gpt-4o-mini``; OpenAI-compatible servers
    # through OPENAI_BASE_URL) or ``scripted:<file.jsonl>`` for offline runs.
    model: str = "openai:gpt-4o-mini"
    temperature: float | None = None
    # Nucleus sampling; None leaves it to the method (AutoPlan samples its training
    # collection with 0.9, paper 004 section 4.2) or, where the method has none, unsent.
    top_p: float | None = None
    # The token limit of a model call; a method may give some calls their own (AutoPlan's
    # ALFWorld actions and later thoughts, as its original code: nodes.autoplan.decoding).
    max_tokens: int = 512
    # How the agent picks actions where the method uses functions (LASER): native tool
    # calls, or a JSON object in the reply for models without tool calling.
    tool_mode: Literal["tools", "json"] = "tools"

    # The environment and its options (passed to ``envs.make_env``).
    env: str = "webshop"
    env_options: dict[str, Any] = field(default_factory=dict)

    # Limits; None means the method's published default.
    max_actions: int | None = None
    max_trials: int | None = None
    max_episodes: int | None = None

    # LASER: buy the best examined item when the step budget runs out (paper's backup).
    backup: bool = True

    # Devil's Advocate: remedies per action, plan revision, backtracking switches.
    remedies: int | None = None
    # Observations longer than this many characters are summarised first (paper 3.2).
    observation_budget: int | None = None
    plan_revision: bool = True
    backtracking: bool = True

    # Structured Reflection: "staged" (the paper) or "iterative" (the baseline).
    planning: Literal["staged", "iterative"] = "staged"

    # AutoPlan: the plan to follow, batch size, iterations, SIR ablation, the seed of the
    # order batches walk the training pool in (shuffle_pool=False: the listed order, as
    # the original code).
    plan: str = ""
    batch_size: int = 4
    iterations: int = 3
    reflect_flaw_revision: bool = True
    seed: int = 0
    shuffle_pool: bool = True
    # AutoPlan: Table 3's ReAct K-shot baselines, ReAct's own examples in place of the plan
    # ("react": as ReAct's runners pick them; "react_autoplan": ALFWorld's from the file
    # AutoPlan's code reads). See nodes.autoplan.few_shot.
    few_shot: Literal["none", "react", "react_autoplan"] = "none"
    # AutoPlan: the chat as the paper writes H_t ("paper") or as the original code sends it
    # ("original": ALFWorld opens with its state summary and keeps the free-form action, the
    # last observation is left out, ...). See nodes.autoplan.transcript.
    transcript: Literal["paper", "original"] = "paper"

    def limit(self, name: str, default: int) -> int:
        """The configured limit ``name``, or the method's ``default`` when unset."""
        value = getattr(self, name)
        return default if value is None else int(value)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Context":
        """Build a Context from JSON, ignoring keys this version does not know."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
