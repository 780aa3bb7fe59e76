"""The run-time configuration of every graph (LangGraph ``context_schema``).

One JSON-typed dataclass serves all four methods so that the CLI, the evaluation
harness and LangGraph Studio edit the same fields. Limits left at ``None`` take the
method's published default (for instance 15 transitions for LASER, 30 actions for
Devil's Advocate); see each method's ``Method.defaults`` (``introspect graphs`` lists them).

Each field says what it accepts in one place, its ``metadata`` (the style of LangGraph's
react-agent template): ``description`` (shown by Studio and ``--help``), ``min`` /
``max`` (inclusive bounds of a number), ``choices`` (allowed values), ``check`` (a
function raising ValueError on a bad value), and ``results=False`` for settings that
cannot change a run's outcome (timeouts, retries), which the evaluation's settings
fingerprint leaves out. The annotation gives the type. ``__post_init__`` validates
every field against them, so the CLI, ``Context.from_dict`` and a graph receiving a
context from Studio (LangGraph builds ``Context(**context)``) refuse the same bad
values with the same one-line ``ContextError``. A new field needs only its annotation,
default and metadata.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any, Literal

from errors import UserError


class ContextError(UserError, ValueError):
    """A Context field with a value outside its type, range or choices."""


def _model_spec(value: str) -> None:
    from nodes.llm import (
        parse_spec,  # lazy: the model stack is not needed to describe a Context
    )

    parse_spec(value)


@dataclass(kw_only=True)
class Context:
    """What a run needs besides its task: the model, the env and the method's limits."""

    # The model and how it is asked.
    model: str = field(
        default="openai:gpt-4o-mini",
        metadata={
            "description": "provider:model (openai:gpt-4o-mini; OpenAI-compatible servers through "
            "OPENAI_BASE_URL) or scripted:<file.jsonl> for offline runs",
            "check": _model_spec,
        },
    )
    temperature: float | None = field(
        default=None, metadata={"description": "sampling temperature; null takes the method's default", "min": 0.0}
    )
    top_p: float | None = field(
        default=None,
        metadata={
            "description": "nucleus sampling; null leaves it to the method (AutoPlan samples its training "
            "collection with 0.9, paper 004 section 4.2) or, where the method has none, unsent",
            "min": 0.0,
            "max": 1.0,
        },
    )
    max_tokens: int = field(
        default=512,
        metadata={
            "description": "the token limit of a model call; a method may give some calls their own (AutoPlan's "
            "ALFWorld actions and later thoughts, as its original code: nodes.autoplan.decoding)",
            "min": 1,
        },
    )
    tool_mode: Literal["tools", "json"] = field(
        default="tools",
        metadata={
            "description": "how the agent picks actions where the method uses functions (LASER): native "
            "tool calls, or a JSON object in the reply for models without tool calling"
        },
    )
    timeout: float = field(
        default=120.0,
        metadata={
            "description": "seconds one model request may take before it counts as failed (and is retried)",
            "min": 0.001,
            "results": False,
        },
    )
    retries: int = field(
        default=4,
        metadata={
            "description": "retries of a model request after a 429, a 5xx, a timeout or a dropped "
            "connection (the OpenAI client's own, honouring Retry-After)",
            "min": 0,
            "max": 50,
            "results": False,
        },
    )

    confirm: bool = field(
        default=False,
        metadata={
            "description": "pause before an irreversible step for a person to approve, reject (with a reason the "
            "agent reads) or edit it: WebShop's Buy Now, a form submit or the answer on a web site, "
            "AutoPlan's plan update in training (a LangGraph interrupt; see nodes.confirm)"
        },
    )

    # The environment and its options (passed to ``envs.make_env``).
    env: str = field(default="webshop", metadata={"description": "the environment the method runs on"})
    env_options: dict[str, Any] = field(
        default_factory=dict, metadata={"description": "options of the environment (envs.make_env keyword arguments)"}
    )

    # Limits; None means the method's published default.
    max_actions: int | None = field(
        default=None,
        metadata={"description": "actions (LASER: transitions) per task; null takes the paper's", "min": 1},
    )
    max_trials: int | None = field(
        default=None,
        metadata={"description": "Structured Reflection trials per task; null takes the paper's (5)", "min": 1},
    )
    max_stage_actions: int | None = field(
        default=None,
        metadata={
            "description": "Structured Reflection: actions per stage (one plan followed on one screen); the paper "
            "states none, null takes the original code's (9: its max_step_per_view=10 stops a stage "
            "before a 10th action)",
            "min": 1,
        },
    )
    max_episodes: int | None = field(
        default=None,
        metadata={"description": "Devil's Advocate episodes per task; null takes the paper's (7)", "min": 1},
    )

    backup: bool = field(
        default=True,
        metadata={
            "description": "LASER: buy the best examined item when the step budget runs out (the paper's backup)"
        },
    )
    detail_text: Literal["full", "first_line"] = field(
        default="full",
        metadata={
            "description": "LASER: what a Description/Features/Reviews page adds to the item state: its full text "
            "(the paper, Table 6) or its first line (the original laser_agent.py)"
        },
    )

    # Devil's Advocate: remedies per action, plan revision, backtracking switches.
    remedies: int | None = field(
        default=None,
        metadata={
            "description": "Devil's Advocate: alternative actions per action (0 is Plan+Act); null takes the paper's",
            "min": 0,
        },
    )
    observation_budget: int | None = field(
        default=None,
        metadata={
            "description": "Devil's Advocate: observations longer than this many characters are summarised "
            "first (paper 3.2); null takes the default",
            "min": 1,
        },
    )
    plan_revision: bool = field(
        default=True, metadata={"description": "Devil's Advocate: revise the plan after a failed episode"}
    )
    backtracking: bool = field(
        default=True, metadata={"description": "Devil's Advocate: backtrack to pushed alternatives"}
    )
    site_instructions: str = field(
        default="",
        metadata={
            "description": "Devil's Advocate: the plan prompt's {INSTRUCTION} (specific instructions to solve "
            "tasks); the paper leaves its content open, so it is None unless given here"
        },
    )
    revision_notes: bool = field(
        default=False,
        metadata={
            "description": "Devil's Advocate, an addition the appendix lacks: plan revision also shows the notes "
            "of the failed trials"
        },
    )
    revision_review: bool = field(
        default=False,
        metadata={
            "description": "Devil's Advocate, an addition the appendix lacks: plan revision first asks what went wrong"
        },
    )
    remedy_hint: bool = field(
        default=False,
        metadata={
            "description": "Devil's Advocate, an addition the appendix lacks: the remedy question adds "
            "'(give one different action, in the same format)'"
        },
    )

    planning: Literal["staged", "iterative"] = field(
        default="staged",
        metadata={
            "description": "Structured Reflection: staged (the paper) or iterative (one action per call, the baseline)"
        },
    )
    reflection_screens: Literal["every", "first"] = field(
        default="every",
        metadata={
            "description": "Structured Reflection: the reflection prompt shows the screen before every action "
            "(Appendix E), or first: the trial's first screen only (section 7.5, for "
            "social-media-all, whose full trace is too long)"
        },
    )
    structured_memory: bool = field(
        default=True,
        metadata={
            "description": "Structured Reflection, Figure 7's ablation when false: no enforced action, no disabled "
            "ids, every reflection shown at every planning call (section 7.1)"
        },
    )
    action_constraint: bool = field(
        default=True,
        metadata={
            "description": "Structured Reflection, Figure 7's ablation when false: failed click ids stay on the "
            "screen (section 7.2)"
        },
    )
    budget_status: Literal["in_progress", "failed"] = field(
        default="in_progress",
        metadata={
            "description": "Structured Reflection: the status of a trial that runs out of actions (max_actions, "
            "max_stage_actions): in_progress, the paper's 'you took too many steps' (Appendix D), or "
            "failed, as the original code ends it"
        },
    )
    disable_clicks: Literal["failed", "when_b_clicks"] = field(
        default="failed",
        metadata={
            "description": "Structured Reflection: which failed click targets are disabled at A: failed, every one "
            "unless B is to be taken on that element (the paper, section 5.2), or when_b_clicks, only "
            "when B is a click on another element (the original code)"
        },
    )
    reflect_past_end: bool = field(
        default=False,
        metadata={
            "description": "Structured Reflection, an addition neither the paper nor its code has: after an "
            "incomplete trial the reflection may name the action after the last one (index=n+1)"
        },
    )

    # AutoPlan: the plan to follow, batch size, iterations, SIR ablation, sampling seed.
    plan: str = field(default="", metadata={"description": "AutoPlan: the plan to follow (empty: ReAct zero-shot)"})
    batch_size: int = field(default=4, metadata={"description": "AutoPlan: tasks per training batch", "min": 1})
    iterations: int = field(default=3, metadata={"description": "AutoPlan: training iterations", "min": 1})
    reflect_flaw_revision: bool = field(
        default=True,
        metadata={
            "description": "AutoPlan: SIR reflection with flaw identification and revision (false: summary only)"
        },
    )
    seed: int = field(
        default=0, metadata={"description": "AutoPlan: seed of the order batches walk the training pool in"}
    )
    shuffle_pool: bool = field(
        default=True,
        metadata={
            "description": "AutoPlan: walk the training pool in a seeded shuffle (false: the listed order, as the "
            "original code)"
        },
    )
    few_shot: Literal["none", "react", "react_autoplan"] = field(
        default="none",
        metadata={
            "description": "AutoPlan: Table 3's ReAct K-shot baselines, ReAct's own examples in place of the plan "
            "(react: as ReAct's runners pick them; react_autoplan: ALFWorld's from the file "
            "AutoPlan's code reads); see nodes.autoplan.few_shot"
        },
    )
    transcript: Literal["paper", "original"] = field(
        default="paper",
        metadata={
            "description": "AutoPlan: the chat as the paper writes H_t (paper) or as the original code sends it "
            "(original: ALFWorld opens with its state summary and keeps the free-form action, the "
            "last observation is left out, ...); see nodes.autoplan.transcript"
        },
    )

    def __post_init__(self) -> None:
        for spec in fields(self):
            setattr(self, spec.name, _validated(spec, _hints()[spec.name], getattr(self, spec.name)))

    def limit(self, name: str, default: int) -> int:
        """The configured limit ``name``, or the method's ``default`` when unset."""
        value = getattr(self, name)
        return default if value is None else int(value)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def result_settings(self) -> dict[str, Any]:
        """The fields that can change a run's outcome (all but ``results=False`` ones)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("results", True)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Context:
        """Build a validated Context from JSON, ignoring keys this version does not know."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


@functools.cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(Context)


_KINDS: dict[type, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "an object",
}


def _validated(spec: Field, hint: Any, value: Any) -> Any:
    """``value`` if it fits the field (a float field also takes an integer), else ContextError."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    nullable = type(None) in options
    (base,) = [o for o in options if o is not type(None)]
    if value is None and nullable:
        return None
    given, meta = value, spec.metadata
    choices = typing.get_args(base) if typing.get_origin(base) is Literal else meta.get("choices")
    kind = typing.get_origin(base) or base
    if choices is not None:
        ok = value in choices
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
        ok = meta.get("min", value) <= value <= meta.get("max", value)
    if ok and "check" in meta:
        try:
            meta["check"](value)
        except ValueError as exc:
            raise ContextError(f"{spec.name}: {exc}") from None
    if not ok:
        raise ContextError(f"{spec.name}={given!r} is not allowed: expected {_allowed(meta, kind, choices, nullable)}")
    return value


def _allowed(meta: Any, kind: Any, choices: Any, nullable: bool) -> str:
    if choices is not None:
        text = "one of " + ", ".join(str(c) for c in choices)
    else:
        text = _KINDS.get(kind, getattr(kind, "__name__", str(kind)))
        if "min" in meta and "max" in meta:
            text += f" from {meta['min']} to {meta['max']}"
        elif "min" in meta:
            text += f" >= {meta['min']}"
        elif "max" in meta:
            text += f" <= {meta['max']}"
    return text + (", or null (the method's default)" if nullable else "")
