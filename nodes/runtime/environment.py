"""The one door from method nodes to live environments: start, look up, execute, restore,
release, and the optional capabilities an env declares (envs.base).

The env of a run is keyed by the run's thread id in ``envs.sessions.SESSIONS``; every
access passes the state's latest snapshot so that a resumed, forked or backtracked run
first brings its env to the state the graph believes it is in. Method nodes never touch
``SESSIONS`` or an env's optional methods themselves: what they need is here, so that the
rule above holds everywhere and a capability an env lacks is a typed check, not a guess.

Envs whose scoring asks a model (``envs.base.JudgedEnv``) get their judge here, from the
stepping node's own Caller: the judge's calls then count with the run's (scripted runs
stay deterministic on resume) and the result records which model judged. Envs whose actions
reach a site (``envs.base.JournaledEnv``) learn which graph step each action belongs to, so a
step re-run after a crash does not send the site the same thing twice.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import get_runtime

from envs.base import (
    DisablesElements,
    Env,
    HasReferences,
    Interface,
    JournaledEnv,
    JudgedEnv,
    Observation,
    StepResult,
    TrainingSplits,
    env_class,
    invalid,
)
from envs.sessions import SESSIONS
from nodes.runtime import confirm as confirmation
from nodes.runtime.context import Context
from nodes.runtime.llm import Caller, CallerJudge
from nodes.runtime.screenshots import capture
from nodes.runtime.state import RunState, Step


def session_key(config: RunnableConfig | None, state: RunState | None = None) -> str:
    """The thread id, or the run id a start node put in state when there is no thread."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    if thread:
        return str(thread)
    if state and state.get("run_id"):
        return state["run_id"]
    return f"run-{uuid.uuid4().hex[:12]}"


async def env_interface(context: Context) -> Interface:
    """What an agent is told about the run's env and how its replies are read (its class's
    ``interface``; the env's module is imported off the event loop the first time)."""
    return (await asyncio.to_thread(env_class, context.env)).interface


async def start_task(
    state: RunState, context: Context, config: RunnableConfig
) -> tuple[Env, Observation, dict[str, Any]]:
    """Reset the run's env to ``state["task_id"]``; returns env, observation and state update."""
    key = session_key(config, state)
    env, obs, snap = await SESSIONS.start(key, context.env, context.env_settings(), str(state["task_id"]))
    update: dict[str, Any] = {
        "run_id": key,
        "observation": obs.text,
        "env_snapshot": snap,
        "actions": 0,
        "reward": 0.0,
        "done": False,
        "success": False,
    }
    return env, obs, update


async def live_env(state: RunState, context: Context, config: RunnableConfig) -> Env:
    """The run's env, restored to ``state["env_snapshot"]`` if it is elsewhere."""
    return await SESSIONS.get(
        session_key(config, state), context.env, context.env_settings(), state.get("env_snapshot")
    )


async def sync_env(
    state: RunState, context: Context, config: RunnableConfig
) -> tuple[Env, Observation | None, dict[str, Any] | None]:
    """The run's env and, when it had to be restored (resume, fork), the restored observation
    and the env's snapshot after it (a rebuilt page may number its elements anew); else
    (env, None, None)."""
    key = session_key(config, state)
    env, restored = await SESSIONS.sync(key, context.env, context.env_settings(), state.get("env_snapshot"))
    if restored is None:
        return env, None, None
    snap = await env.snapshot()
    SESSIONS.mark(key, snap)
    return env, restored, snap


def _moving(key: str) -> None:
    """Say that session ``key``'s env is about to change: until the change is marked done, the
    env is somewhere unknown, so if it never is (a run stopped on the server mid-step, a node that
    failed halfway and is retried, a restore that failed) the next access restores the state's
    snapshot instead of taking the env for synced and acting twice."""
    SESSIONS.mark(key, {})


async def restore(
    state: RunState, context: Context, config: RunnableConfig, snapshot: dict[str, Any]
) -> tuple[Observation, dict[str, Any]]:
    """Bring the run's env back to ``snapshot`` (backtracking), wherever it is now; returns
    the observation there and the env's snapshot after it. EnvError when the env cannot go
    back (the page is gone): the env is then somewhere unknown (``_moving``), and the next access
    restores it from the state's snapshot."""
    key = session_key(config, state)
    env = await SESSIONS.get(key, context.env, context.env_settings(), None)  # created if the run resumed
    _moving(key)
    obs = await env.restore(snapshot)
    snap = await env.snapshot()
    SESSIONS.mark(key, snap)
    return obs, snap


async def disable_elements(
    state: RunState, context: Context, config: RunnableConfig, ids: list[str]
) -> tuple[Observation, dict[str, Any]] | None:
    """Disable exactly the element ids ``ids`` (``DisablesElements``); returns the screen as
    now shown and the env's snapshot, or None when the env cannot disable elements."""
    env = await live_env(state, context, config)
    if not isinstance(env, DisablesElements):
        return None
    _moving(session_key(config, state))
    observation = await env.set_disabled_ids(ids)
    snap = await env.snapshot()
    SESSIONS.mark(session_key(config, state), snap)
    return observation, snap


async def reference(state: RunState, context: Context, config: RunnableConfig) -> dict[str, Any] | None:
    """The reference record of the run's task when the env keeps one (``HasReferences``)."""
    env = await live_env(state, context, config)
    return await env.reference(str(state.get("task_id", ""))) if isinstance(env, HasReferences) else None


def training_splits(env: Env) -> tuple[str, ...]:
    """The env's training splits (``TrainingSplits``); none when it declares none."""
    return tuple(env.training_splits) if isinstance(env, TrainingSplits) else ()


def graph_step_id() -> str:
    """LangGraph's id of the graph step under way (the same when a crashed step runs again);
    outside a graph, a fresh one."""
    try:
        info = get_runtime().execution_info
    except RuntimeError:
        info = None
    return info.task_id if info is not None else f"step-{uuid.uuid4().hex}"


async def execute(
    env: Env,
    state: RunState,
    config: RunnableConfig,
    action: str,
    *,
    node: str,
    caller: Caller,
    rationale: str = "",
    harness: bool = False,
) -> tuple[StepResult, dict[str, Any]]:
    """Run ``action``; returns the result and the state update (trajectory, snapshot, counters,
    and on the final step the env's ``evaluation``). ``caller`` is the node's model caller:
    an env that judges with the run's model asks it, so the node's usage covers the judge.

    With ``Context.confirm`` an action the env declares irreversible waits for a person
    (nodes.runtime.confirm): approved or edited, that action runs; rejected, nothing runs and the
    agent gets a refused StepResult with the reason. ``harness=True``: an action the method's
    harness chose, not the model (a run whose budget is spent ended with an answer): it is not
    asked about, and its step says ``by: harness`` so that no export passes it off as the model's."""
    result: StepResult | None = None
    if not harness and _confirming() and env.interface.irreversible(action, str(state.get("observation", ""))):
        verdict = confirmation.ask("action", action, rationale, node)
        if verdict.proposal is None:  # the screen as it is (with the info a step's observation has)
            here = await env.restore(await env.snapshot())
            result = invalid(here, confirmation.rejection_feedback(action, verdict.reason), rejected=True)
        else:
            action = verdict.proposal
    if result is None:
        _moving(session_key(config, state))
        result = await _step(env, state, config, action, caller)
    snap = await env.snapshot()
    SESSIONS.mark(session_key(config, state), snap)
    await capture(env, session_key(config, state), len(state.get("trajectory") or []))
    step = Step(
        node=node,
        action=action,
        rationale=rationale,
        observation=result.observation.text,
        reward=float(result.reward),
        valid=result.valid,
    )
    if not result.valid:
        step["feedback"] = result.feedback
    if harness:
        step["by"] = "harness"
    update: dict[str, Any] = {
        "observation": result.observation.text,
        "env_snapshot": snap,
        "trajectory": [step],
        "actions": state.get("actions", 0) + 1,  # refused actions count too: no free loops
        "reward": float(result.reward),
        "done": bool(result.done),
        "success": bool(result.done and result.success),
    }
    evaluation = result.info.get("evaluation")
    if result.done and isinstance(evaluation, dict):
        update["evaluation"] = evaluation
    return result, update


async def _step(env: Env, state: RunState, config: RunnableConfig, action: str, caller: Caller) -> StepResult:
    """``env.step(action)``, told which graph step it belongs to (JournaledEnv) and with the
    node's judge (JudgedEnv); the evaluation records which model judged."""
    if isinstance(env, JournaledEnv):  # a step re-run after a crash must not repeat what the site got
        env.at_step(session_key(config, state), graph_step_id())
    judged = env if isinstance(env, JudgedEnv) and env.judge_model else None
    judge: CallerJudge | None = None
    if judged is not None:
        judge = caller.judge(None if judged.judge_model == "run" else judged.judge_model)
        judged.judge = judge
    try:
        result = await env.step(action)
    finally:
        if judged is not None:
            judged.judge = None  # a judge is bound to one node's caller: it lives for one step
    evaluation = result.info.get("evaluation")
    if result.done and isinstance(evaluation, dict) and judge and judge.calls:
        result.info["evaluation"] = {**evaluation, "judged_by": judge.spec}
    return result


def _confirming() -> bool:
    """Whether the run under way asks before irreversible actions (outside a graph: no)."""
    try:
        return confirmation.wanted(get_runtime().context)
    except RuntimeError:
        return False


async def release(state: RunState, config: RunnableConfig) -> None:
    """Close the run's env at the end of a run (it has finished: nothing is kept to resume it)."""
    await release_session(session_key(config, state))


async def release_session(key: str) -> None:
    """Close the env of session ``key`` (a thread id, or a batch branch's own session) whose
    run has finished, so what its env kept to resume the run can go."""
    await SESSIONS.release(key, finished=True)
