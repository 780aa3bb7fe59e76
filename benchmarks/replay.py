"""Record a run's environment and model calls once, then replay them without the graph.

``recording(env_name)`` wraps the env a graph creates so that every call to it (reset,
step, snapshot, restore, set_disabled_ids, close) is logged with its result, and logs
every model call the nodes make (``nodes.runtime.llm.Caller._call``: the messages, tools, stop
sequences and script position). With the log:

- ``CannedEnv`` answers the same calls with the recorded results, in the same order, in
  process: the graph runs against it as against the real env, minus the env's own time
  (MiniWoB's and WebArena's browser steps, ALFWorld's engine), which would drown the
  framework's milliseconds in its noise. Each env instance of the run (AutoPlan training
  has one per branch) replays its own calls, found by the task its first reset names.
- ``plain_loop`` is the same work without LangGraph: the recorded env calls on canned
  envs and the recorded model calls through the same Caller, in the recorded order. It is
  the baseline the framework's time is measured against (benchmarks/orchestration.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from envs import base
from envs.base import Env, Observation
from nodes.runtime import llm

ENV_METHODS = ("reset", "step", "snapshot", "restore", "set_disabled_ids", "close")


@dataclass
class EnvCall:
    env: int  # which env instance of the run, in creation order
    method: str
    args: tuple[Any, ...]
    result: Any


@dataclass
class ModelCall:
    spec: str
    model: Any
    settings: dict[str, Any]  # the Caller's temperature, max_tokens, top_p, timeout, retries, position
    call: tuple[Any, ...]  # Caller._call's arguments after the model and spec


@dataclass
class Log:
    events: list[EnvCall | ModelCall] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)  # non-callable env attributes nodes read

    def env_calls(self, env: int) -> list[EnvCall]:
        return [e for e in self.events if isinstance(e, EnvCall) and e.env == env]

    def instances(self) -> list[int]:
        return sorted({e.env for e in self.events if isinstance(e, EnvCall)})


_RECORDING: dict[str, Any] = {}  # the log being written and the real env class
_REPLAYING: dict[str, Any] = {}  # the log being replayed and its unclaimed env instances


class RecordingEnv(Env):
    """The real env, with every call logged (registered in place of it while recording)."""

    def __init__(self, **options: Any) -> None:
        log: Log = _RECORDING["log"]
        self._inner = _RECORDING["class"](**options)
        self._number = _RECORDING["instances"]
        _RECORDING["instances"] += 1
        self.name = self._inner.name
        for key in ("name", "judge_model", "judge", "training_splits"):
            if hasattr(self._inner, key):
                log.attributes[key] = getattr(self._inner, key)

    def __getattr__(self, key: str) -> Any:
        return getattr(self._inner, key)

    async def _call(self, method: str, *args: Any) -> Any:
        result = await getattr(self._inner, method)(*args)
        _RECORDING["log"].events.append(EnvCall(self._number, method, copy.deepcopy(args), copy.deepcopy(result)))
        return result

    async def reset(self, task_id: str) -> Observation:
        return await self._call("reset", task_id)

    async def step(self, action: str) -> Any:
        return await self._call("step", action)

    async def snapshot(self) -> dict[str, Any]:
        return await self._call("snapshot")

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        return await self._call("restore", snapshot)

    async def set_disabled_ids(self, ids: list[str]) -> Observation:
        return await self._call("set_disabled_ids", ids)

    async def close(self) -> None:
        await self._call("close")

    def task_ids(self, split: str | None = None) -> list[str]:
        return self._inner.task_ids(split)


class CannedEnv(Env):
    """Answers a recorded env instance's calls with their recorded results, in order."""

    def __init__(self, **options: Any) -> None:
        log: Log = _REPLAYING["log"]
        self._calls: list[EnvCall] = []
        for key, value in log.attributes.items():
            setattr(self, key, value)

    def _claim(self, task_id: str) -> None:
        """Take the first unreplayed instance whose first call resets ``task_id``."""
        free: list[list[EnvCall]] = _REPLAYING["free"]
        for index, calls in enumerate(free):
            if calls and calls[0].method == "reset" and calls[0].args == (task_id,):
                self._calls = list(free.pop(index))
                return
        raise RuntimeError(f"no recorded env instance starts with reset({task_id!r})")

    async def _answer(self, method: str, *args: Any) -> Any:
        if not self._calls and method == "reset":
            self._claim(args[0])
        if not self._calls:
            if method == "close":
                return None
            raise RuntimeError(f"the replay has no more recorded calls, got {method}{args}")
        expected = self._calls.pop(0)
        if expected.method != method:
            raise RuntimeError(f"the run called {method}{args}, the recording {expected.method}{expected.args}")
        return copy.deepcopy(expected.result)

    async def reset(self, task_id: str) -> Observation:
        return await self._answer("reset", task_id)

    async def step(self, action: str) -> Any:
        return await self._answer("step", action)

    async def snapshot(self) -> dict[str, Any]:
        return await self._answer("snapshot")

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        return await self._answer("restore", snapshot)

    async def set_disabled_ids(self, ids: list[str]) -> Observation:
        return await self._answer("set_disabled_ids", ids)

    async def close(self) -> None:
        await self._answer("close")

    def task_ids(self, split: str | None = None) -> list[str]:
        return []


@contextmanager
def recording(env_name: str) -> Iterator[Log]:
    """Within the block, env ``env_name`` and every model call are logged into the Log."""
    log = Log()
    real = base.ENV_CLASSES[env_name]
    original_call = llm.Caller._call

    async def logged_call(self: llm.Caller, model: Any, spec: str, *call: Any) -> Any:
        settings = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "timeout": self.timeout,
            "retries": self.retries,
            "position": self.position,
        }
        log.events.append(ModelCall(spec, model, settings, call))
        return await original_call(self, model, spec, *call)

    _RECORDING.update(log=log, instances=0, **{"class": base.env_class(env_name)})
    RecordingEnv.interface = base.env_class(env_name).interface  # what the agent is told stays the env's
    base.ENV_CLASSES[env_name] = f"{__name__}:RecordingEnv"
    llm.Caller._call = logged_call  # type: ignore[method-assign]
    try:
        yield log
    finally:
        base.ENV_CLASSES[env_name] = real
        llm.Caller._call = original_call  # type: ignore[method-assign]
        _RECORDING.clear()


@contextmanager
def canned(env_name: str, log: Log) -> Iterator[None]:
    """Within the block, env ``env_name`` is a CannedEnv replaying ``log`` (call ``rewind``
    before each run)."""
    real = base.ENV_CLASSES[env_name]
    CannedEnv.interface = base.env_class(env_name).interface
    base.ENV_CLASSES[env_name] = f"{__name__}:CannedEnv"
    _REPLAYING["log"] = log
    rewind()
    try:
        yield
    finally:
        base.ENV_CLASSES[env_name] = real
        _REPLAYING.clear()


def rewind() -> None:
    """Make every recorded env instance available again (one run's worth)."""
    log: Log = _REPLAYING["log"]
    _REPLAYING["free"] = [log.env_calls(n) for n in log.instances()]


async def plain_loop(log: Log, *, model_calls: bool = True, real_env: str = "") -> None:
    """The recorded env calls (on canned envs, or on new instances of the real env
    ``real_env``) and, with ``model_calls``, the recorded model calls, in the recorded
    order, without a graph."""
    envs: dict[int, Env] = {}
    if not real_env:
        rewind()
    for event in log.events:
        if isinstance(event, EnvCall):
            if event.env not in envs:
                envs[event.env] = base.make_env(real_env) if real_env else CannedEnv()
            await getattr(envs[event.env], event.method)(*event.args)
        elif model_calls:
            settings = dict(event.settings)
            caller = llm.Caller(event.spec, calls_before=settings.pop("position"), **settings)
            await caller._call(event.model, event.spec, *event.call)
