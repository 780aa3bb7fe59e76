"""The model factory and the one way nodes call a model.

Specs: ``openai:<model>`` builds langchain-openai's ``ChatOpenAI`` from OPENAI_API_KEY and
OPENAI_BASE_URL (any OpenAI-compatible server: vLLM, Ollama, llama.cpp); any other
``provider:model`` goes through langchain's ``init_chat_model``; ``scripted:<file.jsonl>``
replays a script (nodes.scripted). Nodes never hold a client: they use ``Caller``, which
picks the model from the run's Context, retries transient failures with backoff and
accounts usage so that it lands in graph state.
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from typing import Any, Sequence

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from nodes.scripted import ScriptedChatModel, cut_at_stop
from nodes.usage import Usage, add_usage, empty_usage, usage_of_call


class ModelConfigError(ValueError):
    """A malformed model spec, a missing key or a missing provider package."""


class ModelCallError(RuntimeError):
    """A model call failed for good (non-transient, or retries exhausted)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter for 429s, 5xx and timeouts."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0


RETRY = RetryPolicy()
JUDGE_MAX_TOKENS = 768  # WebArena's evaluator asks its judge with temperature 0 and 768 tokens


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model``; raise ModelConfigError on anything else."""
    provider, sep, name = spec.partition(":")
    if not sep or not provider.strip() or not name.strip():
        raise ModelConfigError(
            f"malformed model spec {spec!r}: use provider:model (e.g. openai:gpt-4o-mini) "
            "or scripted:<file.jsonl>"
        )
    return provider.strip(), name.strip()


def check_credentials(spec: str) -> None:
    """Fail early, in one line, when an OpenAI model has no key and no local server."""
    provider, _ = parse_spec(spec)
    if provider == "openai" and not (
        os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")
    ):
        raise ModelConfigError(
            "no OpenAI key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server); "
            "`introspect demo` runs offline without one"
        )


def build_model(spec: str, temperature: float | None, max_tokens: int, top_p: float | None = None) -> BaseChatModel:
    """A chat model for ``spec``; see the module docstring for the spec forms. ``top_p``
    (nucleus sampling) is sent only when set, as ``temperature`` is."""
    provider, name = parse_spec(spec)
    if provider == "scripted":
        return ScriptedChatModel.from_file(name)
    check_credentials(spec)
    options: dict[str, Any] = {"max_tokens": max_tokens}
    if temperature is not None:
        options["temperature"] = temperature
    if top_p is not None:
        options["top_p"] = top_p
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=name,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            base_url=os.environ.get("OPENAI_BASE_URL") or None,
            max_retries=0,  # Caller retries, for every provider alike
            timeout=float(os.environ.get("INTROSPECT_MODEL_TIMEOUT", "120")),
            **options,
        )
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name, model_provider=provider, **options)
    except ImportError as exc:
        raise ModelConfigError(f"provider {provider!r} needs its package: {exc}") from None
    except ValueError as exc:
        raise ModelConfigError(f"unsupported model spec {spec!r}: {exc}") from None


_MODELS: dict[tuple[object, ...], BaseChatModel] = {}


def model_for(spec: str, temperature: float | None, max_tokens: int, top_p: float | None = None) -> BaseChatModel:
    """The process-wide model for these settings (clients are reused across runs); keyed by
    (spec, temperature, max_tokens), with top_p appended only when it is set."""
    key: tuple[object, ...] = (spec, temperature, max_tokens) + (() if top_p is None else (top_p,))
    if key not in _MODELS:
        _MODELS[key] = build_model(spec, temperature, max_tokens, top_p)
    return _MODELS[key]


def clear_models() -> None:
    """Forget cached models (tests; or after changing OPENAI_* variables)."""
    _MODELS.clear()


def is_transient(exc: BaseException) -> bool:
    """429, 5xx, timeouts and dropped connections are worth another try."""
    import httpx
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, httpx.TimeoutException,
                        httpx.TransportError, asyncio.TimeoutError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class Caller:
    """Calls the run's model from inside one node and keeps that node's usage.

    ``position`` starts at the model-call count in state, which is how a scripted
    model knows which reply comes next, also after a resume.
    """

    def __init__(
        self,
        spec: str,
        *,
        temperature: float | None,
        max_tokens: int,
        calls_before: int,
        top_p: float | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.spec = spec
        self.temperature, self.max_tokens, self.top_p = temperature, max_tokens, top_p
        self.model = model_for(spec, temperature, max_tokens, top_p)
        self.position = calls_before
        self.usage: Usage = empty_usage()
        self.policy = policy or RETRY

    async def __call__(
        self,
        messages: Sequence[BaseMessage],
        *,
        tools: Sequence[Any] | None = None,
        tool_choice: str | None = None,
        stop: Sequence[str] = (),
        max_tokens: int | None = None,
    ) -> AIMessage:
        """One call. ``stop``: stop sequences, sent with the request (``ainvoke(stop=...)``,
        which every LangChain chat model takes) and applied to the reply too, so a server
        that ignores them still yields the text before the first one. ``max_tokens``: this
        call's own limit instead of the caller's, through a client built with that limit
        (every provider takes ``max_tokens`` at construction, not all per request)."""
        model = self.model
        if max_tokens is not None and max_tokens != self.max_tokens and not isinstance(model, ScriptedChatModel):
            model = model_for(self.spec, self.temperature, max_tokens, self.top_p)
        limit = {"max_tokens": max_tokens} if max_tokens is not None else {}
        return await self._call(model, self.spec, messages, tools, tool_choice, stop, limit)

    def judge(self, spec: str | None = None) -> "CallerJudge":
        """A judge for an env's evaluator: ``spec``'s model (default this run's), asked
        greedily, its calls counted in this caller's position and usage."""
        return CallerJudge(self, spec or self.spec)

    async def _call(
        self,
        model: BaseChatModel,
        spec: str,
        messages: Sequence[BaseMessage],
        tools: Sequence[Any] | None = None,
        tool_choice: str | None = None,
        stop: Sequence[str] = (),
        limit: dict[str, int] | None = None,
    ) -> AIMessage:
        runnable: Any = model
        if tools:
            runnable = runnable.bind_tools(list(tools), **({"tool_choice": tool_choice} if tool_choice else {}))
        if isinstance(model, ScriptedChatModel):  # a script has no limit to build with: it records it
            runnable = runnable.bind(script_position=self.position, **(limit or {}))
        if stop:
            runnable = runnable.bind(stop=list(stop))
        message = before_stop(await self._with_retries(runnable, list(messages)), stop)
        self.position += 1
        self.usage = add_usage(self.usage, usage_of_call(spec, message.usage_metadata))
        return message

    async def _with_retries(self, runnable: Any, messages: list[BaseMessage]) -> AIMessage:
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return await runnable.ainvoke(messages)
            except Exception as exc:  # noqa: BLE001 - classified right below
                if not is_transient(exc) or attempt == self.policy.attempts:
                    raise ModelCallError(f"model call failed: {type(exc).__name__}: {exc}") from exc
                delay = _retry_after(exc) or self.policy.base_delay * 2 ** (attempt - 1)
                await asyncio.sleep(min(self.policy.max_delay, delay) * (0.5 + random.random() / 2))
        raise AssertionError("unreachable")


@dataclass
class CallerJudge:
    """``envs.base.Judge`` on top of a Caller; remembers whether it was asked, so that
    results can say which model judged."""

    caller: Caller
    spec: str
    calls: int = 0

    async def __call__(self, prompt: str, *, system: str = "") -> str:
        model = model_for(self.spec, 0.0, JUDGE_MAX_TOKENS)
        messages: list[BaseMessage] = [SystemMessage(system)] if system else []
        reply = await self.caller._call(model, self.spec, [*messages, HumanMessage(prompt)])
        self.calls += 1
        return reply.text


def before_stop(message: AIMessage, stop: Sequence[str]) -> AIMessage:
    """``message`` with its text cut where the first stop sequence starts (as the API does)."""
    content = message.content
    if not stop or not isinstance(content, str) or cut_at_stop(content, stop) == content:
        return message
    return message.model_copy(update={"content": cut_at_stop(content, stop)})


def caller_for(context: Any, state: dict[str, Any], temperature: float | None = None) -> Caller:
    """A Caller for a node: the model settings from ``context``, the position from ``state``.

    ``temperature`` is the method's default, used when the Context leaves it unset;
    Context.top_p (nucleus sampling) is passed on when set.
    """
    calls = int((state.get("usage") or {}).get("model_calls", 0))
    temp = context.temperature if context.temperature is not None else temperature
    return Caller(context.model, temperature=temp, max_tokens=context.max_tokens, calls_before=calls,
                  top_p=context.top_p)
