"""Context.confirm on a real web site: Devil's Advocate on the local shop (WebArena env, Chromium)
pauses before ``stop [answer]``; a rejection's reason reaches the agent, which acts again; an
approval delivers the answer and the env evaluates it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.devils_advocate import build_graph
from nodes.da.context import DAContext
from tests.graphs.test_confirm import run_until_paused
from tests.graphs.test_devils_advocate_shop import PICTURE_FRAME, prompts_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]

COMPLETED = "Order 000000174 holds the picture frame and its page says Color: Gold, so the task is completed. YES"
REASON = "check the frame's colour on the order page first"
ANSWER = "stop [Gold]"
SCRIPT = [
    *PICTURE_FRAME[:-2],  # the picture-frame run up to the order with the frame, aligned
    COMPLETED,  # complete: task
    "###Answer: Gold",  # answer -> the pause; after the rejection:
    "scroll [down]",  # act: look at the order page again
    "click [3]",  # remedy 1
    "click [5]",  # remedy 2
    "The action is to scroll down order 000000174; the picture frame's Color is Gold.",  # describe
    "YES",  # align
    COMPLETED,  # complete: task
    "###Answer: Gold",  # answer -> the pause; approved
]


async def test_da_pauses_before_the_answer_a_rejection_is_feedback_and_an_approval_is_evaluated(
    write_script: Callable[..., str],
) -> None:
    spec = write_script([{"content": r} for r in SCRIPT])
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "confirm-da-shop-1"}, "recursion_limit": 500}
    context = DAContext(model=spec, env="webarena", confirm=True)

    [asked] = await run_until_paused(graph, {"task_id": "shop-1"}, config, context)
    assert asked.value["kind"] == "action" and asked.value["node"] == "complete"
    assert asked.value["proposal"] == ANSWER and asked.value["rationale"] == COMPLETED
    state = (await graph.aget_state(config)).values
    assert not state["done"] and ANSWER not in [s["action"] for s in state["trajectory"]]

    [asked] = await run_until_paused(graph, Command(resume={"decision": "reject", "reason": REASON}), config, context)
    assert asked.value["proposal"] == ANSWER  # the agent acted again and answered again
    state = (await graph.aget_state(config)).values
    refused = [s for s in state["trajectory"] if s["action"] == ANSWER]
    assert len(refused) == 1 and not refused[0]["valid"] and REASON in refused[0]["feedback"]
    assert [s["action"] for s in state["trajectory"]][-1] == "scroll [down]"
    assert not state["done"] and not state.get("evaluation")
    # the reason is in the history the next action prompt showed the agent
    act_prompts = [p for p in prompts_of(spec) if p.startswith("I am in a sandbox") and "Now I'm trying" in p]
    assert [REASON in p for p in act_prompts] == [False] * 6 + [True] * 3  # act and 2 remedies after it

    assert await run_until_paused(graph, Command(resume={"decision": "approve"}), config, context) == []
    state = (await graph.aget_state(config)).values
    assert state["success"] and state["reward"] == 1.0 and state["answer"] == "Gold"
    assert state["stop_reason"] == "task_completed" and state["trajectory"][-1]["action"] == ANSWER
    assert state["trajectory"][-1]["valid"] and state["evaluation"]["evaluators"]
