"""Devil's Advocate (and its Plan+Act baseline) on every env: one scripted run per cell on the
REAL env, through the runner's path (``run_graph``), asserting what reached the env.

WebArena is the paper's setting (the local shop site, with the appendix's prompts); on WebShop,
MiniWoB, ALFWorld and HotpotQA the generic plan and action prompts carry the env's grammar and
introduction. Backtracking restores the env's snapshot in each: on MiniWoB (a replay in the
browser), WebShop (the results page) and ALFWorld (a replay in the game engine, where the
restored state is the one the run then depends on). Each script lists the model's replies in
call order, each commented with the node that asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs import make_env
from envs.alfworld.interface import GRAMMAR as ALFWORLD_GRAMMAR
from envs.hotpotqa.interface import GRAMMAR as HOTPOTQA_GRAMMAR
from graphs.devils_advocate import METHOD
from introspect.cli import main
from nodes.runtime.llm import model_for
from tests.graphs.test_devils_advocate_shop import PICTURE_FRAME

HEAT_GAME = (
    "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
)
QUESTION = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes
WEBSHOP_TASK = "synthetic-3"  # no options; its product tops the search for its name
REMEDY_QUESTION = "If your answer above is not correct, instead, the next action should be:"


def replies(*lines: str) -> list[dict[str, Any]]:
    return [{"content": line} for line in lines]


def prompts_of(spec: str) -> list[str]:
    return ["\n".join(str(m.content) for m in call["messages"]) for call in model_for(spec, 1.0, 512).calls]


def executed(state: dict[str, Any]) -> list[str]:
    return [step["action"] for step in state["trajectory"]]


def test_every_env_is_a_cell_and_webarena_the_papers():
    assert set(METHOD.envs) == {"webarena", "webshop", "miniwob", "alfworld", "hotpotqa"}
    assert METHOD.paper_envs == ("webarena",)


# ALFWorld: after taking the apple the agent puts it back (misaligned); the backtrack restores the
# game to "holding the apple", which heating it in the microwave then needs.
ALFWORLD = replies(
    "List:\n1. Take the apple from the countertop.\n2. Heat it with the microwave.\n3. Put it in the garbagecan.",
    "go to countertop 1",
    "look",  # act, remedy
    "The action is to go to countertop 1; an apple 1 is on it.",
    "YES",
    "NO",  # describe, align, subtask
    "take apple 1 from countertop 1",
    "look",  # act, remedy
    "The action is to take apple 1.",
    "YES",
    "YES",  # describe, align, subtask 1 done
    "put apple 1 in/on countertop 1",
    "go to microwave 1",  # act (a mistake), remedy
    "The action is to put the apple back.",
    "NO",  # describe, align -> backtrack to holding the apple
    "The action is to go to microwave 1.",
    "YES",
    "NO",  # the remedy after the restore
    "open microwave 1",
    "look",
    "The action is to open the microwave.",
    "YES",
    "NO",
    "heat apple 1 with microwave 1",
    "look",
    "The action is to heat the apple.",
    "YES",
    "YES",  # subtask 2 done
    "go to garbagecan 1",
    "look",
    "The action is to go to the garbagecan.",
    "YES",
    "NO",
    "put apple 1 in/on garbagecan 1",
    "look",  # act, remedy; the game is won: the env is done
)


@pytest.mark.slow
async def test_alfworld_backtrack_restores_the_game(run_graph):
    out = await run_graph("devils_advocate", {"task_id": HEAT_GAME}, ALFWORLD, env="alfworld", remedies=1)
    state = out.state
    assert out.finished and state["success"] and state["reward"] == 1.0 and state["stop_reason"] == "env_done"
    assert executed(state) == [
        "go to countertop 1",
        "take apple 1 from countertop 1",
        "put apple 1 in/on countertop 1",
        "go to microwave 1",
        "open microwave 1",
        "heat apple 1 with microwave 1",
        "go to garbagecan 1",
        "put apple 1 in/on garbagecan 1",
    ]
    assert all(step["valid"] for step in state["trajectory"])  # heating worked: the apple was in hand again
    [back] = state["backtracks"]
    assert back["action"] == "go to microwave 1" and "mapped_action" not in back  # text env: no element mapping
    assert state["answer"] == ""  # ALFWorld's task ends by reaching the goal, not by an answer


@pytest.mark.slow
async def test_alfworld_prompts_carry_the_households_grammar(run_graph, write_script):
    spec = write_script(ALFWORLD)
    out = await run_graph("devils_advocate", {"task_id": HEAT_GAME}, model=spec, env="alfworld", remedies=1)
    assert out.state["success"]
    prompts = prompts_of(spec)
    assert len(prompts) == len(ALFWORLD)
    plan, act = prompts[0], prompts[1]
    assert ALFWORLD_GRAMMAR in plan and "playwright" not in plan
    assert act.startswith("I am working in the following environment:\n- A simulated household (ALFWorld)")
    assert f"Note:\n{ALFWORLD_GRAMMAR}\n\nThe next action is:" in act
    assert "Your task is to: heat some apple and put it in garbagecan." in act  # the observation
    assert not any("is the task completed now?" in p for p in prompts)  # the env says when it is done
    assert not any("website" in p or "accessibility tree" in p for p in prompts)  # the generic prompts
    assert "Observation 2:\nOn the countertop 1, you see a apple 1" in prompts[3]  # describe: the game's text


HOTPOTQA = replies(
    "List:\n1. Search Scott Derrickson.\n2. Search Ed Wood.\n3. Compare their nationalities.",
    "search[Scott Derrickson]",
    "search[Ed Wood]",  # act, remedy
    "The action is to search Scott Derrickson: an American director.",
    "YES",  # describe, align
    "NO",
    "YES",  # complete: task, subtask
    "search[Ed Wood]",
    "lookup[American]",  # act, remedy
    "The action is to search Ed Wood: an American filmmaker.",
    "YES",  # describe, align
    "YES",
    "###Answer: yes",  # complete: task, answer -> finish[yes]
)


@pytest.mark.slow
async def test_hotpotqa_answer_goes_out_as_finish(run_graph, write_script):
    spec = write_script(HOTPOTQA)
    out = await run_graph(
        "devils_advocate",
        {"task_id": QUESTION},
        model=spec,
        env="hotpotqa",
        remedies=1,
        env_options={"backend": "local"},
    )
    state = out.state
    assert state["success"] and state["reward"] == 1.0 and state["stop_reason"] == "task_completed"
    assert executed(state) == ["search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"]
    assert state["answer"] == "yes" and state["evaluation"]["em"] == 1.0
    prompts = prompts_of(spec)
    assert HOTPOTQA_GRAMMAR in prompts[0]
    assert "Ed Wood" in prompts[7] and "American" in prompts[7]  # the page text came back as the screen


async def webshop_goal() -> tuple[str, str, str]:
    """The task's product name and id, and another item of the same search."""
    env = make_env("webshop")
    try:
        await env.reset(WEBSHOP_TASK)
        goal = env.goal
        result = await env.step(f"search[{goal['name']}]")
        other = next(i for i in result.observation.info["item_ids"] if i != goal["asin"])
    finally:
        await env.close()
    return goal["name"], goal["asin"], other


@pytest.mark.slow
async def test_webshop_backtrack_to_the_results_then_buy(run_graph):
    name, asin, other = await webshop_goal()
    script = replies(
        "List:\n1. Search for the product.\n2. Open the matching item.\n3. Buy it.",
        f"search[{name}]",
        "search[streaming media player]",  # act, remedy
        "The action is to search; the results list the product.",
        "YES",
        "YES",  # describe, align, subtask
        f"click[{other}]",
        f"click[{asin}]",  # act (the wrong item), remedy
        "The action is to open another item.",
        "NO",  # describe, align -> back to the results
        "The action is to open the matching item.",
        "YES",
        "YES",  # the remedy after the restore
        "click[Buy Now]",
        "click[< Prev]",  # act, remedy; buying ends the task
    )
    out = await run_graph("devils_advocate", {"task_id": WEBSHOP_TASK}, script, env="webshop", remedies=1)
    state = out.state
    assert state["success"] and state["reward"] == 1.0 and state["stop_reason"] == "env_done"
    assert executed(state) == [f"search[{name}]", f"click[{other}]", f"click[{asin}]", "click[Buy Now]"]
    [back] = state["backtracks"]
    assert back["action"] == f"click[{asin}]"


@pytest.mark.slow
async def test_plan_act_on_webshop_asks_no_remedy(run_graph, write_script):
    name, asin, _ = await webshop_goal()
    spec = write_script(
        replies(
            "List:\n1. Search for the product.\n2. Open it.\n3. Buy it.",
            f"search[{name}]",
            "The action is to search.",
            "YES",
            "YES",  # act, describe, align, subtask
            f"click[{asin}]",
            "The action is to open the item.",
            "YES",
            "YES",
            "click[Buy Now]",  # buying ends the task
        )
    )
    out = await run_graph(
        "devils_advocate", {"task_id": WEBSHOP_TASK}, model=spec, env="webshop", backtracking=False, plan_revision=False
    )
    state = out.state
    assert (
        state["success"]
        and state["reward"] == 1.0
        and executed(state) == [f"search[{name}]", f"click[{asin}]", "click[Buy Now]"]
    )
    assert not any(REMEDY_QUESTION in p for p in prompts_of(spec)) and not state["backtracks"]


@pytest.mark.slow
async def test_plan_act_on_alfworld_ends_at_the_first_misaligned_action(run_graph):
    script = replies(
        "List:\n1. Take the apple from the countertop.",
        "go to countertop 1",
        "The action is to go to countertop 1.",
        "YES",
        "NO",
        "go to garbagecan 1",
        "The action is to go to the garbagecan.",
        "NO",  # no alternative: the plan failed
    )
    out = await run_graph(
        "devils_advocate", {"task_id": HEAT_GAME}, script, env="alfworld", remedies=0, plan_revision=False
    )
    state = out.state
    assert out.finished and state["stop_reason"] == "plan_failed" and not state["success"]
    assert executed(state) == ["go to countertop 1", "go to garbagecan 1"]  # no early-stop action: none exists


@pytest.mark.browser
async def test_miniwob_backtrack_replays_in_the_browser(run_graph, write_script):
    env = make_env("miniwob")
    try:
        screen = (await env.reset("click-button/1")).text
    finally:
        await env.close()
    assert "id=3" in screen and "id=5" in screen and "Ok" in screen  # prose 3, the Ok button 5
    spec = write_script(
        replies(
            "List:\n1. Click on the Ok button.",
            "click id=3",
            "click id=5",  # act (the prose), remedy
            "The action is to click the text; nothing changed.",
            "NO",  # describe, align -> backtrack
            # the remedy runs on the restored page: the same element, no mapping; the task is done
        )
    )
    out = await run_graph("devils_advocate", {"task_id": "click-button/1"}, model=spec, env="miniwob", remedies=1)
    state = out.state
    assert state["success"] and state["stop_reason"] == "env_done"
    assert executed(state) == ["click id=3", "click id=5"]
    [back] = state["backtracks"]
    assert back["action"] == "click id=5" and "mapped_action" not in back
    assert len(prompts_of(spec)) == 5  # no element-mapping question: id 5 names the same button


@pytest.mark.browser
@pytest.mark.slow
async def test_webarena_local_shop_is_the_papers_setting(run_graph, write_script):
    spec = write_script(replies(*PICTURE_FRAME))
    out = await run_graph("devils_advocate", {"task_id": "shop-1"}, model=spec, env="webarena")
    state = out.state
    assert state["success"] and state["answer"] == "Gold" and executed(state)[-1] == "stop [Gold]"
    first = prompts_of(spec)[0]
    assert "(e.g., click(), scroll(), goto(), go_back(), and type() functions in playwright)" in first
    assert prompts_of(spec)[1].startswith("I am in a sandbox and only have access to the following websites")
    assert "And here is the accessibility tree of the current screen you are looking at:" in prompts_of(spec)[6]


@pytest.mark.slow
def test_cli_runs_devils_advocate_on_alfworld(capsys, tmp_path: Path):
    script = tmp_path / "alfworld.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in ALFWORLD))
    code = main(
        [
            "run",
            "devils_advocate",
            "--env",
            "alfworld",
            "--task",
            HEAT_GAME,
            "--model",
            f"scripted:{script}",
            "--set",
            "remedies=1",
            "--checkpoint",
            "memory",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "back to an earlier state to try go to microwave 1" in out
    assert "finished: success=True reward=1.000 steps=8" in out and "(env_done)" in out
