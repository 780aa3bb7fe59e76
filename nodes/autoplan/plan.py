"""Plan update (paper 3.2.3, eq. 9): X_{i+1} = M(X_i ⊕ (P_1, s_1, f_1, r_1) ⊕ ... ⊕ Upd-prompt).

The Upd-prompt sees the current plan and, for every task instance of the batch in batch
order, its objective, result, summary, flaws and suggested revision; the reply is the new
plan. An empty reply keeps the current plan (a malformed answer must not erase it).
Every plan is kept: ``plans`` grows by one per iteration, and ``plan_calls`` by the update's
model calls (where the next iteration's calls start: nodes.autoplan.batch.phase_starts).
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.autoplan import prompting as text
from nodes.autoplan.batch import calls, iteration_of, of_iteration, update_caller
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.decoding import ask
from nodes.autoplan.state import TrainState
from nodes.runtime import confirm as confirmation
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller
from nodes.runtime.node import model_node

NO_PLAN = "None"  # how an empty plan X_0 is shown to the updater
_HEADER = re.compile(r"^\s*(?:#+\s*)?\**\s*new (?:game |task )?plan\s*:?\s*\**\s*\n?", re.IGNORECASE)


def clean_plan(reply: str) -> str:
    """The plan text without an echoed "New Game Plan:" header."""
    return _HEADER.sub("", reply.strip(), count=1).strip()


def update_prompt(env: str, interface: Interface, state: TrainState, wording: str) -> str:
    """The Upd-prompt for the iteration under way, its request in Context.prompt_wording."""
    iteration = iteration_of(state)
    experiences = of_iteration(state.get("experiences") or [], iteration)
    reflections = {r.get("index"): r for r in of_iteration(state.get("reflections") or [], iteration)}
    blocks = "\n".join(
        text.experience_block(env, number, experience, reflections.get(experience.get("index"), {}))
        for number, experience in enumerate(experiences)
    )
    current = state["plans"][-1].strip()
    kinds = [str(e.get("task_type", "")) for e in experiences]
    return text.render(
        env,
        "update",
        description=text.description(env, interface, kinds),
        plan=current or NO_PLAN,
        experiences=blocks,
        request=text.worded(env, "update_request", wording, count=len(experiences)),
    )


@model_node(update_caller)
async def plan(state: TrainState, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller) -> dict:
    """Rewrite the plan from the whole batch and its reflections (greedy).

    With Context.confirm a person approves, edits or rejects the new plan (nodes.runtime.confirm); a
    rejection's reason goes back to the updater, which writes the plan again."""
    env = runtime.context.env
    iteration = iteration_of(state)
    reflections = of_iteration(state.get("reflections") or [], iteration)
    interface = await env_interface(runtime.context)
    messages: list[BaseMessage] = [HumanMessage(update_prompt(env, interface, state, runtime.context.prompt_wording))]
    while True:
        reply = (await ask(llm, messages, env, "update")).strip()
        new_plan = clean_plan(reply) or state["plans"][-1]
        if not confirmation.wanted(runtime.context):
            break
        why = "; ".join(str(r.get("revision") or r.get("summary") or "").strip() for r in reflections).strip("; ")
        verdict = confirmation.ask(
            "plan", new_plan, f"revisions suggested by the batch's reflections: {why}" if why else "", "plan"
        )
        if verdict.proposal is not None:
            new_plan = verdict.proposal
            break
        messages += [
            AIMessage(reply),
            HumanMessage(f"A person rejected this plan: {verdict.reason}. Write the new plan again."),
        ]
    counts = state.get("plan_calls") or []
    return {
        "plans": edit(state["plans"], [*state["plans"], new_plan]),
        "plan_calls": edit(counts, [*counts, calls(llm.usage)]),
    }


def next_iteration(state: TrainState, runtime: Runtime[AutoPlanContext]) -> str:
    """Another iteration until I plans have been written (paper: I iterations)."""
    return "sample_batch" if len(state.get("plans") or []) - 1 < runtime.context.iterations else END
