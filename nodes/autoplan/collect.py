"""Experience collection (paper 3.2.1, eqs. 2-5): thought, action, formalizer, env step.

One collection plays one task with a plan X: ``think`` samples the thought ~a_t with the
Thought-prompt, ``act`` the free-form action a'_t after "Action:", ``formalize`` turns
it into a command of the env's grammar (a_t = F(a'_t), Appendix A.1), ``execute`` runs
it and ``finish`` packs the experience for reflection. The chat H_t grows by
(thought, action, observation) each step; it is kept in state as plain turns, written as
the original code sends it (Context.transcript="original", the default) or, with
Context.transcript="paper", as the paper has it (nodes.autoplan.transcript).
Context.few_shot runs Table 3's ReAct K-shot baselines instead (nodes.autoplan.few_shot).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import ActionParseError, Interface
from nodes.autoplan import decoding, few_shot, transcript
from nodes.autoplan import prompting as text
from nodes.autoplan.batch import acting_caller, branch_caller, formalizer_caller, session_config
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.state import CollectState, Experience, Turn
from nodes.autoplan.variants import variant
from nodes.runtime.channels import edit
from nodes.runtime.environment import (
    env_interface,
    execute,
    live_env,
    reference,
    release,
    start_task,
)
from nodes.runtime.llm import Caller
from nodes.runtime.node import model_node
from nodes.runtime.usage import empty_usage
from nodes.runtime.verdicts import Place

ANSWERED = Place(
    "answered",
    "formalize",
    "the answer is found: the agent delivers it (the env's answer action, HotpotQA's finish[...]); an env whose "
    "tasks end through ordinary actions (ALFWorld) has no such verdict",
)
_PUT = re.compile(r"put (.+) (in|on) (.+)")
_LABEL = re.compile(r"^\s*(?:formalized(?: first)? action|action)\s*\d*\s*:\s*", re.IGNORECASE)


def normalize_command(reply: str, interface: Interface) -> str:
    """The formalizer's reply as one command of the env's grammar (the env's interface reads
    it), or its answer action (``interface.answer_action``, e.g. WebArena's ``stop [...]``),
    or the cleaned reply as the env reads text (``interface.as_written``), which the env then
    refuses with feedback."""
    line = _LABEL.sub("", text.first_line(reply)).strip().strip("`\"'").rstrip(".").strip()
    try:
        return interface.parse_action(line)
    except ActionParseError:
        return answer_command(interface, line) or interface.as_written(line)


def readable(command: str, interface: Interface) -> bool:
    """Whether ``command`` is an action of the env's grammar or its answer."""
    try:
        interface.parse_action(command)
    except ActionParseError:
        return answer_command(interface, command) is not None
    return True


def read_as_written(reply: str) -> str:
    """The reply as AutoPlan's ALFWorld code reads it: lower-cased, "put X in Y" (or "on") made
    the game's "put X in/on Y"; nothing stripped or dropped (tasks/alfworld.py)."""
    command = reply.lower()
    return _PUT.sub(r"put \1 in/on \3", command) if command.startswith("put") else command


def answer_command(interface: Interface, line: str) -> str | None:
    """The env's answer action when ``line`` ends with one (spaces and case loose), else None."""
    if not interface.answer_action:
        return None
    head, _, tail = interface.answer_action.partition("{answer}")
    match = re.search(rf"{_loose(head)}\s*(.+?)\s*{_loose(tail)}\s*$", line, re.IGNORECASE | re.DOTALL)
    return interface.answer_action.replace("{answer}", match.group(1)) if match else None


def _loose(literal: str) -> str:
    """A pattern for ``literal`` whose words may be spaced apart differently."""
    return r"\s*".join(re.escape(part) for part in literal.split())


async def start(state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig) -> dict:
    """Reset the env to the task; the plan comes from the branch (training) or Context.plan."""
    ctx = runtime.context
    plan = state["plan"] if "plan" in state else ctx.plan
    few_shot.check(ctx.few_shot, plan, training=bool(state.get("branch")), env=ctx.env)
    _, obs, update = await start_task(state, ctx, session_config(state, config))
    update["plan"] = plan
    update["task_type"] = str(obs.info.get("task_type") or "")
    update["goal"] = str(obs.info["goal"])
    update["intro"] = str(obs.info.get("intro") or "")
    update["opening"] = transcript.opening(ctx.env, obs.text, obs.info, ctx.transcript)
    update["stop_reason"] = "" if ctx.steps() > 0 else "max_actions"
    if state.get("restart"):  # the original's retry: the game from its start, a fresh chat
        update["restart"] = False
        update["restarts"] = state.get("restarts", 0) + 1
        update["messages"] = edit(state.get("messages", []), [])
    return update


async def _observed(state: CollectState, context: AutoPlanContext) -> str:
    """The latest observation as the chat shows it; the first one opens the chat with the
    task instance P_j and the custom prompt X_i (the plan, or a baseline's examples)."""
    if state.get("messages"):
        return transcript.observation_turn(
            context.env, state.get("observation", ""), state.get("command", ""), context.transcript
        )
    plan, kind = state.get("plan", ""), state.get("task_type", "")
    examples = "" if plan.strip() else await few_shot.examples(context.env, context.few_shot, kind)
    return transcript.instance_prompt(
        context.env,
        await env_interface(context),
        plan,
        state.get("opening", ""),
        state.get("goal", ""),
        kind,
        examples,
        state.get("intro", ""),
    )


@model_node(acting_caller)
async def think(state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller) -> dict:
    """~a_t ~ M(H_{t-1} ⊕ Thought-prompt): the first turn carries P_j ⊕ X_i and o_0."""
    env, plan = runtime.context.env, state.get("plan", "")
    context = await _observed(state, runtime.context)
    ask = Turn(role="user", content=f"{context}\n{text.thought_prompt(env, plan)}")
    kind: decoding.CallKind = "thought" if state.get("messages") else "opening_thought"
    chat = state.get("messages", [])
    thought = (await decoding.ask(llm, text.chat(env, [*chat, ask]), env, kind)).strip()
    return {
        "messages": edit(chat, [*chat, ask, Turn(role="assistant", content=thought)]),
        "thought": thought,
    }


@model_node(acting_caller)
async def act(state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller) -> dict:
    """a'_t ~ M(H_{t-1} ⊕ ~a_t ⊕ "Action:"): a free-form action, which ends at a newline
    (nodes.autoplan.decoding)."""
    env = runtime.context.env
    asked = text.with_user(state.get("messages", []), text.render(env, "action"))
    raw = (await decoding.ask(llm, text.chat(env, asked), env, "action")).strip()
    return {"raw_action": raw}


@model_node(formalizer_caller)
async def formalize(
    state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller
) -> dict:
    """a_t = F(a'_t): the formalizer call (Appendix A.1), sampled as the acting calls (or greedy:
    Context.formalizer_sampling), outside the chat, with the
    env's grammar (its Interface's words, in the generic prompt); ALFWorld's ReAct baseline
    takes the action as written (nodes.autoplan.few_shot)."""
    ctx = runtime.context
    env, raw = ctx.env, state.get("raw_action", "")
    interface = await env_interface(ctx)
    if few_shot.skips_formalizer(env, ctx.few_shot):
        reply = raw
    else:
        prompt = text.render(env, "formalize", action=raw, **text.interface_values(interface))
        if variant(env).prompts:  # the original's prompt ends with a newline (a prompt file's last one is dropped)
            prompt += "\n"
        reply = await decoding.ask(llm, [HumanMessage(prompt)], env, "formalize")
    if ctx.command_reading == "original" and variant(env).reads_as_written:
        command = read_as_written(reply)
    else:
        command = normalize_command(reply, interface)
    if not readable(command, interface):
        llm.unreadable("sent to the env as written: its refusal is the agent's feedback")
    elif answer_command(interface, command) is not None:
        llm.verdict(ANSWERED, command, True)
    said = transcript.action_in_chat(env, raw, command, ctx.transcript)
    turns = [Turn(role="user", content=text.render(env, "action")), Turn(role="assistant", content=said)]
    chat = state.get("messages", [])
    return {"command": command, "messages": edit(chat, [*chat, *turns])}


@model_node(branch_caller)
async def execute_command(
    state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller
) -> dict:
    """o_t = E(a_t); a refused command shows the env's feedback (ALFWorld: Table 6)."""
    cfg = session_config(state, config)
    env = await live_env(state, runtime.context, cfg)
    result, update = await execute(
        env, state, cfg, state.get("command", ""), node="execute", caller=llm, rationale=state.get("thought", "")
    )
    observation = result.observation.text
    if not result.valid and observation == state.get("observation"):
        observation = result.feedback or observation  # the env echoed the old screen
    update["observation"] = observation
    if update["done"]:
        update["stop_reason"] = "max_actions" if result.info.get("stop_reason") == "max_steps" else "done"
    elif restarts(runtime.context, state.get("command", ""), result.valid):
        if state.get("restarts", 0) >= runtime.context.max_restarts:
            update["stop_reason"] = "max_restarts"
        else:
            update["restart"] = True
    elif update["actions"] >= runtime.context.steps():
        update["stop_reason"] = "max_actions"
    return update


def restarts(context: AutoPlanContext, command: str, accepted: bool) -> bool:
    """Whether the original starts the episode again after ``command`` (Context.after_look):
    a look, inventory or examine the game accepted, on ALFWorld."""
    verb = command.strip().split(" ", 1)[0]
    return accepted and context.after_look == "restart" and verb in variant(context.env).restarts_after


def next_step(state: CollectState, runtime: Runtime[AutoPlanContext]) -> str:
    """Keep collecting until the episode ends or the step cap is reached (the original
    ALFWorld chat thinks once more at the cap: nodes.autoplan.transcript)."""
    if state.get("restart"):
        return "start"
    if not (state.get("done") or state.get("stop_reason")):
        return "think"
    return "think" if transcript.thinks_after_cap(runtime.context.env, runtime.context.transcript, state) else "finish"


def after_thought(state: CollectState) -> str:
    """Act on the thought, unless it was the one the original asks at the step cap."""
    return "finish" if state.get("done") or state.get("stop_reason") else "act"


async def finish(state: CollectState, runtime: Runtime[AutoPlanContext], config: RunnableConfig) -> dict:
    """Close the episode: the last observation joins H_T (not in the original's chat), the
    experience is recorded."""
    env, plan = runtime.context.env, state.get("plan", "")
    final = (
        [Turn(role="user", content=await _observed(state, runtime.context))]
        if transcript.keeps_last_observation(runtime.context.transcript)
        else []
    )
    branch: Mapping[str, Any] = state.get("branch") or {}
    success = bool(state.get("success"))
    stop_reason = state.get("stop_reason") or "done"
    cfg = session_config(state, config)
    shows_reference = branch and variant(env).shows_reference  # HotpotQA's reflection reads the gold answer
    detail = text.gold_detail(env, await reference(state, runtime.context, cfg)) if shows_reference else ""
    experience = Experience(
        iteration=int(branch.get("iteration", 0)),
        index=int(branch.get("index", 0)),
        task_id=str(state.get("task_id", "")),
        task_type=state.get("task_type", ""),
        objective=state.get("goal", ""),
        plan=plan,
        messages=[*state.get("messages", []), *final],
        success=success,
        reward=state.get("reward", 0.0),
        steps=state.get("actions", 0),
        stop_reason=stop_reason,
        outcome=text.outcome(env, success, stop_reason, detail),
        usage=state.get("usage") or empty_usage(),  # no model call: a collection that ended at its start
    )
    await release(state, cfg)
    return {
        "messages": edit(state.get("messages", []), experience["messages"]),
        "experiences": [experience],
        "stop_reason": stop_reason,
    }
