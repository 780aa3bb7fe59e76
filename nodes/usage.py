"""Model usage accounting: calls, tokens and cost, summed in graph state.

Usage is a TypedDict so it checkpoints as plain JSON; nodes return the usage of the
calls they made and the ``add_usage`` reducer sums it, which also works for the
parallel branches of AutoPlan's batch collection.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Usage(TypedDict):
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    retries: int  # requests sent again after a transient failure (429, 5xx, timeout)


# USD per million tokens (input, output), list prices of the providers' public pages.
# A model missing here costs 0.0 and is reported as unpriced by ``priced``.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}


def empty_usage() -> Usage:
    return Usage(model_calls=0, input_tokens=0, output_tokens=0, cost_usd=0.0, retries=0)


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """Reducer: the sum of two usage records (either may be missing)."""
    total = empty_usage()
    for part in (left, right):
        if part:
            total["model_calls"] += int(part.get("model_calls", 0))
            total["input_tokens"] += int(part.get("input_tokens", 0))
            total["output_tokens"] += int(part.get("output_tokens", 0))
            total["cost_usd"] = round(total["cost_usd"] + float(part.get("cost_usd", 0.0)), 8)
            total["retries"] += int(part.get("retries", 0))
    return total


def model_name(spec: str) -> str:
    """``openai:gpt-4o-mini`` -> ``gpt-4o-mini``."""
    return spec.split(":", 1)[-1]


def priced(spec: str) -> bool:
    return model_name(spec) in PRICES


def cost(spec: str, input_tokens: int, output_tokens: int) -> float:
    """The list-price cost in USD of one call to the model ``spec``."""
    price_in, price_out = PRICES.get(model_name(spec), (0.0, 0.0))
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


def usage_of_call(spec: str, usage_metadata: dict[str, Any] | None, retries: int = 0) -> Usage:
    """The usage of one model call from a message's ``usage_metadata`` (and the retries
    its request needed)."""
    meta = usage_metadata or {}
    tokens_in = int(meta.get("input_tokens", 0))
    tokens_out = int(meta.get("output_tokens", 0))
    return Usage(
        model_calls=1,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=round(cost(spec, tokens_in, tokens_out), 8),
        retries=retries,
    )
