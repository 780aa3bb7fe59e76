"""How each AutoPlan model call decodes: sampling (paper 4.2) and length (the original code).

Sampling. Paper 4.2: "nucleus sampling with p=0.9 during optimization and greedy decoding
during evaluation". The acting calls (thought and free-form action) sample with top_p 0.9
and temperature 1.0 while training (the paper gives no temperature; 1.0 is the original
code's default) and decode greedily at inference; Context.temperature and Context.top_p,
when set, replace these for the acting calls only. The formalizer, the SIR reflection and
the plan update are always greedy (the original asks reflection and update with top_p 0;
its formalizer samples with the acting settings, which the paper does not describe).

Length. The paper says nothing of stop sequences or token limits, so they are the original
code's, per call kind (``LIMITS``): ALFWorld's free-form action stops at a newline within
50 tokens and every thought after the first at a newline within 100 (the opening thought
is free); the formalizer stops at a newline; HotpotQA's thought and action stop at a
newline (and so do every other env's: ``GENERIC_LIMITS``). Context.max_tokens (default 512,
the original's ``--max-token``) is the limit of every call the original leaves at that
setting: ALFWorld's opening thought, formalizer, reflection and plan update, and every
HotpotQA call. Stop sequences go to the model with
the request and are applied to the reply as well (nodes.llm.Caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from nodes.context import Context
from nodes.llm import Caller

DEFAULTS: dict[str, Any] = {
    "max_actions": {"alfworld": 35, "hotpotqa": 10},  # steps of one experience, per env (paper 4.2)
    "temperature": 0.0,  # greedy: acting calls at inference; the formalizer, reflection and plan update always
    "train_temperature": 1.0,  # acting calls while training (the original's default; the paper names none)
    "train_top_p": 0.9,  # acting calls while training: nucleus sampling (paper 4.2)
}
GREEDY = DEFAULTS["temperature"]

CallKind = Literal["opening_thought", "thought", "action", "formalize", "reflect", "update"]


@dataclass(frozen=True)
class Limits:
    """Where one kind of call stops: its stop sequences and token limit (None: Context.max_tokens)."""

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


def acting_sampling(context: Context, training: bool) -> tuple[float, float | None]:
    """Temperature and top_p of the acting calls: Context's when set, else nucleus sampling
    while training and greedy decoding at inference (paper 4.2)."""
    temperature = (
        context.temperature
        if context.temperature is not None
        else (DEFAULTS["train_temperature"] if training else GREEDY)
    )
    top_p = context.top_p if context.top_p is not None else (DEFAULTS["train_top_p"] if training else None)
    return temperature, top_p


async def ask(llm: Caller, messages: Sequence[BaseMessage], env: str, kind: CallKind) -> str:
    """The reply text of one call of ``kind``, with its stop sequences and token limit."""
    limit = limits(env, kind)
    return (await llm(messages, stop=limit.stop, max_tokens=limit.max_tokens)).text
