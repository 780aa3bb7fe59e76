"""Structured Reflection on every env (issue 11's matrix), each cell a scripted run on the REAL env.

miniwob is the paper's own setting (the paper's prompts, failed click ids disabled); webshop,
webarena (the local shop, task shop-1), alfworld and hotpotqa get the generic prompts filled from
their Interface, and no ids are disabled (none of them implements DisablesElements). Three cells
fail a first trial on purpose: the env's own verdict ends it (WebShop's partial reward, a wrong
WebArena answer, a refused ALFWorld command, a wrong HotpotQA answer), the reflection's
"For action index=A, you should B." goes into the memory, and the second trial replays the steps
before A without asking the model, enforces B at A, and succeeds.
"""

from __future__ import annotations

from typing import Any

import pytest

from envs.miniwob import MiniWoBEnv
from envs.webshop import WebShopEnv
from introspect.cli import main
from nodes.runtime.llm import model_for
from nodes.sr.context import SRContext
from tests.graphs.sr_support import id_of

HEAT_GAME = (
    "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
)
QUESTION = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def replies(*texts: str) -> list[dict[str, Any]]:
    return [{"content": text} for text in texts]


def prompts_shown(state: dict[str, Any]) -> list[str]:
    """Every prompt the run's scripted model was shown, in call order."""
    calls = model_for(state["__model"], SRContext().temperature, 512).calls
    return [str(call["messages"][-1].content) for call in calls]


async def run(run_graph, env: str, task: str, script: list[dict[str, Any]], write_script) -> dict[str, Any]:
    spec = write_script(script)
    offline = {"backend": "local"} if env == "hotpotqa" else {}  # the local corpus, opt-in
    outcome = await run_graph("structured_reflection", {"task_id": task}, model=spec, env=env, env_options=offline)
    assert outcome.finished
    return {**outcome.state, "__model": spec}


def trials(state: dict[str, Any]) -> list[tuple[str, list[str], list[str]]]:
    return [(t["status"], t["actions"], t["sources"]) for t in state["trials"]]


@pytest.mark.browser
async def test_miniwob_the_papers_setting(run_graph, write_script):
    env = MiniWoBEnv()
    try:
        screen = (await env.reset("click-checkboxes/2")).text
    finally:
        await env.close()
    first, second, submit = id_of(screen, "fzzqo"), id_of(screen, "NYYyS82"), id_of(screen, "Submit")
    state = await run(
        run_graph,
        "miniwob",
        "click-checkboxes/2",
        replies(
            f"click id={first}\nclick id={second}\nclick id={submit}",  # read line by line, as the code
            "ticked fzzqo",
            "ticked NYYyS82",
        ),
        write_script,
    )
    assert state["success"] and trials(state) == [
        ("correct", [f"click id={first}", f"click id={second}", f"click id={submit}"], ["plan"] * 3)
    ]
    shown = prompts_shown(state)
    assert shown[0].startswith("You are operating a computer for a task: click-checkboxes. You can generate")
    assert "represented by the following HTML code:\n<screen>\n" in shown[0]  # the paper's own prompt


async def test_webshop_partial_reward_fails_then_the_enforced_option_buys_right(run_graph, write_script):
    shop = WebShopEnv()
    await shop.reset("synthetic-12")
    goal = shop.goal
    color, size = goal["goal_options"]["color"], goal["goal_options"]["size"]
    state = await run(
        run_graph,
        "webshop",
        "synthetic-12",
        replies(
            f"search[{goal['name']}]",
            "searched for the shirt",  # stage 1: the search page
            f"Your plan:\nclick[{goal['asin']}]",
            "opened the shirt",  # stage 2: the results
            "click[Buy Now]",
            "bought it without choosing options",  # stage 3: the item, options forgotten
            f"For action index=3, you should click[{color}].",
            "chose the colour",  # trial 2: search and open are replayed, the colour enforced at 3
            f"click[{size}]\nclick[Buy Now]",
            "chose the size",
        ),
        write_script,
    )
    (status1, actions1, _), (status2, actions2, sources2) = trials(state)
    assert status1 == "failed" and 0 < state["trials"][0]["reward"] < 1  # a partial reward is not success
    assert actions1 == [f"search[{goal['name']}]", f"click[{goal['asin']}]", "click[Buy Now]"]
    assert status2 == "correct" and state["reward"] == pytest.approx(1.0) and state["success"]
    assert actions2 == [*actions1[:2], f"click[{color}]", f"click[{size}]", "click[Buy Now]"]
    assert sources2 == ["replay", "replay", "enforce", "plan", "plan"]
    shown = prompts_shown(state)
    assert len(shown) == 10  # replayed steps and the enforced B cost no planning call
    assert "- search[query]: on the search page" in shown[0] and "WebShop, an online shop" in shown[0]
    assert "Your index=3 action: click[Buy Now]" in shown[6]  # the reflection reads the trajectory
    # the next plan reads the replayed steps' paraphrases from trial 1 and the enforced step's own
    assert "1st action: searched for the shirt\n2nd action: opened the shirt\n3rd action: chose the colour" in shown[8]
    assert state["memory"]["entries"]["2"]["failed"] == ["click[Buy Now]"]
    assert state["memory"]["entries"]["2"]["disabled"] == []  # WebShop has no element ids to disable


@pytest.mark.browser
@pytest.mark.slow
async def test_webarena_local_shop_wrong_answer_reflected_then_the_right_order(run_graph, write_script):
    state = await run(
        run_graph,
        "webarena",
        "shop-1",
        replies(
            "click [5]",
            "opened My Orders: orders 000000173, 174 and 175 are from Nov 2022",
            "click [139]",
            "opened order 000000173",
            "stop [Walnut]",  # a guess: the order holds no picture frame
            "answered Walnut",
            "For action index=2, you should click [127].",  # order 000000174 has the picture frame
            "opened order 000000174, which has a picture frame, Color: Gold",
            "stop [Gold]",
        ),
        write_script,
    )
    assert trials(state) == [
        ("failed", ["click [5]", "click [139]", "stop [Walnut]"], ["plan"] * 3),
        ("correct", ["click [5]", "click [127]", "stop [Gold]"], ["replay", "enforce", "plan"]),
    ]
    assert state["success"] and state["evaluation"]["answer"] == "Gold"
    shown = prompts_shown(state)
    assert "[5] link 'My Orders'" in shown[0] and "stop [answer]: give your final answer" in shown[0]
    assert "An online shopping site (One Stop Market" in shown[0]  # the task's own intro (info["intro"])
    assert "Order # 000000174" in shown[-1]  # the last plan is made on the order the memory led to


async def test_alfworld_refused_command_reflected_then_the_game_won(run_graph, write_script):
    rest = [
        "take apple 1 from countertop 1",
        "go to microwave 1",
        "open microwave 1",
        "heat apple 1 with microwave 1",
        "go to garbagecan 1",
        "put apple 1 in/on garbagecan 1",
    ]
    state = await run(
        run_graph,
        "alfworld",
        HEAT_GAME,
        replies(
            "take apple 1 from countertop 1",  # not at the countertop yet: the game refuses it
            "For action index=1, you should go to countertop 1.",
            "went to the countertop, where the apple is",
            "\n".join(rest),
            *[f"did: {command}" for command in rest[:-1]],
        ),
        write_script,
    )
    assert trials(state) == [
        ("exception", ["take apple 1 from countertop 1"], ["plan"]),
        ("correct", ["go to countertop 1", *rest], ["enforce"] + ["plan"] * 6),
    ]
    assert state["success"] and state["reward"] == 1.0
    shown = prompts_shown(state)
    assert "- go to recep j, e.g. go to countertop 1" in shown[0] and "A simulated household" in shown[0]
    assert "However, your last action is invalid." in shown[1]  # the exception status (Appendix D)
    assert "You are not at countertop 1." in shown[1]  # the refusal, seen after the last action
    assert "On the countertop 1, you see" in shown[3]  # staged planning on the observation reached


async def test_hotpotqa_wrong_answer_reflected_then_answered(run_graph, write_script):
    state = await run(
        run_graph,
        "hotpotqa",
        QUESTION,
        replies(
            "search[Scott Derrickson]\nfinish[no]",  # one stage: a search, then a guess
            "looked up Scott Derrickson: an American director",
            "answered no",
            "For action index=2, you should search[Ed Wood].",
            "looked up Ed Wood: an American filmmaker",
            "finish[yes]",
        ),
        write_script,
    )
    assert trials(state) == [
        ("failed", ["search[Scott Derrickson]", "finish[no]"], ["plan", "plan"]),
        ("correct", ["search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"], ["replay", "enforce", "plan"]),
    ]
    assert state["success"] and state["reward"] == 1.0
    shown = prompts_shown(state)
    assert "Episode finished, reward = 0" in shown[3]  # the reflection sees what the last action returned
    assert "1st action: looked up Scott Derrickson" in shown[5]  # the replayed step keeps its paraphrase
    assert "<screen>\nEdward Davis Wood Jr." in shown[5]  # planned on the observation reached


def test_cli_runs_structured_reflection_on_hotpotqa(capsys, write_script):
    spec = write_script(
        replies(
            "search[Scott Derrickson]",
            "looked up Scott Derrickson",
            "search[Ed Wood]",
            "looked up Ed Wood",
            "finish[yes]",
        )
    )
    code = main(
        [
            "run",
            "structured_reflection",
            "--env",
            "hotpotqa",
            "--env-option",
            "backend=local",
            "--task",
            QUESTION,
            "--model",
            spec,
            "--checkpoint",
            "memory",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "finish[yes]" in out and "status: correct" in out
