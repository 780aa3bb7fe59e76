"""AutoPlan (and its ReAct zero-shot baseline: no plan) on every env, one cell per test, each
driven by a scripted model on the real env to a finished result through the CLI's own path
(``run_graph``): the paper's ALFWorld and HotpotQA with their own prompts, and WebShop, MiniWoB++
and WebArena's local shop with the generic prompts filled from each env's Interface."""

from __future__ import annotations

import re
from typing import Any

import pytest

from envs.miniwob import MiniWoBEnv
from envs.webarena.interface import GRAMMAR as WEBARENA_GRAMMAR
from envs.webshop.interface import GRAMMAR as WEBSHOP_GRAMMAR
from introspect.cli import main
from nodes.runtime.llm import model_for
from tests.graphs.laser_scripts import goal_with_options
from tests.graphs.test_autoplan_kit import step_replies
from tests.graphs.test_autoplan_real_envs import HEAT_GAME, HEAT_WIN, QUESTION

pytestmark = pytest.mark.slow

PLAN = "1. Read the task.\n2. Act towards it.\n3. Finish."


def prompts_of(spec: str) -> list[str]:
    return ["\n".join(str(m.content) for m in call["messages"]) for call in model_for(spec, 0.0, 512).calls]


def steps(*commands: str) -> list[dict[str, Any]]:
    """Thought, free-form action and formalizer reply for each command (the formalizer's
    reply written loosely, as a model might: with its label)."""
    return [r for c in commands for r in step_replies(f"Next I {c}.", f"I will {c}", f"Formalized First Action: {c}")]


def actions(state: dict[str, Any]) -> list[str]:
    return [step["action"] for step in state["trajectory"]]


async def test_alfworld_with_the_papers_prompts(run_graph, write_script):
    spec = write_script(steps(*HEAT_WIN))
    # the labelled replies are cleaned as an option: AutoPlan's code would send the label to the game
    normalized = {"command_reading": "normalized"}
    out = await run_graph("autoplan", {"task_id": HEAT_GAME}, model=spec, env="alfworld", plan=PLAN, **normalized)
    assert out.finished and out.state["success"] and out.state["reward"] == 1.0 and actions(out.state) == HEAT_WIN
    first = prompts_of(spec)[0]
    assert first.startswith("You are an excellent game player.") and "Game Plan:\n1. Read the task." in first
    assert "Game Objective: heat some apple and put it in garbagecan.\nYou arrive at the middle of a room." in first


async def test_hotpotqa_with_the_papers_prompts(run_graph, write_script):
    spec = write_script(steps("search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"))
    out = await run_graph(
        "autoplan",
        {"task_id": QUESTION},
        model=spec,
        env="hotpotqa",
        plan=PLAN,
        judge="off",
        env_options={"backend": "local"},
    )
    assert out.finished and out.state["success"] and out.state["reward"] == 1.0
    assert actions(out.state) == ["search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"]
    first = prompts_of(spec)[0]
    assert first.startswith("Solve a question answering task") and "Task Plan:\n1. Read the task." in first


@pytest.fixture(scope="module")
async def shop_goal():
    """A WebShop goal whose product tops the search for its name, with its options."""
    task_id, goal, _ = await goal_with_options()
    return task_id, goal


def purchase(goal: dict[str, Any]) -> list[str]:
    return [
        f"search[{goal['name']}]",
        f"click[{goal['asin']}]",
        *(f"click[{value}]" for value in goal["goal_options"].values()),
        "click[Buy Now]",
    ]


async def test_webshop_with_a_plan_and_the_generic_prompts(run_graph, write_script, shop_goal):
    task_id, goal = shop_goal
    commands = purchase(goal)
    spec = write_script(steps(*commands))
    out = await run_graph("autoplan", {"task_id": task_id}, model=spec, env="webshop", plan=PLAN)
    state = out.state
    assert out.finished and state["done"] and state["reward"] == 1.0 and state["stop_reason"] == "done"
    assert [a.lower() for a in actions(state)] == [c.lower() for c in commands]
    prompts = prompts_of(spec)
    first, formalizer = prompts[0], prompts[2]
    assert first.startswith("Task Description:\nYou need to interact with an environment to solve a task.\nWebShop")
    assert WEBSHOP_GRAMMAR in first and "Task Plan:\n1. Read the task." in first
    assert f"Task Objective: {state['goal']}" in first
    assert first.endswith(
        "Identify which step of plan you are at. Show your thought about the one next action. "
        "Your thought should be faithful to the plan step."
    )  # Table 2's Thought-prompt
    assert formalizer.startswith(f"Valid action formats are as follows:\n{WEBSHOP_GRAMMAR}\n\nFormalize")
    assert formalizer.endswith(f"Action: I will {commands[0]}\nFormalized First Action:")


async def test_webshop_react_zero_shot_baseline(run_graph, write_script, shop_goal):
    task_id, goal = shop_goal
    spec = write_script(
        [
            *steps(f"search[{goal['name']}]", f"click[{goal['asin']}]"),
            *step_replies("Buy it.", "buy it now", "no idea"),  # refused: not of the grammar
            *steps("click[Buy Now]"),
        ]
    )
    out = await run_graph("autoplan", {"task_id": task_id}, model=spec, env="webshop")
    state = out.state
    assert out.finished and state["done"] and 0.0 < state["reward"] < 1.0  # bought without choosing the options
    assert actions(state)[2] == "no idea" and state["trajectory"][2]["valid"] is False
    prompts = prompts_of(spec)
    assert "Task Plan:" not in prompts[0] and prompts[0].endswith("Show your thought about the next action.")
    assert not state["plan"] and state["actions"] == 4


@pytest.mark.browser
async def test_miniwob_with_a_plan(run_graph, write_script):
    peek = MiniWoBEnv()
    try:
        first_screen = await peek.reset("click-button/1")
    finally:
        await peek.close()
    button = re.search(r"<button id=(\d+)[^>]*>Ok</button>", first_screen.text).group(1)
    spec = write_script(
        [
            *step_replies("Click it.", "click the Ok button", "press the Ok button"),  # refused
            *steps(f"click id={button}"),
        ]
    )
    out = await run_graph("autoplan", {"task_id": "click-button/1"}, model=spec, env="miniwob", plan=PLAN)
    state = out.state
    assert out.finished and state["success"] and state["reward"] > 0 and state["stop_reason"] == "done"
    assert actions(state)[1] == f"click id={button}" and state["trajectory"][0]["valid"] is False
    first = prompts_of(spec)[0]
    assert f"<button id={button} " in first and 'Task Objective: Click on the "Ok" button.' in first
    assert "- click id=N: click the element with id N" in first


@pytest.mark.browser
async def test_webarena_local_shop_answers_with_its_answer_action(run_graph, write_script):
    spec = write_script(steps("click [5]", "stop [3]"))  # My Orders; three orders in Nov 2022
    out = await run_graph("autoplan", {"task_id": "shop-3"}, model=spec, env="webarena", plan=PLAN)
    state = out.state
    assert out.finished and state["success"] and state["reward"] == 1.0
    assert actions(state) == ["click [5]", "stop [3]"]
    prompts = prompts_of(spec)
    assert "[5] link 'My Orders'" in prompts[0]
    # the task's own sites (obs.info["intro"]), the grammar and the answer action in words
    assert "An online shopping site (One Stop Market, served locally by the project): http" in prompts[0]
    assert f"{WEBARENA_GRAMMAR}\n- stop [answer]: give the answer and finish the task." in prompts[0]
    assert "000000173" in state["trajectory"][0]["observation"]  # the order history came back


def test_cli_runs_autoplan_on_webshop(capsys, write_script, shop_goal, tmp_path):
    task_id, goal = shop_goal
    plan = tmp_path / "plan.txt"
    plan.write_text(PLAN)
    spec = write_script(steps(*purchase(goal)))
    code = main(
        [
            "run",
            "autoplan",
            "--env",
            "webshop",
            "--task",
            task_id,
            "--model",
            spec,
            "--plan",
            str(plan),
            "--checkpoint",
            "memory",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"env: webshop  task: {task_id}" in out and "command: click[Buy Now]" in out
    assert f"finished: success=True reward=1.000 steps={len(purchase(goal))} " in out


@pytest.mark.parametrize("env", ["webshop", "miniwob", "webarena"])
def test_training_is_refused_where_the_env_has_no_training_split(capsys, write_script, tmp_path, env):
    out_file = tmp_path / "plan.json"
    code = main(
        [
            "train",
            "autoplan",
            "--env",
            env,
            "--model",
            write_script([]),
            "--plan-out",
            str(out_file),
            "--checkpoint",
            "memory",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"{env} declares none" in err
    assert not out_file.exists()
