"""The live-env registry: a fresh or diverged session is restored from the state's snapshot."""

from __future__ import annotations

import pytest

from envs import base
from envs.base import Env, Observation, StepResult, UnknownEnvError, make_env
from envs.sessions import EnvSessions


class CounterEnv(Env):
    """A tiny env whose state is one number; records restores."""

    name = "counter"
    restores: list[dict] = []

    def __init__(self, start: int = 0) -> None:
        self.value = start

    async def reset(self, task_id: str) -> Observation:
        self.value = int(task_id)
        return Observation(f"value {self.value}")

    async def step(self, action: str) -> StepResult:
        if action != "inc":
            return base.invalid(Observation(f"value {self.value}"), "only 'inc' is allowed")
        self.value += 1
        return StepResult(Observation(f"value {self.value}"), 0.0, False)

    async def snapshot(self) -> dict:
        return {"value": self.value}

    async def restore(self, snapshot: dict) -> Observation:
        CounterEnv.restores.append(snapshot)
        self.value = snapshot["value"]
        return Observation(f"value {self.value}")

    def task_ids(self, split=None):
        return [str(i) for i in range(10)]


@pytest.fixture
def counter_env(monkeypatch):
    monkeypatch.setitem(base.ENV_CLASSES, "counter", f"{__name__}:CounterEnv")
    CounterEnv.restores = []


async def test_fresh_session_is_rebuilt_from_snapshot(counter_env):
    sessions = EnvSessions()
    env = await sessions.get("t1", "counter", {}, {"value": 7})
    assert env.value == 7 and CounterEnv.restores == [{"value": 7}]


async def test_in_sync_session_is_not_restored_and_diverged_one_is(counter_env):
    sessions = EnvSessions()
    env, obs, snap = await sessions.start("t1", "counter", {}, "3")
    assert obs.text == "value 3"
    await env.step("inc")
    sessions.mark("t1", await env.snapshot())
    assert (await sessions.get("t1", "counter", {}, {"value": 4})) is env
    assert CounterEnv.restores == []
    await sessions.get("t1", "counter", {}, snap)  # a fork back to the start
    assert env.value == 3 and CounterEnv.restores == [{"value": 3}]


async def test_invalid_action_returns_feedback(counter_env):
    env = make_env("counter")
    result = await env.step("dec")
    assert (result.valid, result.feedback, result.info) == (False, "only 'inc' is allowed", {})


def test_unknown_env_and_bad_options():
    with pytest.raises(UnknownEnvError, match="choose one of"):
        make_env("nope")


def test_bad_env_option_is_a_user_error(counter_env):
    with pytest.raises(base.EnvError, match="bad options"):
        make_env("counter", colour="red")


def test_unknown_task_is_refused(counter_env):
    with pytest.raises(base.UnknownTaskError):
        make_env("counter").check_task("99")


async def test_sync_reports_the_observation_of_a_restore_only(counter_env):
    sessions = EnvSessions()
    env, _, snap = await sessions.start("t1", "counter", {}, "2")
    assert (await sessions.sync("t1", "counter", {}, snap))[1] is None  # in sync: nothing restored
    _, restored = await sessions.sync("t1", "counter", {}, {"value": 9})  # a fork elsewhere
    assert restored is not None and restored.text == "value 9" and env.value == 9
