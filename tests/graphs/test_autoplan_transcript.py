"""The whole chat AutoPlan writes for a real ALFWorld game and a real HotpotQA question, turn by
turn: by default as AutoPlan's original code sends it (ALFWorld's state summary, free-form
actions, no last observation, one more thought at ALFWorld's step cap) and, with
``transcript="paper"``, as the paper has H_t (the objective in P_j, o_0 the game's first
observation, formalized actions, the last observation closing the experience; HotpotQA's
"Observation:\\n...")."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs import make_env
from graphs import autoplan
from introspect.cli import main
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.llm import model_for
from tests.graphs.test_autoplan_kit import reply, step_replies
from tests.graphs.test_autoplan_real_envs import HEAT_GAME, QUESTION

pytestmark = pytest.mark.slow

PLAN = "1. find the apple\n2. heat it"
THINK = (
    "Identify which step of plan you are at. Show your thought about the one next action. "
    "Your thought should be faithful to the plan step."
)
SCENE = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 6, a cabinet 5, a cabinet 4, "
    "a cabinet 3, a cabinet 2, a cabinet 1, a coffeemachine 1, a countertop 3, a countertop 2, a countertop 1, "
    "a drawer 3, a drawer 2, a drawer 1, a fridge 1, a garbagecan 1, a microwave 1, a shelf 3, a shelf 2, "
    "a shelf 1, a sinkbasin 1, a stoveburner 4, a stoveburner 3, a stoveburner 2, a stoveburner 1, "
    "and a toaster 1."
)
STATE = (
    "You arrive at the middle of a room.\n"
    "You have not been to cabinet 1, cabinet 2, cabinet 3, cabinet 4, cabinet 5, cabinet 6, coffeemachine 1, "
    "countertop 1, countertop 2, countertop 3, drawer 1, drawer 2, drawer 3, fridge 1, garbagecan 1, "
    "microwave 1, shelf 1, shelf 2, shelf 3, sinkbasin 1, stoveburner 1, stoveburner 2, stoveburner 3, "
    "stoveburner 4, toaster 1.\n"
    "You are taking nothing with you."
)
ALFWORLD_STEPS = [  # (thought, free-form action, formalizer reply) and the game's answer
    (
        "Find the apple.",
        "grab the apple 1 off countertop 1",
        "take apple 1 from countertop 1",
        "Action failed. System Message: You are not at countertop 1. ",  # the original's words, its space too
    ),
    (
        "Go there first.",
        "walk to countertop 1",
        "go to countertop 1",
        "On the countertop 1, you see a apple 1, a cellphone 1, a creditcard 1, and a tomato 1.",
    ),
    (
        "Take it.",
        "pick up the apple 1",
        "take apple 1 from countertop 1",
        "You pick up the apple 1 from the countertop 1.",
    ),
]


async def play(spec: str, env: str, task: str, **overrides) -> dict:
    runner = autoplan.build_graph(checkpointer=InMemorySaver())
    context = AutoPlanContext(model=spec, env=env, **overrides)
    config = {"configurable": {"thread_id": f"chat-{env}"}, "recursion_limit": autoplan.recursion_limit(context)}
    return await runner.ainvoke({"task_id": task}, config, context=context)


def turns(state: dict) -> list[tuple[str, str]]:
    return [(t["role"], t["content"]) for t in state["experiences"][0]["messages"]]


def alfworld_script(write_script, *extra: str) -> str:
    return write_script([r for s in ALFWORLD_STEPS for r in step_replies(*s[:3])] + [reply(e) for e in extra])


async def test_alfworld_chat_as_the_paper_writes_it(write_script):
    spec = alfworld_script(write_script)
    state = await play(spec, "alfworld", HEAT_GAME, plan=PLAN, max_actions=3, transcript="paper")
    chat = turns(state)
    opening = chat[0][1]
    assert "Valid Actions on the objects and receptacles are as follows:" in opening
    assert opening.endswith(
        f"\n\nGame Plan:\n{PLAN}\n\nGame Starts:\n"
        f"Game Objective: heat some apple and put it in garbagecan.\n{SCENE}\n{THINK}"
    )
    (thought, _, command, seen), rest = ALFWORLD_STEPS[0], ALFWORLD_STEPS[1:]
    expected = [("assistant", thought), ("user", "Action:"), ("assistant", command)]
    for thought, _, command, answer in rest:
        expected += [
            ("user", f"Observation: {seen}\n{THINK}"),
            ("assistant", thought),
            ("user", "Action:"),
            ("assistant", command),
        ]
        seen = answer
    expected.append(("user", f"Observation: {seen}"))  # H_T ends with o_T
    assert chat[1:] == expected


async def test_alfworld_chat_as_the_original_code_sends_it_by_default(write_script):
    spec = alfworld_script(write_script, "Now heat it.")
    state = await play(spec, "alfworld", HEAT_GAME, plan=PLAN, max_actions=3)
    chat = turns(state)
    assert chat[0][1].endswith(
        f"\n\nGame Starts:\nGame Objective: heat some apple and put it in garbagecan.\n{STATE}\n{THINK}"
    )
    (thought, action, _, seen), rest = ALFWORLD_STEPS[0], ALFWORLD_STEPS[1:]
    expected = [("assistant", thought), ("user", "Action:"), ("assistant", action)]  # the free-form a'_t
    for thought, action, _, answer in rest:
        expected += [
            ("user", f"Observation: {seen}\n{THINK}"),
            ("assistant", thought),
            ("user", "Action:"),
            ("assistant", action),
        ]
        seen = answer
    # at the step cap the original asks one more thought, and sends no observation after it
    expected += [("user", f"Observation: {seen}\n{THINK}"), ("assistant", "Now heat it.")]
    assert chat[1:] == expected
    assert [s["action"] for s in state["trajectory"]] == [s[2] for s in ALFWORLD_STEPS]  # the env got a_t


def test_the_cli_refuses_an_unknown_transcript_in_one_line(write_script, capsys):
    code = main(
        [
            "run",
            "autoplan",
            "--task",
            HEAT_GAME,
            "--model",
            alfworld_script(write_script),
            "--set",
            "transcript=raw",
            "--checkpoint",
            "memory",
        ]
    )
    err = capsys.readouterr().err
    # refused by the Context's own check of its choices, before anything runs
    assert code == 2 and err.count("\n") == 1
    assert "transcript='raw' is not allowed: expected one of paper, original" in err


async def page_of(entity: str) -> str:
    env = make_env("hotpotqa", backend="local")
    await env.reset(QUESTION)
    return (await env.step(f"search[{entity}]")).observation.text


QA_STEPS = [
    step_replies("Find Scott Derrickson.", "search Scott Derrickson", "search[Scott Derrickson]"),
    step_replies("Hmm.", "not sure", "I am not sure"),
    step_replies("Both are American.", "finish with yes", "finish[yes]"),
]


async def test_hotpotqa_chat_as_the_paper_writes_it(write_script):
    spec = write_script([r for s in QA_STEPS for r in s])
    state = await play(spec, "hotpotqa", QUESTION, transcript="paper", judge="off", env_options={"backend": "local"})
    think = "Show your thought about the next action."
    page = await page_of("Scott Derrickson")
    assert turns(state) == [
        ("user", model_for(spec, 0.0, 512).calls[0]["messages"][-1].content),
        ("assistant", "Find Scott Derrickson."),
        ("user", "Action:"),
        ("assistant", "search[Scott Derrickson]"),
        ("user", f"Observation:\n{page}\n{think}"),  # the original's "Observation:\n"
        ("assistant", "Hmm."),
        ("user", "Action:"),
        ("assistant", "I am not sure"),
        ("user", f"Observation:\nInvalid action: I am not sure\n{think}"),  # ReAct's feedback (paper A.3)
        ("assistant", "Both are American."),
        ("user", "Action:"),
        ("assistant", "finish[yes]"),
        ("user", "Observation:\nEpisode finished, reward = 1"),
    ]
    assert turns(state)[0][1].endswith(
        "(3) finish[answer]: return the answer and finish the task.\n\n"
        f"Question: Were Scott Derrickson and Ed Wood of the same nationality?\n{think}"
    )


async def test_hotpotqa_chat_as_the_original_code_sends_it_by_default(write_script):
    spec = write_script([r for s in QA_STEPS for r in s])
    state = await play(spec, "hotpotqa", QUESTION, judge="off", env_options={"backend": "local"})
    chat = turns(state)
    think = "Show your thought about the next action."
    assert chat[7:] == [
        ("assistant", "I am not sure"),
        ("user", f"No action in the format of 'search[...]', 'lookup[...]', or 'finish[...]'.\n{think}"),
        ("assistant", "Both are American."),
        ("user", "Action:"),
        ("assistant", "finish[yes]"),
    ]  # the formalized action stays in HotpotQA's chat; nothing follows finish[...]
    assert chat[4] == ("user", f"Observation:\n{await page_of('Scott Derrickson')}\n{think}")
    assert state["success"]


async def test_a_hotpotqa_search_miss_reads_as_autoplans_code_words_it(write_script):
    spec = write_script([*step_replies("Search it.", "search Zzyzx Qwv", "search[Zzyzx Qwv]")])
    state = await play(spec, "hotpotqa", QUESTION, judge="off", max_actions=1, env_options={"backend": "local"})
    seen = str(state)  # the last observation is not in the chat (the code's transcript): the state has it
    assert 'Could not find exact match of "Zzyzx Qwv". Available entities in the database: ' in seen
    assert "Similar: [" not in seen  # not ReAct's wording
