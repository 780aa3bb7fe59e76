"""Whether every model a run will call is served, asked once before the run starts.

A run calls more models than the one it is named for: the agent's (``model``), an env's judge
(AutoPlan's HotpotQA judge is the code's ``gpt-4-0314``, which the provider has retired) and
AutoPlan's reflection model (``reflect_model``). A model that is not served would fail the run
hours in, at its first call; ``eval`` and ``study run`` ask first (``check_served``) and refuse
in one line, naming the setting to change and a model that is served to stand in.

One entry of ``CHECKS`` per spec kind (the part before the colon) decides whether a spec of
that kind is served. ``scripted:`` and ``replay:`` are always served (their file is checked
when the model is built); ``openai:`` asks the provider's model list once (``GET /models`` of
OPENAI_BASE_URL or OpenAI, with the key; a server that has no list is taken at its word);
``local`` and ``gguf:`` need llama-cpp-python's server installed and a GGUF file to serve; a
kind with no entry (a provider reached through init_chat_model) is not checked. A new kind of
spec adds its entry here, and nothing else.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from errors import UserError
from nodes.runtime import local
from nodes.runtime.model_errors import ModelConfigError
from nodes.runtime.secrets import redact
from nodes.runtime.spec import GGUF, LOCAL, parse_spec


class UnservedModel(UserError, ValueError):
    """A model a run will call is not served: the run does not start."""


@dataclass(frozen=True)
class Serving:
    """What a check found: whether the model is served, why not, and the models the provider
    does serve (for a stand-in)."""

    served: bool
    why: str = ""
    offered: tuple[str, ...] = ()


Check = Callable[[str], Awaitable[Serving]]


async def _always(name: str) -> Serving:
    return Serving(True)


async def _openai(name: str) -> Serving:
    """The provider's model list (one request); the model is served when the list names it."""
    import openai

    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        return Serving(False, "no OpenAI key (OPENAI_API_KEY) and no server (OPENAI_BASE_URL)")
    client = openai.AsyncOpenAI(
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        max_retries=1,
        timeout=30.0,
    )
    try:
        offered = tuple(sorted([m.id async for m in client.models.list()]))
    except openai.NotFoundError:
        return Serving(True)  # a server without a model list: nothing to tell, the first call will
    except openai.OpenAIError as exc:
        return Serving(False, f"its model list could not be read ({type(exc).__name__})")
    finally:
        await client.close()
    if name in offered:
        return Serving(True, offered=offered)
    return Serving(False, "the provider's model list does not name it", offered)


async def _embedded(spec: str) -> Serving:
    """The embedded model (nodes.runtime.local) is served when llama-cpp-python's server is installed and
    the GGUF file is one; the servers themselves start before the run (``start_local_models``)."""
    try:
        await asyncio.to_thread(local.check_installed, spec)
    except ModelConfigError as exc:
        return Serving(False, str(exc))
    return Serving(True)


async def _local(name: str) -> Serving:
    return await _embedded(LOCAL)


async def _gguf(name: str) -> Serving:
    return await _embedded(f"{GGUF}:{name}")


CHECKS: dict[str, Check] = {
    "scripted": _always,
    "replay": _always,
    "openai": _openai,
    LOCAL: _local,
    GGUF: _gguf,
}


async def serving(spec: str) -> Serving:
    """Whether ``spec`` is served, as its kind's entry of ``CHECKS`` decides (no entry: served)."""
    kind, name = parse_spec(spec)
    check = CHECKS.get(kind)
    return await check(name) if check else Serving(True)


async def check_served(models: dict[str, str]) -> None:
    """Refuse, in one line, when a model of ``models`` is not served; each spec is asked once.
    ``models`` maps the option that sets a model (``--set judge``) to its spec. The message
    names that option and a stand-in: another of the run's models that is served, else one the
    provider lists."""
    found = {spec: await serving(spec) for spec in dict.fromkeys(models.values())}
    for option, spec in models.items():
        if found[spec].served:
            continue
        kind, _ = parse_spec(spec)
        others = [s for s, verdict in found.items() if verdict.served and s != spec]
        offered = [f"{kind}:{name}" for name in found[spec].offered]
        stand_in = (others or offered or [""])[0]
        instead = f"{option}={stand_in}" if stand_in else f"{option}=PROVIDER:MODEL (a served one)"
        why = found[spec].why
        raise UnservedModel(redact(f"the model {spec} ({option}) is not served: {why}; stand in with {instead}"))
