"""The run-time configuration of every graph (LangGraph ``context_schema``).

One JSON-typed dataclass serves all four methods so that the CLI, the evaluation
harness and LangGraph Studio edit the same fields. Limits left at ``None`` take the
method's published default (for instance 15 transitions for LASER, 30 actions for
Devil's Advocate); see each graph module's ``DEFAULTS``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, get_args, get_origin, get_type_hints


class ContextError(ValueError):
    """A Context field holds a value it cannot take."""


@dataclass(kw_only=True)
class Context:
    """What a run needs besides its task: the model, the env and the method's limits."""

    # The model: ``provider:model`` (``openai:gpt-4o-mini``; OpenAI-compatible servers
    # through OPENAI_BASE_URL) or ``scripted:<file.jsonl>`` for offline runs.
    model: str = "openai:gpt-4o-mini"
    temperature: float | None = None
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
    # The reflection prompt shows the screen before every action (Appendix E), or "first": the
    # trial's first screen only (Sec. 7.5, for social-media-all, whose full trace is too long).
    reflection_screens: Literal["every", "first"] = "every"
    # Figure 7's ablations (the defaults are the paper's full method): without structured
    # memory (no enforced B, no disabled ids, every reflection shown at every planning call,
    # Sec. 7.1), and without the action constraint (failed click ids stay on the screen, 7.2).
    structured_memory: bool = True
    action_constraint: bool = True

    # AutoPlan: the plan to follow, batch size, iterations, SIR ablation, sampling seed.
    plan: str = ""
    batch_size: int = 4
    iterations: int = 3
    reflect_flaw_revision: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        """Switches and choices are checked here, so a bad ``--set`` or Studio value is a
        one-line error before anything runs (``"false"`` is not a boolean)."""
        for f in fields(self):
            value, kind = getattr(self, f.name), _HINTS[f.name]
            if kind is bool and not isinstance(value, bool):
                raise ContextError(f"{f.name} must be true or false, not {value!r}")
            if get_origin(kind) is Literal and value not in get_args(kind):
                raise ContextError(f"{f.name} must be one of {', '.join(map(str, get_args(kind)))}, not {value!r}")

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


_HINTS = get_type_hints(Context)
