"""Devil's Advocate on the real local shop site in Chromium (WebArena env).

The picture-frame task of the paper (shop-1): three orders in Nov 2022, the first one opened has
no picture frame, so the agent backtracks to the order history (a URL restore) and runs the
remedy. Element ids are numbered in tree order, so the same page has the same ids in every run:
the scripted replies name plain ids, and the restored page needs no element mapping.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.webarena.env import _warn_run_judge
from graphs.devils_advocate import build_graph, result
from nodes.da.context import DAContext
from nodes.runtime.llm import ModelConfigError, model_for
from tests.support.openai_stub import Reply

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PICTURE_FRAME = [
    "List:\n1. Click on 'My Orders'.\n2. Open the order from Nov 2022 with the picture frame.\n"
    "3. Read the color of the picture frame.",  # plan
    "click [5]",  # act: the header's My Orders
    "click [3]",  # remedy 1: My Account
    "scroll [down]",  # remedy 2
    "The action is to open My Orders; orders 000000173, 174 and 175 are from Nov 2022.",  # describe
    "YES",  # align
    "NO",  # complete: task
    "YES",  # complete: subtask
    "click [139]",  # act: View Order of 000000173, the wrong Nov 2022 order
    "click [127]",  # remedy 1: View Order of 000000174
    "click [115]",  # remedy 2: View Order of 000000175
    "The action is to open order 000000173; it has a USB cable and no picture frame.",  # describe
    "NO",  # align -> backtrack to the order history; the same ids there, no mapping
    "The action is to open order 000000174; it has a picture frame, Color: Gold.",  # describe
    "YES",  # align
    "YES",  # complete: task
    "###Answer: Gold",  # answer
]


async def run(spec: str, task_id: str, thread: str, **context: Any) -> dict[str, Any]:
    g = build_graph(checkpointer=InMemorySaver())
    return await g.ainvoke(
        {"task_id": task_id},
        {"configurable": {"thread_id": thread}, "recursion_limit": 500},
        context=DAContext(model=spec, env="webarena", **context),
    )


def prompts_of(spec: str) -> list[str]:
    calls = model_for(spec, 1.0, 512).calls
    return ["\n".join(str(m.content) for m in call["messages"]) for call in calls]


async def test_picture_frame_task_is_solved_after_a_backtrack(write_script: Callable[..., str]) -> None:
    spec = write_script([{"content": r} for r in PICTURE_FRAME])
    out = await run(spec, "shop-1", "da-shop-1")
    prompts = prompts_of(spec)
    executed = [step["action"] for step in out["trajectory"]]

    assert out["success"] and out["answer"] == "Gold" and out["stop_reason"] == "task_completed"
    assert len(prompts) == len(PICTURE_FRAME)
    # the ids the script names are the ones on the screens the model was shown
    assert "[5] link 'My Orders'" in prompts[1]
    assert "[130] cell '000000173'" in prompts[8] and "[139] link 'View Order'" in prompts[8]
    # first answers before remedies: My Orders, order 173; then the remedy (order 174)
    assert executed == ["click [5]", "click [139]", "click [127]", "stop [Gold]"]
    [back] = out["backtracks"]
    assert back["url"].endswith("/sales/order/history/") and back["action"] == "click [127]"
    assert "mapped_action" not in back  # the restored page has the ids it had
    assert not any(p.startswith("I want to interact with an element") for p in prompts)
    assert "Order # 000000174" in out["trajectory"][2]["observation"]
    assert result(out)["first_episode_actions"] == executed[:3]


JAN_2023_ORDER = [
    "List:\n1. Click on 'My Orders'.\n2. Open the order from Jan 2023.\n3. Read the items of that order.",  # plan
    "click [5]",  # act: My Orders
    "click [3]",  # remedy 1
    "scroll [down]",  # remedy 2
    "The action is to open My Orders; order 000000176 is from 1/9/23.",  # describe
    "YES",  # align
    "NO",  # complete: task
    "YES",  # complete: subtask
    "click [103]",  # act: View Order of 000000176
    "click [91]",  # remedy 1: 000000177
    "click [115]",  # remedy 2: 000000175
    "The action is to open order 000000176: a Non-Slip Yoga Mat and an Insulated Stainless Steel Water Bottle.",
    "YES",  # align
    "YES",  # complete: task
    "###Answer: A Non-Slip Yoga Mat (6mm) and an Insulated Stainless Steel Water Bottle",  # answer
    "The student's answer names both items of the reference. Correct.",  # WebArena's fuzzy_match judge
]


async def test_a_fuzzy_match_task_is_judged_by_webarenas_fixed_judge_by_default(write_script, openai_stub) -> None:
    """shop-13's reference is a fuzzy_match: with no judge option WebArena's own judge model grades
    it (here the OpenAI-compatible stub answers for it), not the run's model; the result says so."""
    openai_stub.replies.append(Reply(content=JAN_2023_ORDER[-1]))
    spec = write_script([{"content": r} for r in JAN_2023_ORDER[:-1]])
    out = await run(spec, "shop-13", "da-shop-13")

    assert out["stop_reason"] == "task_completed" and out["success"] is True and out["reward"] == 1.0
    evaluation = out["evaluation"]
    assert evaluation["judged_by"] == evaluation["judge_model"] == "openai:gpt-4-1106-preview"
    [outcome] = evaluation["evaluators"]
    assert outcome["evaluator"] == "string_match" and outcome["passed"] is True
    [asked] = openai_stub.requests  # the judge, greedily, with WebArena's 768 tokens
    assert asked["model"] == "gpt-4-1106-preview" and asked["temperature"] == 0.0
    assert asked["max_completion_tokens"] == 768
    assert asked["messages"][0] == {"role": "system", "content": "You are a helpful assistant"}
    assert asked["messages"][1]["content"].startswith("Help a teacher to grade the answer of a student")
    assert (
        "reference answer: Non-Slip Yoga Mat and Insulated Stainless Steel Water Bottle\n"
        "all the string 'N/A' that you see is a special sequence that means 'not achievable'\n"
        "student answer: a non-slip yoga mat (6mm) and an insulated stainless steel water bottle\n"
    ) in asked["messages"][1]["content"]
    assert not model_for(spec, 0.0, 768).calls  # the run's model did not grade its own answer
    assert out["usage"]["model_calls"] == len(JAN_2023_ORDER)  # the judge's call counts with the run's


async def test_the_runs_own_model_judges_only_when_asked_and_with_a_warning(write_script, caplog) -> None:
    _warn_run_judge.cache_clear()
    spec = write_script([{"content": r} for r in JAN_2023_ORDER])
    with caplog.at_level(logging.WARNING, logger="envs.webarena.env"):
        out = await run(spec, "shop-13", "da-shop-13-run", env_options={"judge": "run"})
    assert out["success"] is True
    assert out["evaluation"]["judge_model"] == "run" and out["evaluation"]["judged_by"] == spec
    [judged] = model_for(spec, 0.0, 768).calls  # the run's model at temperature 0
    assert judged["messages"][1].content.startswith("Help a teacher to grade the answer of a student")
    [warning] = [r.getMessage() for r in caplog.records if "judge=run" in r.getMessage()]
    assert "\n" not in warning and "gpt-4-1106-preview" in warning


async def test_a_task_that_needs_an_unreachable_judge_fails_naming_it(write_script, monkeypatch) -> None:
    """No key for WebArena's judge: the run stops with an error that names the judge; no verdict
    is made up and the run's model is not asked instead."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = write_script([{"content": r} for r in JAN_2023_ORDER])
    with pytest.raises(ModelConfigError, match=r"the judge openai:gpt-4-1106-preview .*no OpenAI key"):
        await run(spec, "shop-13", "da-shop-13-nokey")
    assert not model_for(spec, 0.0, 768).calls


async def test_with_the_judge_off_a_fuzzy_match_task_is_undecided_not_passed(write_script) -> None:
    spec = write_script([{"content": r} for r in JAN_2023_ORDER[:-1]])
    out = await run(spec, "shop-13", "da-shop-13-off", env_options={"judge": "off"})
    assert out["stop_reason"] == "task_completed" and out["success"] is False
    [outcome] = out["evaluation"]["evaluators"]
    assert outcome["passed"] is None and "needs a model" in outcome["detail"]
    assert "judged_by" not in out["evaluation"]
