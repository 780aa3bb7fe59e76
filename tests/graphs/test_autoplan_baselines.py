"""Table 3's ReAct K-shot baselines as options of the AutoPlan inference graph: ReAct's own
examples (envs/data/react, verbatim) in place of the plan, two per ALFWorld task type and six
for HotpotQA, checked in the prompts a scripted model was shown."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.base import EnvError
from graphs import autoplan
from introspect.cli import main
from introspect.training import train
from nodes.autoplan import few_shot
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import model_for
from tests.graphs.test_autoplan_kit import reply, step_replies, toy_alfworld  # noqa: F401 (fixture)

REACT = few_shot.DATA
QUESTION = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def react_file(name: str) -> dict[str, str]:
    return json.loads((REACT / name).read_text(encoding="utf-8"))


def prompts_of(spec: str) -> list[str]:
    return ["\n".join(str(m.content) for m in c["messages"]) for c in model_for(spec, 0.0, 512).calls]


async def run(spec: str, env: str, task: str, **overrides):
    context = AutoPlanContext(model=spec, env=env, **overrides)
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"baseline-{env}"}, "recursion_limit": autoplan.recursion_limit(context)}
    return await runner.ainvoke({"task_id": task}, config, context=context)


@pytest.mark.parametrize(
    ("task_type", "name"),
    [
        ("pick_and_place_simple", "put"),
        ("look_at_obj_in_light", "examine"),
        ("pick_clean_then_place_in_recep", "clean"),
        ("pick_heat_then_place_in_recep", "heat"),
        ("pick_cool_then_place_in_recep", "cool"),
        ("pick_two_obj_and_place", "puttwo"),
    ],
)
def test_two_alfworld_examples_per_task_type_from_the_file_autoplans_code_reads(task_type, name):
    shown = few_shot.examples_now("alfworld", "react", task_type)
    table = react_file("alfworld.json")  # AutoPlan's tasks/alfworld.py reads ReAct's prompts/alfworld.json
    first, second = table[f"react_{name}_1"], table[f"react_{name}_0"]
    assert shown == (first + second).replace("> ", "")  # ReAct's "> " marks dropped, as AutoPlan's code
    assert shown.count("Your task is to: ") == 2
    reacts = few_shot.examples_now("alfworld", "react_3prompts", task_type)
    table = react_file("alfworld_3prompts.json")  # as ReAct's own runner picks them
    assert reacts == (table[f"react_{name}_1"] + table[f"react_{name}_0"]).replace("> ", "")


async def test_alfworld_react_two_shot_shows_the_task_types_examples_and_acts_without_formalizer(
    toy_alfworld, write_script
):
    spec = write_script(
        [
            reply("Heat the egg."),
            reply("heat egg 1 with microwave 1"),
            reply("Put it down."),
            reply("put egg 1 in countertop 2"),
        ]
    )
    state = await run(spec, "alfworld", "heat/2", few_shot="react")
    assert state["success"] and [s["action"] for s in state["trajectory"]] == [
        "heat egg 1 with microwave 1",
        "put egg 1 in/on countertop 2",
    ]
    first = prompts_of(spec)[0]
    assert "Here are some examples.\nYou are in the middle of a room." in first
    assert "Your task is to: heat some egg and put it in diningtable." in first  # alfworld.json's react_heat_1
    assert "think: To solve the task, I need to find and take an egg" not in first  # alfworld_3prompts.json's
    assert "\n> " not in first and "Game Plan:" not in first
    assert first.rstrip().endswith("Show your thought about the next action.")
    assert "You job is to Heat some object and put it in/on some receptacle." in first
    assert not any("Formalized First Action:" in p for p in prompts_of(spec))  # the original's ReAct mode
    assert autoplan.result(state)["model_calls"] == 4


async def test_alfworld_examples_as_reacts_own_runner_picks_them(toy_alfworld, write_script):
    # the step cap ends the game after one action; the original code then asks one more thought
    spec = write_script([reply("Heat the egg."), reply("heat egg 1 with microwave 1"), reply("Put it down.")])
    await run(spec, "alfworld", "heat/2", few_shot="react_3prompts", max_actions=1)
    first = prompts_of(spec)[0]
    assert "Your task is to: put a hot apple in fridge." in first  # alfworld_3prompts.json's react_heat_1
    assert "think: To solve the task, I need to find and take an egg, then heat it with microwave" in first


async def test_hotpotqa_react_six_shot_shows_webthink_simple6(write_script):
    spec = write_script([*step_replies("Both are American.", "Finish[yes]", "finish[yes]")])
    state = await run(spec, "hotpotqa", QUESTION, few_shot="react", judge="off")
    assert state["success"]
    first = prompts_of(spec)[0]
    examples = react_file("prompts_naive.json")["webthink_simple6"]  # as read, its last newline too
    assert f"\n\nHere are some examples:\n{examples}\n\nQuestion: " in first  # tasks/hotpotqa.py's joins
    assert first.count("\nQuestion: ") == 7  # six examples, then this task's question
    assert first.rstrip().endswith(
        "Question: Were Scott Derrickson and Ed Wood of the same nationality?\nShow your thought about the next action."
    )
    assert any("Formalized First Action:" in p for p in prompts_of(spec))  # HotpotQA keeps the formalizer


async def test_a_baseline_with_a_plan_or_in_training_is_refused(toy_alfworld, write_script, tmp_path):
    spec = write_script([reply("x")])
    with pytest.raises(EnvError, match="in place of a plan"):
        await run(spec, "alfworld", "heat/2", few_shot="react", plan="1. heat it")
    with pytest.raises(EnvError, match="in place of a plan"):
        await train(
            autoplan.METHOD,
            AutoPlanContext(model=spec, env="alfworld", few_shot="react"),
            task_ids=["heat/1"],
            plan_out=tmp_path / "p.json",
            thread_id="t",
        )


def test_the_cli_refuses_a_baseline_with_a_plan_in_one_line(toy_alfworld, write_script, tmp_path, capsys):
    spec = write_script([reply("x")])
    plan = tmp_path / "plan.txt"
    plan.write_text("1. heat it\n")
    code = main(
        [
            "run",
            "autoplan",
            "--task",
            "heat/2",
            "--model",
            spec,
            "--plan",
            str(plan),
            "--set",
            "few_shot=react",
            "--checkpoint",
            "memory",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "few_shot=react runs ReAct's baseline" in err
