"""AutoPlan's settings (paper 004): the graph's ``context_schema`` (inference and training).

Defaults are the paper's setting: greedy decoding at inference, nucleus sampling (top_p 0.9,
the original code's temperature 1.0) for the acting calls while training, 35 steps an
experience on ALFWorld and 10 on HotpotQA, a batch of 4 and 3 iterations, and HotpotQA answers
judged by the original's judge model (``judge``). Where the paper and the original code differ
the default is the code's, which produced the published numbers (the chat as it sends it, the
training pool in its listed order, the words of its prompts and of ALFWorld's refusals, its
formalizer's sampling); the paper's wording is the option.

The judge: the paper's HotpotQA accuracy is judged (Table 3b), and AutoPlan's code scores every
answer by asking GPT-4 (``gpt-4-0314``, temperature 0) whether it is equivalent to the gold
one (``HotpotQA.score`` in its tasks/hotpotqa.py). So on HotpotQA this method hands the env
``judge=openai:gpt-4-0314`` unless told otherwise (``--set judge=...``, or the env's own
``--env-option judge=...``, which wins); EM and F1 are scored beside it. The env's default
stays off for the other methods. A run whose judge cannot be reached fails (no key: before it
starts), never falls back to exact match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nodes.runtime.context import ContextError, TrainingContext, env, setting, temperature
from nodes.runtime.spec import parse_spec

ORIGINAL_JUDGE = "openai:gpt-4-0314"  # AutoPlan's tasks/hotpotqa.py asks this model, at temperature 0


def _judge_spec(value: str) -> None:
    """off, run (the run's own model) or a provider:model spec."""
    if value not in ("off", "run"):
        parse_spec(value)


def _reflect_spec(value: str) -> None:
    """code, run (the run's own model) or a provider:model spec."""
    if value not in ("code", "run"):
        parse_spec(value)


@dataclass(kw_only=True)
class AutoPlanContext(TrainingContext):
    """The shared settings plus AutoPlan's own."""

    temperature: float = temperature(0.0)
    env: str = env("alfworld")
    train_temperature: float = setting(
        1.0, "temperature of the acting calls while training (the original's default; the paper names none)", min=0.0
    )
    train_top_p: float = setting(
        0.9, "nucleus sampling of the acting calls while training (paper 4.2)", min=0.0, max=1.0
    )
    max_actions: dict[str, int] = setting(
        {"alfworld": 35, "hotpotqa": 10, "webshop": 35, "miniwob": 35, "webarena": 35},
        "steps of one experience, per env (paper 4.2: 35 on ALFWorld, 10 on HotpotQA); a mapping given "
        "changes the envs it names (--set max_actions='{\"hotpotqa\": 12}'), an integer sets every env's",
        min=1,
    )
    formalizer_sampling: Literal["acting", "greedy"] = setting(
        "acting",
        "how the formalizer decodes: with the acting calls' temperature and top_p (acting, the default: the "
        "original code's formalizer call takes the run's sampling) or greedily (greedy)",
    )
    plan: str = setting("", "the plan to follow (empty: ReAct zero-shot)")
    reflect_flaw_revision: bool = setting(
        True, "SIR reflection with flaw identification and revision (false: summary only)"
    )
    prompt_wording: Literal["original", "paper"] = setting(
        "original",
        "the words of ALFWorld's Flaw and Upd prompts: the original code's (original, the default) or the "
        "paper's Table 2 (paper); the other prompts are the code's either way",
    )
    seed: int = setting(0, "seed of the order batches walk the training pool in")
    shuffle_pool: bool = setting(
        False,
        "false: walk the training pool in its listed order (the original code, the default); true: in a "
        "seeded shuffle per epoch (the paper draws its instances 'randomly')",
    )
    few_shot: Literal["none", "react", "react_3prompts"] = setting(
        "none",
        "Table 3's ReAct K-shot baselines, ReAct's own examples in place of the plan (react: ALFWorld's from "
        "alfworld.json, the file AutoPlan's code reads; react_3prompts: from alfworld_3prompts.json, as ReAct's "
        "own runner picks them); see nodes.autoplan.few_shot",
    )
    transcript: Literal["paper", "original"] = setting(
        "original",
        "the chat as the original code sends it (original, the default: ALFWorld opens with its state "
        "summary and keeps the free-form action, the last observation is left out, ...) or as the paper "
        "writes H_t (paper); see nodes.autoplan.transcript",
    )

    feedback_wording: Literal["original", "table6"] = setting(
        "original",
        "the words of ALFWorld's refusals: the original code's sentences and order of checks (original, the "
        "default) or the paper's Table 6 (table6); the env option feedback_wording, which this sets, wins",
    )
    command_reading: Literal["original", "normalized"] = setting(
        "original",
        "how ALFWorld reads the formalizer's reply (and the ReAct baseline's action): as the original code "
        "(original, the default: lower-cased, 'put X in Y' or 'on' made 'put X in/on Y', nothing else) or "
        "normalized (a 'Formalized First Action:' label, quotes, a trailing full stop, spacing, into/onto "
        "read by the env's grammar); other envs' replies are always normalized",
    )
    after_look: Literal["restart", "continue"] = setting(
        "restart",
        "after a look, inventory or examine the game accepted on ALFWorld: start the episode again from the "
        "game's start with a fresh chat and a fresh step count (restart, the default: the original code's "
        "state tracker fails on these commands and its retry loop restarts the episode) or carry on "
        "(continue)",
    )
    max_restarts: int = setting(
        10,
        "restarts an ALFWorld episode may make (after_look=restart); the next one ends it as failed "
        "(the original code restarts without limit)",
        min=0,
    )
    reflect_model: str = setting(
        "code",
        "the model of training's reflection and plan update (summary, flaw, revision, update): code (the "
        "original code's: openai:gpt-4-0314 on ALFWorld whatever the acting model, the run's model elsewhere), "
        "run (the run's own model), or provider:model",
        check=_reflect_spec,
    )
    judge: str = setting(
        ORIGINAL_JUDGE,
        "the model that judges HotpotQA answers, as the original code scores them (off: exact match; run: the "
        "run's own model; or provider:model); EM and F1 are reported beside it. An env option judge= wins",
        check=_judge_spec,
    )

    def __post_init__(self) -> None:
        # what was given, from the CLI or Studio, over the defaults: every run holds the whole
        # mapping, so a value given at its default is the configuration that leaves it out
        default = type(self).default("max_actions")
        given: object = self.max_actions
        if isinstance(given, int) and not isinstance(given, bool):
            self.max_actions = dict.fromkeys(default, given)
        elif isinstance(given, dict):
            if unknown := sorted(set(given) - set(default)):
                raise ContextError(
                    f"max_actions names no env of AutoPlan's: {', '.join(map(str, unknown))} "
                    f"(its envs: {', '.join(default)})"
                )
            self.max_actions = {**default, **given}
        super().__post_init__()

    def env_settings(self) -> dict[str, Any]:
        """The paper setting's env options, under the ones given: HotpotQA gets this method's
        ``judge`` and its code's words for a search miss (``augmented_feedback``); ALFWorld the
        refusals' ``feedback_wording`` and ``react_think=False`` (the original code sends
        "think: ..." to the game, which refuses it)."""
        given = super().env_settings()
        defaults: dict[str, dict[str, Any]] = {
            "hotpotqa": {"judge": self.judge, "augmented_feedback": True},
            "alfworld": {"feedback_wording": self.feedback_wording, "react_think": False},
        }
        return {**defaults.get(self.env, {}), **given}

    def steps(self) -> int:
        """The step limit of one experience in this run's env."""
        return self.max_actions[self.env]

    def training_models(self) -> dict[str, str]:
        return {"--set reflect_model": self.reflection_model()}

    def reflection_model(self) -> str:
        """The spec the reflection and plan-update calls go to (``reflect_model``)."""
        if self.reflect_model == "code":
            return ORIGINAL_JUDGE if self.env == "alfworld" else self.model
        return self.model if self.reflect_model == "run" else self.reflect_model
