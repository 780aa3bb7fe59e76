"""Context.confirm: a graph pauses (a LangGraph interrupt) before an irreversible step and a
person's answer (Command(resume=...)) approves, edits or rejects it; a rejection reaches the
agent as a refused step with the reason, and it chooses again."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from envs.webarena.interface import INTERFACE as WEBARENA
from envs.webshop.interface import INTERFACE as WEBSHOP
from graphs import method_named
from nodes.autoplan.context import AutoPlanContext
from nodes.da.complete import delivered
from nodes.laser.context import LaserContext
from nodes.runtime.confirm import Verdict, read_answer
from nodes.runtime.context import Context
from tests.support.laser_demo import BUY_REPLIES
from tests.support.scenarios import NEW_PLAN, SCENARIOS

BUY = "click[Buy Now]"


def laser_again(tmp_path, count: int) -> str:
    """The LASER demo, then its last ``count`` replies once more."""
    replies = SCENARIOS["laser"].replies
    return replace(SCENARIOS["laser"], replies=replies + replies[-count:]).write_script(tmp_path / "laser.jsonl")


async def run_until_paused(graph: Any, graph_input: Any, config: dict, context: Context) -> list[Any]:
    async for _ in graph.astream(graph_input, config, context=context, stream_mode="updates"):
        pass
    return list((await graph.aget_state(config)).interrupts)


async def test_laser_pauses_before_buy_now_and_a_rejection_is_feedback(tmp_path):
    spec = laser_again(tmp_path, BUY_REPLIES)
    graph = method_named("laser").graph.copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": "confirm-laser"}}
    context = LaserContext(model=spec, env="webshop", confirm=True)
    asked = await run_until_paused(graph, {"task_id": "synthetic-0"}, config, context)
    assert len(asked) == 1 and asked[0].value["proposal"] == BUY and asked[0].value["kind"] == "action"
    assert "thus we should choose" in asked[0].value["rationale"]  # the rationale of the options chosen
    state = (await graph.aget_state(config)).values
    assert state["done"] is False and all(s["action"] != BUY for s in state["trajectory"])

    asked = await run_until_paused(
        graph, Command(resume={asked[0].id: {"decision": "reject", "reason": "too dear"}}), config, context
    )
    state = (await graph.aget_state(config)).values
    refused = [s for s in state["trajectory"] if s["action"] == BUY]
    assert len(refused) == 1 and refused[0]["valid"] is False and "too dear" in refused[0]["feedback"]
    assert "Feedback: A person rejected the action click[Buy Now]: too dear" in state["history"][-1]
    assert len(asked) == 1 and asked[0].value["proposal"] == BUY  # the agent chose again: Buy Now again

    assert (
        await run_until_paused(graph, Command(resume={"decision": "approve", "proposal": BUY}), config, context) == []
    )
    state = (await graph.aget_state(config)).values
    assert state["success"] is True and state["reward"] == 1.0 and state["trajectory"][-1]["action"] == BUY


async def test_without_confirm_nothing_pauses(tmp_path):
    spec = SCENARIOS["laser"].write_script(tmp_path / "laser.jsonl")
    graph = method_named("laser").graph.copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": "no-confirm"}}
    assert (
        await run_until_paused(graph, {"task_id": "synthetic-0"}, config, LaserContext(model=spec, env="webshop")) == []
    )
    assert (await graph.aget_state(config)).values["success"] is True


async def test_an_edit_carries_out_the_edited_action_and_an_unreadable_answer_asks_again(tmp_path):
    spec = laser_again(tmp_path, 2 + BUY_REPLIES)  # after the edit: open the item again, buy it again
    graph = method_named("laser").graph.copy(update={"checkpointer": InMemorySaver()})
    config = {"configurable": {"thread_id": "confirm-edit"}}
    context = LaserContext(model=spec, env="webshop", confirm=True)
    await run_until_paused(graph, {"task_id": "synthetic-0"}, config, context)
    asked = await run_until_paused(graph, Command(resume={"decision": "maybe"}), config, context)
    assert len(asked) == 1 and "expected" in asked[0].value["problem"] and asked[0].value["proposal"] == BUY
    asked = await run_until_paused(
        graph, Command(resume={"decision": "edit", "proposal": "click[< Prev]"}), config, context
    )
    state = (await graph.aget_state(config)).values
    actions = [s["action"] for s in state["trajectory"]]
    assert actions[-2:] == ["click[< Prev]", "click[B0743JKHBV]"] and BUY not in actions and not state["done"]
    assert len(asked) == 1 and asked[0].value["proposal"] == BUY


async def test_autoplan_training_asks_before_the_plan_update_and_rewrites_it_when_rejected(tmp_path):
    scenario = SCENARIOS["autoplan_training"]
    again = "Plan:\n1. Search each entity, then look up the key word.\n2. finish[answer]."
    replies = scenario.replies + [{"content": again}]
    spec = replace(scenario, replies=replies).write_script(tmp_path / "train.jsonl")
    training = method_named("autoplan").training
    graph = training.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "confirm-train"}}
    context = AutoPlanContext(model=spec, env="hotpotqa", confirm=True, **scenario.context)
    asked = await run_until_paused(graph, scenario.graph_input, config, context)
    assert len(asked) == 1 and asked[0].value["kind"] == "plan" and asked[0].value["proposal"] == NEW_PLAN
    asked = await run_until_paused(
        graph, Command(resume={"decision": "reject", "reason": "use lookup"}), config, context
    )
    second = again.removeprefix("Plan:\n")
    assert len(asked) == 1 and asked[0].value["proposal"] in (again, second)
    approve = {"decision": "approve", "proposal": asked[0].value["proposal"]}
    assert await run_until_paused(graph, Command(resume=approve), config, context) == []
    state = (await graph.aget_state(config)).values
    assert state["plans"] == ["", asked[0].value["proposal"]]
    assert state["usage"]["model_calls"] == 2 * 4 + 2  # two branches of 4 calls, then two plan updates


async def test_a_rejected_plan_update_moves_the_next_iterations_calls_by_its_extra_call(tmp_path):
    """Iteration 1's plan update is rejected once (two calls): iteration 2's collections,
    reflections and plan update read the script lines after both, not one line early."""
    scenario = SCENARIOS["autoplan_training"]
    rewritten = "1. Search each entity, then look up the key word.\n2. finish[answer]."
    second = ["Second thought.", "finish with no", "finish[no]", "Second summary.", "A flaw.", "A revision."]
    final = "1. Search both entities.\n2. Compare them, then finish[answer]."
    replies = [*scenario.replies, {"content": rewritten}, *({"content": c} for c in [*second, final])]
    spec = replace(scenario, replies=replies).write_script(tmp_path / "train.jsonl")
    graph = method_named("autoplan").training.build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "confirm-train-2"}}
    context = AutoPlanContext(model=spec, env="hotpotqa", confirm=True, **{**scenario.context, "iterations": 2})
    await run_until_paused(graph, scenario.graph_input, config, context)
    asked = await run_until_paused(graph, Command(resume={"decision": "reject", "reason": "lookup"}), config, context)
    assert asked[0].value["proposal"] == rewritten
    asked = await run_until_paused(graph, Command(resume={"decision": "approve"}), config, context)
    assert asked[0].value["proposal"] == final  # iteration 2's update: the script's last line
    assert await run_until_paused(graph, Command(resume={"decision": "approve"}), config, context) == []

    state = (await graph.aget_state(config)).values
    assert state["plans"] == ["", rewritten, final] and state["plan_calls"] == [2, 1]
    later = [e for e in state["experiences"] if e["iteration"] == 1]
    assert len(later) == 2 and all(
        [m["content"] for m in e["messages"] if m["role"] == "assistant"][:1] == ["Second thought."] for e in later
    )
    assert {r["summary"] for r in state["reflections"] if r["iteration"] == 1} == {"Second summary."}
    assert state["usage"]["model_calls"] == 2 * 4 + 2 + 2 * 6 + 1  # branches of 4, 2 updates; of 6 (flaw, revision), 1


def test_the_answer_recorded_is_the_one_delivered_as_a_person_may_have_edited_it():
    assert delivered(WEBARENA.answer_action or "", "stop [Gold frame]") == "Gold frame"
    assert delivered("finish[{answer}]", "finish[yes]") == "yes" and delivered("finish[{answer}]", "finish[]") == ""
    assert delivered(WEBARENA.answer_action or "", "click [5]") is None and delivered("stop [{answer}]", "stop") is None


def test_the_envs_declare_their_irreversible_actions():
    assert WEBSHOP.irreversible("click[Buy Now]", "") and WEBSHOP.irreversible("click[buy  now]", "")
    assert not WEBSHOP.irreversible("click[Next >]", "") and not WEBSHOP.irreversible("search[buy now]", "")
    screen = "\n".join(
        [
            "[3] searchbox 'Search entire store here...'",
            "[4] button 'Search'",
            "[45] textbox 'Order Number'",
            "[52] button 'Submit'",
            "[60] link 'Contact Us'",
        ]
    )
    assert WEBARENA.irreversible("stop [The message was sent.]", screen)
    assert WEBARENA.irreversible("click [52]", screen)
    assert WEBARENA.irreversible("type [45] [000000174]", screen)  # Enter is pressed: the form goes
    assert not WEBARENA.irreversible("type [45] [000000174] [0]", screen)
    assert not WEBARENA.irreversible("click [4]", screen) and not WEBARENA.irreversible("type [3] [pillows]", screen)
    assert not WEBARENA.irreversible("click [60]", screen) and not WEBARENA.irreversible("scroll [down]", screen)


@pytest.mark.parametrize(
    "answer,verdict",
    [
        ("approve", Verdict("A")),
        ({"decision": "approve", "proposal": "B"}, Verdict("B")),
        ({"decision": "edit", "proposal": " C "}, Verdict("C")),
        ({"decision": "reject", "reason": "no"}, Verdict(None, "no")),
        ({"decision": "reject"}, Verdict(None, "no reason given")),
    ],
)
def test_answers_are_read(answer, verdict):
    assert read_answer(answer, "A") == verdict


@pytest.mark.parametrize("answer", [None, 3, "later", {"decision": "edit"}, {"decision": "approve", "proposal": 5}])
def test_an_unreadable_answer_is_a_problem_not_a_verdict(answer):
    assert isinstance(read_answer(answer, "A"), str)
