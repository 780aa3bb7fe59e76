"""How each AutoPlan model call decodes: sampling (paper 4.2) and length (the original code).

Sampling. Paper 4.2: "nucleus sampling with p=0.9 during optimization and greedy decoding
during evaluation". The acting calls (thought and free-form action) sample with
AutoPlanContext.train_temperature and train_top_p while training (1.0 and 0.9: the paper gives
no temperature; 1.0 is the original code's default) and with its temperature and top_p at
inference (greedy: 0.0, top_p unsent). The formalizer samples as the acting calls do, as the
original code calls it with the run's settings (the paper does not describe it;
Context.formalizer_sampling="greedy" decodes it greedily). The SIR reflection and the plan
update are always greedy (the original asks them with top_p 0).

Length. The paper says nothing of stop sequences or token limits, so they are the original
code's, per call kind (``LIMITS``): ALFWorld's free-form action stops at a newline within
50 tokens and every thought after the first at a newline within 100 (the opening thought
is free); the formalizer stops at a newline; HotpotQA's thought and action stop at a
newline (and so do every other env's: ``GENERIC_LIMITS``). Context.max_tokens (default 512,
the original's ``--max-token``) is the limit of every call the original leaves at that
setting: ALFWorld's opening thought, formalizer, reflection and plan update, and every
HotpotQA call. Stop sequences go to the model with
the request and are applied to the reply as well (nodes.runtime.llm.Caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import BaseMessage

from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import Caller

GREEDY = 0.0  # the reflection and the plan update, whatever the acting calls do

CallKind = Literal["opening_thought", "thought", "action", "formalize", "reflect", "update"]


@dataclass(frozen=True)
class Limits:
    """Where one kind of call stops: its stop sequences and token limit (None: AutoPlanContext.max_tokens)."""

    stop: tuple[str, ...] = ()
    max_tokens: int | None = None


LINE = ("\n",)
# Other envs decode as HotpotQA does: each thought, action and command is one line.
GENERIC_LIMITS: dict[CallKind, Limits] = {
    kind: Limits(LINE) for kind in ("opening_thought", "thought", "action", "formalize")
}
LIMITS: dict[str, dict[CallKind, Limits]] = {  # kinds not listed: Limits() (reflection, update)
    "alfworld": {
        "opening_thought": Limits(),
        "thought": Limits(LINE, 100),
        "action": Limits(LINE, 50),
        "formalize": Limits(LINE),
    },
    "hotpotqa": {
        "opening_thought": Limits(LINE),
        "thought": Limits(LINE),
        "action": Limits(LINE),
        "formalize": Limits(LINE),
    },
}


def limits(env: str, kind: CallKind) -> Limits:
    """The stop sequences and token limit of one kind of call in ``env``."""
    return LIMITS.get(env, GENERIC_LIMITS).get(kind, Limits())


def acting_sampling(context: AutoPlanContext, training: bool) -> tuple[float, float | None]:
    """Temperature and top_p of the acting calls: the training ones while training (nucleus
    sampling, paper 4.2), else the run's (greedy decoding by default)."""
    if training:
        return context.train_temperature, context.train_top_p
    return context.temperature, context.top_p


async def ask(llm: Caller, messages: Sequence[BaseMessage], env: str, kind: CallKind) -> str:
    """The reply text of one call of ``kind``, with its stop sequences and token limit."""
    limit = limits(env, kind)
    return (await llm(messages, stop=limit.stop, max_tokens=limit.max_tokens)).text
