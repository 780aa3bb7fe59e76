"""AutoPlan with scripted models on the real environments: an ALFWorld game (TextWorld-PDDL
engine, shipped json_2.1.1 games) won from free-form actions through the formalizer, with
the original code's refusals in the prompts; a training iteration on two real games in parallel; and
HotpotQA on the local corpus, where the training reflection sees the gold answer."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs import make_env
from graphs import autoplan
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import model_for
from tests.graphs.test_autoplan_kit import reply, step_replies
from tests.support.openai_stub import Reply

pytestmark = pytest.mark.slow

UNSEEN = "json_2.1.1/valid_unseen/"
HEAT_GAME = UNSEEN + "pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
HEAT_WIN = [  # the env tests' known-correct sequence for this game
    "go to countertop 1",
    "take apple 1 from countertop 1",
    "go to microwave 1",
    "open microwave 1",
    "heat apple 1 with microwave 1",
    "go to garbagecan 1",
    "put apple 1 in/on garbagecan 1",
]
QUESTION = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def prompts_of(spec: str, temperature: float) -> list[str]:
    return ["\n".join(str(m.content) for m in c["messages"]) for c in model_for(spec, temperature, 512).calls]


def sloppy(command: str) -> str:
    """What a formalizer might answer: a label, capitals, "in" for "in/on", a full stop."""
    return "Formalized First Action: " + command.replace(" in/on ", " in ").capitalize() + "."


async def run(spec: str, env: str, task: str, thread: str, **overrides):
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    context = AutoPlanContext(model=spec, env=env, **overrides)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": autoplan.recursion_limit(context)}
    return await runner.ainvoke({"task_id": task}, config, context=context)


async def test_alfworld_game_won_from_free_form_actions(write_script):
    refused = step_replies(
        "Take the apple first.", "grab the apple 1 off countertop 1", "take apple 1 from countertop 1"
    )
    steps = [step_replies(f"Next: {c}.", f"I want to {c} now", sloppy(c)) for c in HEAT_WIN]
    spec = write_script(refused + [r for s in steps for r in s])
    plan = "1. find the object\n2. heat it"
    state = await run(spec, "alfworld", HEAT_GAME, "real-alf", plan=plan, command_reading="normalized")
    assert state["success"] and state["reward"] == 1.0 and state["stop_reason"] == "done"
    assert [s["action"] for s in state["trajectory"]] == ["take apple 1 from countertop 1", *HEAT_WIN]
    assert state["trajectory"][0]["valid"] is False
    second_thought = prompts_of(spec, 0.0)[3]
    # the original code's refusal, shown as the original shows a refused command (its trailing space too)
    assert "Observation: Action failed. System Message: You are not at countertop 1. \n" in second_thought
    first = prompts_of(spec, 0.0)[0]
    # o_0 is the original code's state summary of the game's first observation
    assert (
        "Game Objective: heat some apple and put it in garbagecan.\nYou arrive at the middle of a room.\n"
        "You have not been to cabinet 1, cabinet 2, "
    ) in first
    # the task description ends with the job of the game's task type, as the original's
    assert "(9) cool object i with recep j\nYou job is to Heat some object and put it in/on some receptacle." in first
    assert first.startswith("You are an excellent game player.")  # ALFWorld's system prompt
    assert state["goal"] == "heat some apple and put it in garbagecan."


async def test_alfworld_reads_the_formalizer_reply_as_the_original_code(write_script):
    script = [
        *step_replies("Go.", "go to countertop 1", "Formalized First Action: Go to countertop 1."),
        *step_replies("Again.", "go to countertop 1", "Go to countertop 1"),
        *step_replies("Put it.", "put the apple on the countertop", "put apple 1 on countertop 1"),
        reply("Done."),  # the thought the original asks at the step cap
    ]
    spec = write_script(script)
    state = await run(spec, "alfworld", HEAT_GAME, "read-original", max_actions=3)
    # lower case and the put-in/on rewrite, nothing else: the label and the full stop reach the game
    assert [(s["action"], s["valid"]) for s in state["trajectory"]] == [
        ("formalized first action: go to countertop 1.", False),
        ("go to countertop 1", True),
        ("put apple 1 in/on countertop 1", False),
    ]
    assert state["trajectory"][0]["feedback"] == 'The action should be in the form of "go to receptacle i".'
    formalizer = prompts_of(spec, 0.0)[2]
    assert formalizer.endswith("Action: go to countertop 1\nFormalized First Action:\n")  # the code's last newline
    spec = write_script(script)
    state = await run(spec, "alfworld", HEAT_GAME, "read-normalized", max_actions=3, command_reading="normalized")
    assert [s["action"] for s in state["trajectory"]][:2] == ["go to countertop 1", "go to countertop 1"]


async def test_alfworld_restarts_the_episode_after_look_as_the_original(write_script):
    script = [
        *step_replies("Look first.", "look around", "look"),
        *step_replies("Start over.", "go to countertop 1", "go to countertop 1"),
        *step_replies("Now the microwave.", "go to microwave 1", "go to microwave 1"),
        reply("Closed."),  # the thought the original asks at the step cap
    ]
    spec = write_script(script)
    state = await run(spec, "alfworld", HEAT_GAME, "restart", max_actions=2)
    assert state["restarts"] == 1 and state["actions"] == 2 and state["stop_reason"] == "max_actions"
    assert [s["action"] for s in state["trajectory"]] == ["look", "go to countertop 1", "go to microwave 1"]
    prompts = prompts_of(spec, 0.0)
    # the game from its start and a fresh chat: the second opening is the first one again
    assert prompts[3] == prompts[0] and "look around" not in prompts[4]
    assert state["messages"][0]["content"] == prompts[0].split("\n", 1)[1]  # after the system prompt
    spec = write_script(script)
    state = await run(spec, "alfworld", HEAT_GAME, "no-restart", max_actions=2, max_restarts=0)
    assert state["stop_reason"] == "max_restarts" and not state.get("restarts") and not state["success"]
    spec = write_script(script)
    state = await run(spec, "alfworld", HEAT_GAME, "continue", max_actions=2, after_look="continue")
    assert [s["action"] for s in state["trajectory"]] == ["look", "go to countertop 1"]
    assert "look around" in prompts_of(spec, 0.0)[4]  # the chat goes on
    assert "restarts" not in state


async def test_alfworld_react_baseline_sends_think_to_the_game_as_the_original(write_script):
    # the step cap ends the game after one action; the original code then asks one more thought
    spec = write_script([reply("Find the apple."), reply("think: I need the apple first."), reply("Go.")])
    await run(spec, "alfworld", HEAT_GAME, "real-think", few_shot="react", max_actions=1)
    last = prompts_of(spec, 0.0)[-1]
    assert last.endswith(
        "Observation: Action failed. System Message: Invalid action format. Check the game description for the "
        "right formats.\nShow your thought about the next action."
    )
    spec = write_script([reply("Find the apple."), reply("think: I need the apple first."), reply("Go.")])
    ok = {"react_think": True}  # ReAct's runner's "OK."
    await run(spec, "alfworld", HEAT_GAME, "real-think-ok", few_shot="react", max_actions=1, env_options=ok)
    assert prompts_of(spec, 0.0)[-1].endswith("Observation: OK.\nShow your thought about the next action.")


# Two real games stepped concurrently (textworld's shared parser is guarded by the env's lock).
async def test_alfworld_training_iteration_on_two_real_games(write_script):
    games = make_env("alfworld").task_ids("valid_unseen:heat")[:2]
    script = [
        *step_replies("Look around.", "look", "look"),
        *step_replies("Check hands.", "inventory", "inventory"),
        reply("Nothing in hand."),  # the thought the original code asks at the step cap
        reply("S"),
        reply("F"),
        reply("1. go to the object\n2. heat it with microwave 1"),
    ]  # no plan: no Rev
    spec = write_script(script)
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    context = AutoPlanContext(
        model=spec,
        env="alfworld",
        batch_size=2,
        iterations=1,
        max_actions=2,
        after_look="continue",
        reflect_model="run",
    )
    state = await runner.ainvoke(
        {"task_ids": games}, {"configurable": {"thread_id": "real-train"}, "recursion_limit": 100}, context=context
    )
    assert sorted(e["task_id"] for e in state["experiences"]) == sorted(games)
    assert all(e["stop_reason"] == "max_actions" and e["steps"] == 2 for e in state["experiences"])
    assert state["plans"] == ["", "1. go to the object\n2. heat it with microwave 1"]
    assert [(r["flaw"], r["revision"]) for r in state["reflections"]] == [("F", "")] * 2
    update = prompts_of(spec, 0.0)[-1]
    assert "You job is to Heat some object and put it in/on some receptacle." in update
    for experience in state["experiences"]:
        assert experience["objective"].startswith("heat some ")
        assert f"You job is to {experience['objective'].rstrip('.')}\n" in update  # the original's words


async def test_hotpotqa_question_answered_through_the_formalizer(write_script):
    spec = write_script(
        [
            *step_replies(
                "Find Scott Derrickson's nationality.", "Search for Scott Derrickson", "search[Scott Derrickson]"
            ),
            *step_replies("Now Ed Wood.", "search Ed Wood", "Formalized First Action: Search[Ed Wood]"),
            *step_replies("Both are American.", "finish with yes", "finish[yes]"),
        ]
    )
    state = await run(spec, "hotpotqa", QUESTION, "real-qa", judge="off", env_options={"backend": "local"})
    assert state["success"] and state["reward"] == 1.0 and state["actions"] == 3
    assert [s["action"] for s in state["trajectory"]] == ["search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"]
    first = prompts_of(spec, 0.0)[0]
    assert first.startswith("Solve a question answering task")  # no system prompt for HotpotQA
    assert "Question: Were Scott Derrickson and Ed Wood of the same nationality?" in first
    assert "Scott Derrickson" in prompts_of(spec, 0.0)[3]  # the page text came back as an observation


async def test_hotpotqa_training_reflection_sees_the_gold_answer(write_script):
    env = make_env("hotpotqa")
    other = env.task_ids()[4]  # gold: "Greenwich Village, New York City"
    spec = write_script(
        [
            *step_replies("Answer.", "finish yes", "finish[yes]"),
            reply("S"),
            reply("New Task Plan:\n1. search each entity"),
        ]
    )
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    context = AutoPlanContext(model=spec, env="hotpotqa", batch_size=2, iterations=1, judge="off")
    state = await runner.ainvoke(
        {"task_ids": [QUESTION, other]},
        {"configurable": {"thread_id": "qa-train"}, "recursion_limit": 100},
        context=context,
    )
    assert {e["task_id"]: e["success"] for e in state["experiences"]} == {QUESTION: True, other: False}
    summaries = [p for p in prompts_of(spec, 0.0) if "Summarize the interaction history concisely." in p]
    assert any(
        'Task finished. The ground truth answer is "yes" and the correct entities to search are '
        '"Scott Derrickson" and "Ed Wood".' in p
        for p in summaries
    )
    assert any('The ground truth answer is "Greenwich Village, New York City"' in p for p in summaries)
    # HotpotQA's Flaw prompt asks about the plan only: without a plan neither it nor Rev is asked
    assert not any("Identify all flawed parts" in p for p in prompts_of(spec, 0.0))
    update = prompts_of(spec, 0.0)[-1]
    assert "Summary of Job 1:\nS" in update and "Flaws of Plan" not in update
    assert state["plans"][-1] == "1. search each entity"


async def test_alfworld_reflection_and_plan_update_ask_the_codes_model_whatever_the_acting_model(
    write_script, openai_stub
):
    """AutoPlan's ALFWorld code asks summary, flaw and plan update of gpt-4-0314 (reflect_model's
    default, "code"): the acting calls go to the run's model (a script here), those three to the
    OpenAI-compatible stub, named gpt-4-0314."""
    game = make_env("alfworld").task_ids("valid_unseen:heat")[:1]
    acting = write_script([*step_replies("Look around.", "look", "look"), reply("Nothing in hand.")])
    openai_stub.replies.extend([Reply(content="S"), Reply(content="F"), Reply(content="1. find it\n2. heat it")])
    runner = autoplan.build_training_graph(checkpointer=InMemorySaver())
    context = AutoPlanContext(
        model=acting, env="alfworld", batch_size=1, iterations=1, max_actions=1, after_look="continue"
    )
    state = await runner.ainvoke(
        {"task_ids": game}, {"configurable": {"thread_id": "reflect-model"}, "recursion_limit": 100}, context=context
    )
    assert [request["model"] for request in openai_stub.requests] == ["gpt-4-0314"] * 3
    assert state["plans"] == ["", "1. find it\n2. heat it"]
    assert [(r["summary"], r["flaw"]) for r in state["reflections"]] == [("S", "F")]
