"""The model factory and the one way nodes call a model.

Specs: ``openai:<model>`` builds langchain-openai's ``ChatOpenAI`` from OPENAI_API_KEY and
OPENAI_BASE_URL (any OpenAI-compatible server: vLLM, Ollama, llama.cpp); any other
``provider:model`` goes through langchain's ``init_chat_model``; ``local`` (the embedded
SmolLM2-135M-Instruct) and ``gguf:<file.gguf>`` are ``ChatOpenAI`` on llama.cpp's server, which
nodes.runtime.local starts and stops; ``scripted:<file.jsonl>``
replays a script (nodes.runtime.scripted), ``replay:<file.jsonl>`` a recording, checking every
request against it (nodes.runtime.recording; ``--record FILE`` writes one through the Caller).
Nodes never hold a client: they use ``Caller``, which
picks the model from the run's Context and accounts usage, which ``nodes.runtime.node.model_node``
merges into the node's update so that it lands in graph state.

Transient failures (429, 5xx, timeouts, dropped connections) are retried by the OpenAI
client itself (``max_retries``; it honours Retry-After and backs off with jitter). Its
attempts are counted by hooks on the HTTP client it is given: the client marks every
request with ``x-stainless-retry-count``, and the hooks credit them to the model call
under way (a context variable the Caller sets), which reports them in its usage and,
live, to ``RETRY_NOTICE``'s listener ("retrying after 429, attempt 2/5"). The same hooks
tell the task's ``PACING`` how each attempt ended (answered, refused with a 429, timed out),
and every call waits for its turn from it: that is how ``introspect eval --concurrency auto``
paces its tasks (introspect.pacing).
Other providers keep their own client's retry policy, uncounted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import SecretStr

from nodes.runtime import local
from nodes.runtime.calls import ModelCall, Verdict, redacted
from nodes.runtime.context import Context
from nodes.runtime.journal import Journal, journal_here, outlasting
from nodes.runtime.model_errors import ModelCallError, ModelConfigError
from nodes.runtime.recording import ReplayChatModel, call_record, record_call, reply_of, request_record, same_request
from nodes.runtime.scripted import ScriptedChatModel, cut_at_stop
from nodes.runtime.spec import parse_spec
from nodes.runtime.usage import METER, Usage, add_usage, empty_usage, load_prices, usage_of_call
from nodes.runtime.verdicts import Place

TIMEOUT = 120.0  # seconds per request: Context.timeout's default
RETRIES = 4  # Context.retries' default: five attempts in all
JUDGE_MAX_TOKENS = 768  # WebArena's evaluator asks its judge with temperature 0 and 768 tokens

# Who hears about retries as they happen (the CLI prints them); set per task.
RETRY_NOTICE: ContextVar[Callable[[str], None] | None] = ContextVar("introspect_retry_notice", default=None)


class Pacing(Protocol):
    """Who paces a task's model calls (introspect.pacing: ``--concurrency auto``)."""

    def heard(self, signal: str) -> None:
        """How one HTTP attempt ended: "ok" (answered), "429" (refused), "timeout" (timed out
        or dropped: no response before the client sent it again)."""

    def calling(self) -> AbstractAsyncContextManager[object]:
        """Held while a model call (its retries included) is under way."""
        ...


PACING: ContextVar[Pacing | None] = ContextVar("introspect_pacing", default=None)  # set per task


@dataclass
class Attempts:
    """The HTTP requests of one model call, as the client's hooks saw them."""

    limit: int  # attempts allowed: retries + 1
    retries: int = 0
    failure: str = ""  # how the latest attempt ended, for the notice of the next one
    answered: bool = True  # the latest attempt got a response


_ATTEMPTS: ContextVar[Attempts | None] = ContextVar("introspect_attempts", default=None)


async def _on_request(request: Any) -> None:
    attempts = _ATTEMPTS.get()
    if attempts is None:
        return
    retry = int(request.headers.get("x-stainless-retry-count") or 0)
    if retry:
        attempts.retries = retry
        if not attempts.answered:
            _pressure("timeout")
        notice = RETRY_NOTICE.get()
        if notice is not None:
            notice(f"retrying after {attempts.failure}, attempt {retry + 1}/{attempts.limit}")
    attempts.failure = "a timeout or dropped connection"  # unless a response arrives
    attempts.answered = False


async def _on_response(response: Any) -> None:
    attempts = _ATTEMPTS.get()
    if attempts is not None:
        attempts.failure = str(response.status_code)
        attempts.answered = True
    if response.status_code == 429:
        _pressure("429")
    elif response.status_code < 400:
        _pressure("ok")


def _pressure(signal: str) -> None:
    pacing = PACING.get()
    if pacing is not None:
        pacing.heard(signal)


def counted_http_client(transport: Any = None) -> Any:
    """An async HTTP client for the OpenAI SDK (its defaults) whose hooks count attempts;
    ``transport``: where requests go (the embedded model's slots), else the network."""
    import openai

    hooks: dict[str, list[Callable[..., Any]]] = {"request": [_on_request], "response": [_on_response]}
    if transport is None:
        return openai.DefaultAsyncHttpxClient(event_hooks=hooks)
    return openai.DefaultAsyncHttpxClient(event_hooks=hooks, transport=transport)


def check_credentials(spec: str) -> None:
    """Fail early, in one line, when an OpenAI model has no key and no local server."""
    provider, _ = parse_spec(spec)
    if provider == "openai" and not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        raise ModelConfigError(
            "no OpenAI key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server); "
            "`introspect demo` runs offline without one"
        )


def build_model(
    spec: str,
    temperature: float | None,
    max_tokens: int,
    *,
    top_p: float | None = None,
    timeout: float = TIMEOUT,
    retries: int = RETRIES,
) -> BaseChatModel:
    """A chat model for ``spec``; see the module docstring for the spec forms. ``top_p``
    (nucleus sampling) is sent only when set, as ``temperature`` is."""
    provider, name = parse_spec(spec)
    if provider == "scripted":
        return ScriptedChatModel.from_file(name)
    if provider == "replay":
        return ReplayChatModel.from_file(name)
    options: dict[str, Any] = {"max_tokens": max_tokens}
    if temperature is not None:
        options["temperature"] = temperature
    if top_p is not None:
        options["top_p"] = top_p
    # ChatOpenAI sends the limit as max_completion_tokens, OpenAI's current name; a compatible
    # server may read only max_tokens (llama-cpp-python's does, and generates to the end of its
    # context without it), so a server other than OpenAI's is sent both.
    compatible = {**options, "extra_body": {"max_tokens": max_tokens}}
    if local.is_local(spec):  # llama.cpp's OpenAI-compatible server, routed among its slots
        served = local.local_model(spec)
        client = counted_http_client(local.SlotTransport(served))
        return _chat_openai(served.path.stem, "local", served.url, client, compatible, timeout, retries)
    check_credentials(spec)
    if provider == "openai":
        key, url = os.environ.get("OPENAI_API_KEY") or "not-needed", os.environ.get("OPENAI_BASE_URL") or None
        return _chat_openai(name, key, url, counted_http_client(), compatible if url else options, timeout, retries)
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name, model_provider=provider, **options)
    except ImportError as exc:
        raise ModelConfigError(f"provider {provider!r} needs its package: {exc}") from None
    except ValueError as exc:
        if "Unsupported" in str(exc):
            raise ModelConfigError(
                f"unknown model provider {provider!r} in {spec!r}: use openai, scripted, or a provider "
                "langchain's init_chat_model supports (anthropic, google_genai, ollama, mistralai, ...)"
            ) from None
        raise ModelConfigError(f"unsupported model spec {spec!r}: {' '.join(str(exc).split())}") from None
    except Exception as exc:  # noqa: BLE001 - a provider's own validation (a missing key, ...)
        raise ModelConfigError(f"cannot set up {spec!r}: {' '.join(str(exc).split())}") from None


def _chat_openai(
    name: str, key: str, url: str | None, client: Any, options: dict[str, Any], timeout: float, retries: int
) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=name,
        api_key=SecretStr(key),
        base_url=url,
        max_retries=retries,
        timeout=timeout,
        http_async_client=client,
        **options,
    )


_MODELS: dict[tuple[Any, ...], BaseChatModel] = {}
_SERVED: dict[str, BaseChatModel] = {}
_BUILDING = threading.Lock()  # one build per settings, whichever thread or loop asks first


def serve(spec: str, model: BaseChatModel) -> None:
    """Answer every call for ``spec`` with ``model``, whatever the call's settings: for
    tests that build a model in code. ``clear_models`` forgets it."""
    _SERVED[spec] = model


def model_for(
    spec: str,
    temperature: float | None,
    max_tokens: int,
    top_p: float | None = None,
    *,
    timeout: float = TIMEOUT,
    retries: int = RETRIES,
) -> BaseChatModel:
    """The process-wide model for these settings (clients are reused across runs). Blocking
    the first time: on an event loop, use ``model_ready``."""
    if spec in _SERVED:
        return _SERVED[spec]
    key = (spec, temperature, max_tokens, top_p, timeout, retries)
    with _BUILDING:
        if key not in _MODELS:
            _MODELS[key] = build_model(spec, temperature, max_tokens, top_p=top_p, timeout=timeout, retries=retries)
    return _MODELS[key]


async def model_ready(
    spec: str,
    temperature: float | None,
    max_tokens: int,
    top_p: float | None = None,
    *,
    timeout: float = TIMEOUT,
    retries: int = RETRIES,
) -> BaseChatModel:
    """``model_for``, built in a worker thread when it is not built yet. The first build in a
    process imports the provider's client library and each one loads TLS certificates: 0.3 s,
    and 10 s for the first on a loaded machine, during which a build on the event loop would
    stop every run on it (and, in a LangGraph server, the heartbeats that keep its runs its own:
    another worker then took them up while they still ran)."""
    key = (spec, temperature, max_tokens, top_p, timeout, retries)
    built = _SERVED.get(spec) or _MODELS.get(key)
    if built is not None:
        return built
    return await asyncio.to_thread(model_for, spec, temperature, max_tokens, top_p, timeout=timeout, retries=retries)


def clear_models() -> None:
    """Forget cached and served models (tests; or after changing OPENAI_* variables)."""
    _MODELS.clear()
    _SERVED.clear()


class Caller:
    """Calls the run's model from inside one node and keeps that node's usage.

    ``position`` starts at the model-call count in state, which is how a scripted
    model knows which reply comes next, also after a resume; with ``task`` (the state's
    task id) it keys a recorded call (nodes.runtime.recording). ``calls`` keeps the record of every
    call made (nodes.runtime.calls), which ``model_node`` writes to the state's call log.
    """

    def __init__(
        self,
        spec: str,
        *,
        temperature: float | None,
        max_tokens: int,
        calls_before: int,
        top_p: float | None = None,
        timeout: float = TIMEOUT,
        retries: int = RETRIES,
        task: str | None = None,
    ) -> None:
        self.spec, self.task = spec, task
        self.temperature, self.max_tokens, self.top_p = temperature, max_tokens, top_p
        self.timeout, self.retries = timeout, retries
        self.position = calls_before
        self.usage: Usage = empty_usage()
        self.calls: list[ModelCall] = []  # this node's calls, for the state's call log (nodes.runtime.calls)

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
        model = await self.model()
        if max_tokens is not None and max_tokens != self.max_tokens and not isinstance(model, ScriptedChatModel):
            model = await self.model(max_tokens)
        limit = {"max_tokens": max_tokens} if max_tokens is not None else {}
        return await self._call(model, self.spec, messages, tools, tool_choice, stop, limit)

    async def model(self, max_tokens: int | None = None) -> BaseChatModel:
        """The model for this caller's settings, or with another limit (``model_ready``)."""
        return await model_ready(
            self.spec,
            self.temperature,
            self.max_tokens if max_tokens is None else max_tokens,
            self.top_p,
            timeout=self.timeout,
            retries=self.retries,
        )

    def unreadable(self, handling: str) -> None:
        """Mark the reply of this node's last call as one the method could not read, with what it
        did instead ("asked again: ...", "ended the trial", ...); results list them per run."""
        if self.calls:
            self.calls[-1]["unreadable"] = handling

    def verdict(self, place: Place, value: str, says: bool, graded: float | None = None) -> None:
        """Mark the reply of this node's last call as the verdict it gave at ``place`` (one of its
        method's ``Method.verdicts``): ``value`` as read, whether it ``says`` success, and a graded
        place's number in [0, 1]; results list them per run beside the outcome (nodes.runtime.verdicts)."""
        if self.calls:
            verdict = Verdict(kind=place.kind, value=value, says=says)
            if graded is not None:
                verdict["graded"] = min(1.0, max(0.0, graded))
            self.calls[-1]["verdict"] = verdict

    def judge(self, spec: str | None = None) -> CallerJudge:
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
        request = request_record(  # what was asked, as JSON: for the call log, a recording, a replay's check
            messages,
            tools,
            tool_choice,
            stop,
            {
                "max_tokens": (limit or {}).get("max_tokens", self.max_tokens),
                "temperature": self.temperature,
                "top_p": self.top_p,
            },
        )
        if isinstance(model, ScriptedChatModel):  # a script has no limit to build with: it records it
            runnable = runnable.bind(script_position=self.position, **(limit or {}))
            if isinstance(model, ReplayChatModel):
                runnable = runnable.bind(script_task=self.task, replay_request=request)
        if stop:
            runnable = runnable.bind(stop=list(stop))
        meter = METER.get()
        journal = journal_here()
        kept = await journal.reply(self.position) if journal is not None else None
        if kept is not None and same_request(kept.get("request"), redacted(ModelCall(request=request))["request"]):
            # answered before, in a run of this step that did not finish
            call, message = kept, before_stop(reply_of(kept), stop)
        else:
            if meter is not None:
                meter.before_call(self.task)  # a budget reached stops the run before it spends more
            message, call = await outlasting(self._ask(runnable, spec, messages, stop, request, journal))
        await record_call(call)
        # the state's log says where the journal keeps the whole record (nodes.runtime.calls.logged)
        self.calls.append(ModelCall(**call, kept=journal.where(self.position)) if journal is not None else call)
        self.position += 1
        await load_prices(spec)
        spent = usage_of_call(spec, message.usage_metadata, int(call.get("retries") or 0))
        self.usage = add_usage(self.usage, spent)
        if meter is not None:
            meter.after_call(self.task, spent)
        return message if tools else text_only(message)

    async def _ask(
        self,
        runnable: Any,
        spec: str,
        messages: Sequence[BaseMessage],
        stop: Sequence[str],
        request: dict[str, Any],
        journal: Journal | None,
    ) -> tuple[AIMessage, ModelCall]:
        """The model's reply and its record, journaled (nodes.runtime.journal) before anyone reads it."""
        attempts = Attempts(limit=self.retries + 1)
        token = _ATTEMPTS.set(attempts)
        affinity = local.AFFINITY.set(self.task)
        pacing = PACING.get()
        started = time.monotonic()
        try:
            async with pacing.calling() if pacing is not None else contextlib.nullcontext():
                message = before_stop(await runnable.ainvoke(list(messages)), stop)
        except Exception as exc:  # noqa: BLE001 - the client has retried what was worth retrying
            tried = f" after {attempts.retries + 1} attempts" if attempts.retries else ""
            spent = add_usage(self.usage, {**empty_usage(), "retries": attempts.retries})
            reason = local.failure(exc) or f"{type(exc).__name__}: {exc}"
            raise ModelCallError(f"model call failed{tried}: {reason}", spent) from exc
        finally:
            _ATTEMPTS.reset(token)
            local.AFFINITY.reset(affinity)
        call = call_record(
            spec, self.task, self.position, request, message, time.monotonic() - started, attempts.retries
        )
        if journal is not None:
            await journal.keep(call)
        return message, call


@dataclass
class CallerJudge:
    """``envs.base.Judge`` on top of a Caller; remembers whether it was asked, so that
    results can say which model judged."""

    caller: Caller
    spec: str
    calls: int = 0

    async def __call__(self, prompt: str, *, system: str = "") -> str:
        """The judge's reply. A judge that cannot be set up or asked raises, naming the judge: a
        verdict is never made up, nor asked of another model."""
        messages: list[BaseMessage] = [SystemMessage(system)] if system else []
        try:
            model = await model_ready(
                self.spec, 0.0, JUDGE_MAX_TOKENS, timeout=self.caller.timeout, retries=self.caller.retries
            )
            reply = await self.caller._call(model, self.spec, [*messages, HumanMessage(prompt)])
        except ModelConfigError as exc:
            raise ModelConfigError(f"{self._who()}: {exc}") from None
        except ModelCallError as exc:
            raise ModelCallError(f"{self._who()}: {exc}", exc.usage) from None
        self.calls += 1
        return reply.text

    def _who(self) -> str:
        return (
            f"the judge {self.spec} (a task's answer needs a model's verdict; "
            "the env option judge_model=provider:model names another judge)"
        )


def text_only(message: AIMessage) -> AIMessage:
    """The reply to a call that offered no tools, as text: a server that answers with a tool
    call anyway has said only its text (often nothing, which the method treats as any
    malformed reply), and tool calls must not go back to the API unanswered in a re-ask."""
    if not (message.tool_calls or message.invalid_tool_calls or "tool_calls" in message.additional_kwargs):
        return message
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in ("tool_calls", "function_call")}
    return message.model_copy(update={"tool_calls": [], "invalid_tool_calls": [], "additional_kwargs": extra})


def before_stop(message: AIMessage, stop: Sequence[str]) -> AIMessage:
    """``message`` with its text cut where the first stop sequence starts (as the API does)."""
    content = message.content
    if not stop or not isinstance(content, str) or cut_at_stop(content, stop) == content:
        return message
    return message.model_copy(update={"content": cut_at_stop(content, stop)})


def caller_for(context: Context, state: Mapping[str, Any]) -> Caller:
    """A Caller for a node: the model settings from ``context`` (each method's class holds
    its own default temperature), the position from ``state``; Context.top_p (nucleus
    sampling) is passed on when set."""
    calls = int((state.get("usage") or {}).get("model_calls", 0))
    return Caller(
        context.model,
        temperature=context.temperature,
        max_tokens=context.max_tokens,
        calls_before=calls,
        top_p=context.top_p,
        timeout=context.timeout,
        retries=context.retries,
        task=state.get("task_id"),
    )
