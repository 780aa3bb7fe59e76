"""Model usage accounting: calls, tokens and cost, summed in graph state.

Usage is a TypedDict so it checkpoints as plain JSON; a model-calling node's update
carries the usage of the calls it made (``nodes.runtime.node.model_node`` adds it) and the
``add_usage`` reducer sums it, which also works for the parallel branches of AutoPlan's
batch collection.

Cost comes from genai-prices, a maintained database of providers' list prices, looked up
by the spec's provider and model. A model it does not know (a local server's model, a
scripted model, a provider it does not cover) is *unpriced*: its cost is None, and so is
every total it is part of, which reports show as "unpriced", never as $0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12


class Usage(TypedDict):
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: some call's model has no known price
    retries: int  # requests sent again after a transient failure (429, 5xx, timeout)


# langchain provider names (the spec's prefix) -> genai-prices provider ids; other providers
# (ollama, huggingface, scripted, ...) have no list price
PROVIDERS: dict[str, str] = {
    "openai": "openai",
    "azure_openai": "azure",
    "anthropic": "anthropic",
    "google_genai": "google",
    "google_vertexai": "google",
    "mistralai": "mistral",
    "groq": "groq",
    "deepseek": "deepseek",
    "xai": "x-ai",
    "together": "together",
    "fireworks": "fireworks",
    "cohere": "cohere",
    "perplexity": "perplexity",
    "bedrock": "aws",
    "bedrock_converse": "aws",
}


class Meter(Protocol):
    """Who watches spending call by call (a study's budgets, introspect.study.budget): asked
    before every model call, which it may refuse by raising, and told each call's usage."""

    def before_call(self, task: str | None) -> None: ...

    def after_call(self, task: str | None, usage: Usage) -> None: ...


# The meter of the calls made in this context (None: nobody is counting); set per evaluation.
METER: ContextVar[Meter | None] = ContextVar("introspect_meter", default=None)

_PRICES: Any = None  # the genai_prices module once its price data is loaded


def _price_database() -> Any:
    """genai_prices with its price data read (blocking, once: see ``load_prices``)."""
    global _PRICES
    if _PRICES is None:
        import genai_prices

        genai_prices.data_snapshot.get_snapshot()
        _PRICES = genai_prices
    return _PRICES


async def load_prices(spec: str) -> None:
    """Load the price database in a worker thread the first time a priced provider's model is
    used (it imports and reads data), so that pricing a call never blocks the event loop."""
    if _PRICES is None and spec.partition(":")[0].strip() in PROVIDERS:
        await asyncio.to_thread(_price_database)


def empty_usage() -> Usage:
    return Usage(model_calls=0, input_tokens=0, output_tokens=0, cost_usd=0.0, retries=0)


def add_usage(left: Usage | None, right: Usage | None) -> Usage:
    """Reducer: the sum of two usage records (either may be missing); an unpriced part makes
    the cost unpriced (None)."""
    total = empty_usage()
    for part in (left, right):
        if part:
            total["model_calls"] += int(part.get("model_calls", 0))
            total["input_tokens"] += int(part.get("input_tokens", 0))
            total["output_tokens"] += int(part.get("output_tokens", 0))
            total["cost_usd"] = add_costs(total["cost_usd"], part.get("cost_usd", 0.0))
            total["retries"] += int(part.get("retries", 0))
    return total


def add_costs(left: float | None, right: float | None) -> float | None:
    """The sum of two costs in USD, None when either is unpriced."""
    return None if left is None or right is None else round(float(left) + float(right), 8)


def sum_costs(costs: Iterable[float | None]) -> float | None:
    """The sum of costs in USD (0.0 for none), None when any is unpriced."""
    total: float | None = 0.0
    for part in costs:
        total = add_costs(total, part)
    return total


def _priced(spec: str, input_tokens: int, output_tokens: int) -> Any:
    """genai-prices' calculation for ``spec`` (its price and the model it matched); None when unpriced."""
    provider, _, model = spec.partition(":")
    provider_id = PROVIDERS.get(provider.strip())
    if provider_id is None:
        return None
    prices = _price_database()
    try:
        return prices.calc_price(
            prices.Usage(input_tokens=input_tokens, output_tokens=output_tokens), model.strip(), provider_id=provider_id
        )
    except LookupError:
        return None


def cost(spec: str, input_tokens: int, output_tokens: int) -> float | None:
    """The list-price cost in USD of one call to the model ``spec``; None when unpriced."""
    found = _priced(spec, input_tokens, output_tokens)
    return None if found is None else round(float(found.total_price), 8)


def context_window(spec: str) -> int | None:
    """The most tokens one call to ``spec`` can hold, input and output (the price table's
    context window); None when the table does not say."""
    found = _priced(spec, 0, 0)
    window = getattr(getattr(found, "model", None), "context_window", None)
    return int(window) if window else None


def usage_of_call(spec: str, usage_metadata: Mapping[str, Any] | None, retries: int = 0) -> Usage:
    """The usage of one model call from a message's ``usage_metadata`` (and the retries
    its request needed)."""
    meta = usage_metadata or {}
    tokens_in = int(meta.get("input_tokens", 0))
    tokens_out = int(meta.get("output_tokens", 0))
    return Usage(
        model_calls=1,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=cost(spec, tokens_in, tokens_out),
        retries=retries,
    )


def dollars(value: float | None) -> str:
    """A cost as reports show it: ``$0.0123``, or ``unpriced``."""
    return "unpriced" if value is None else f"${value:.4f}"
