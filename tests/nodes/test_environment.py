"""nodes.runtime.environment, the one door to live envs: executing an action, handing judging envs the run's
model, the optional capabilities, and going back to a snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envs import make_env
from envs.base import DisablesElements, Env, EnvError, HasReferences, Observation, StepResult, TrainingSplits, invalid
from envs.sessions import SESSIONS
from nodes.runtime.environment import (
    disable_elements,
    execute,
    live_env,
    reference,
    restore,
    start_task,
    training_splits,
)
from nodes.runtime.llm import JUDGE_MAX_TOKENS, Caller, model_for


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


async def finish_hotpotqa(judge: str, answer: str, caller: Caller) -> dict[str, Any]:
    env = make_env("hotpotqa", judge=judge)
    task = env.task_ids()[0]
    await env.reset(task)
    gold = env.by_id[task]["answer"]
    state: dict[str, Any] = {"task_id": task, "actions": 0}
    _, update = await execute(
        env, state, config(f"judge-{judge}"), f"finish[{answer or gold}]", node="finish", caller=caller
    )
    return {"gold": gold, **update}


async def test_a_judging_env_asks_the_run_model_through_the_node_caller(write_script: Callable[..., str]) -> None:
    spec = write_script([{"content": "They are the same.\nYES"}])
    caller = Caller(spec, temperature=0.7, max_tokens=64, calls_before=0)
    update = await finish_hotpotqa("run", "a paraphrase that is not the gold string", caller)
    evaluation = update["evaluation"]
    assert evaluation["judge"] is True and evaluation["em"] == 0.0
    assert evaluation["judged_by"] == spec
    assert update["success"] is True and update["reward"] == 0.0  # reward stays EM, success is judged
    assert caller.usage["model_calls"] == 1 and caller.position == 1  # counted with the run's calls
    asked = model_for(spec, 0.0, JUDGE_MAX_TOKENS).calls  # greedy, as WebArena's judge
    assert "a paraphrase that is not the gold string" in asked[0]["messages"][-1].content


async def test_no_judge_is_asked_when_the_option_is_off_and_an_exact_match_is_asked(
    write_script: Callable[..., str],
) -> None:
    caller = Caller(write_script([{"content": "No"}]), temperature=None, max_tokens=64, calls_before=0)
    off = await finish_hotpotqa("off", "something else", caller)
    assert off["evaluation"]["judge"] is None and "judged_by" not in off["evaluation"]
    assert off["success"] is False
    assert caller.usage["model_calls"] == 0
    exact = await finish_hotpotqa("run", "", caller)  # the gold answer itself, asked as AutoPlan's code asks
    assert exact["evaluation"]["judge"] is False and exact["success"] is False  # the judge said no
    assert caller.usage["model_calls"] == 1


async def test_a_named_judge_model_answers_instead_of_the_run_model(write_script: Callable[..., str]) -> None:
    run_spec = write_script([{"content": "NO"}])
    judge_spec = write_script([{"content": "YES"}])
    caller = Caller(run_spec, temperature=None, max_tokens=64, calls_before=0)
    update = await finish_hotpotqa(judge_spec, "not the gold", caller)
    assert update["evaluation"]["judge"] is True and update["evaluation"]["judged_by"] == judge_spec
    assert caller.usage["model_calls"] == 1  # the judge's call is still the run's cost


class _Context:
    """The Context fields the door reads."""

    def __init__(self, env: str) -> None:
        self.env, self.env_options = env, {}

    def env_settings(self) -> dict[str, Any]:
        return dict(self.env_options)


async def test_capabilities_are_typed_checks_an_env_may_lack() -> None:
    qa, shop = make_env("hotpotqa"), make_env("webshop")
    assert isinstance(qa, HasReferences) and isinstance(qa, TrainingSplits) and not isinstance(qa, DisablesElements)
    assert not isinstance(shop, (HasReferences, TrainingSplits, DisablesElements))
    assert training_splits(qa) == ("train",) and training_splits(shop) == ()

    state: dict[str, Any] = {"task_id": qa.task_ids()[0]}
    _, _, started = await start_task(state, _Context("hotpotqa"), config("door-qa"))
    state.update(started)
    record = await reference(state, _Context("hotpotqa"), config("door-qa"))
    assert record is not None and record["_id"] == state["task_id"] and record["answer"]
    assert await disable_elements(state, _Context("hotpotqa"), config("door-qa"), ["3"]) is None
    await SESSIONS.release("door-qa")

    shop_state: dict[str, Any] = {"task_id": "0"}
    _, _, started = await start_task(shop_state, _Context("webshop"), config("door-shop"))
    shop_state.update(started)
    assert await reference(shop_state, _Context("webshop"), config("door-shop")) is None
    await SESSIONS.release("door-shop")


async def test_a_failed_restore_leaves_the_env_to_be_restored_from_state() -> None:
    ctx, cfg = _Context("webshop"), config("door-restore")
    state: dict[str, Any] = {"task_id": "0"}
    env, _, started = await start_task(state, ctx, cfg)
    state.update(started)
    await env.step("search[pillow]")  # the env moves away from the state's snapshot
    with pytest.raises(EnvError):
        await restore(state, ctx, cfg, {"task_id": "0", "view": {"page": "nowhere"}})
    back = await live_env(state, ctx, cfg)  # restored from the state's snapshot, on the search page
    assert (await back.snapshot())["view"]["page"] == "search"
    await SESSIONS.release("door-restore")


class _Scored(Env):
    """Ends on ``finish`` with a reward of 1 that is no success, and refuses anything else."""

    name = "scored"

    async def reset(self, task_id: str) -> Observation:
        return Observation("here")

    async def step(self, action: str) -> StepResult:
        if action != "finish":
            return invalid(Observation("here"), "only finish ends it", tried=action)
        return StepResult(Observation("over"), 1.0, True, {"score": 1.0})

    async def snapshot(self) -> dict[str, Any]:
        return {}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        return Observation("here")

    def task_ids(self, split: str | None = None) -> list[str]:
        return ["t"]


async def test_a_step_is_read_from_the_typed_fields_of_its_result(write_script: Callable[..., str]) -> None:
    """Valid, feedback and success are StepResult's fields; a final step that does not say
    ``success`` failed, whatever its reward (the node used to take a reward of 1 for success)."""
    caller = Caller(write_script([]), temperature=None, max_tokens=64, calls_before=0)
    state: dict[str, Any] = {"task_id": "t", "actions": 0}
    refused, update = await execute(_Scored(), state, config("typed"), "jump", node="act", caller=caller)
    assert (refused.valid, refused.feedback, refused.info) == (False, "only finish ends it", {"tried": "jump"})
    assert update["trajectory"][0]["valid"] is False and update["trajectory"][0]["feedback"] == "only finish ends it"
    final, update = await execute(_Scored(), state, config("typed"), "finish", node="act", caller=caller)
    assert final.valid and final.feedback == "" and "feedback" not in update["trajectory"][0]
    assert update["done"] is True and update["reward"] == 1.0 and update["success"] is False


class _Interrupted(Exception):
    """Stands in for a cancelled run or a node that failed halfway through a step."""


@pytest.mark.parametrize("when", ["after the env moved", "before the env moved"])
async def test_a_step_cut_short_leaves_the_env_to_be_restored_from_state(
    when: str, write_script: Callable[..., str]
) -> None:
    """A run stopped on the server (or a node retried) while its env was stepping: the step may
    have reached the env or not, and the state keeps the snapshot from before it. The next
    access must restore that snapshot, not take the env for synced (a continued run once sent
    its search again on the results page, where it was refused)."""
    ctx, cfg = _Context("webshop"), config(f"door-cut-{when[:5]}")
    state: dict[str, Any] = {"task_id": "0"}
    env, _, started = await start_task(state, ctx, cfg)
    state.update(started)
    stepping = env.step

    async def cut_short(action: str) -> StepResult:
        if when == "after the env moved":
            await stepping(action)
        raise _Interrupted

    env.step = cut_short  # type: ignore[method-assign]
    caller = Caller(write_script([]), temperature=None, max_tokens=64, calls_before=0)
    with pytest.raises(_Interrupted):
        await execute(env, state, cfg, "search[pillow]", node="act", caller=caller)
    del env.step  # the env's own step again
    back = await live_env(state, ctx, cfg)
    assert (await back.snapshot())["view"] == state["env_snapshot"]["view"]  # where the state says: the search page
    result, _ = await execute(back, state, cfg, "search[pillow]", node="act", caller=caller)
    assert result.valid, result.feedback
    await SESSIONS.release(cfg["configurable"]["thread_id"])
