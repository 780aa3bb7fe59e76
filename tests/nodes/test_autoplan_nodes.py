"""AutoPlan's node helpers: the formalizer's parsing, seeded batches, positions of parallel
branches, plan cleaning and the per-env prompt lookup."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

import prompts
from envs.base import env_class
from nodes.autoplan import prompting, transcript
from nodes.autoplan.batch import batch_tasks, branch_session, of_iteration, phase_starts, sample_batch
from nodes.autoplan.collect import normalize_command
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.plan import clean_plan


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("Formalized First Action: take mug 2 from shelf 1", "take mug 2 from shelf 1"),
        ("put Apple 1 on  CounterTop 2.", "put apple 1 in/on countertop 2"),
        ("put apple 1 in fridge 1\ngo to desk 1", "put apple 1 in/on fridge 1"),
        ('"go to cabinet 3"', "go to cabinet 3"),
        ("put apple 1 in/on fridge 1", "put apple 1 in/on fridge 1"),
        ("", ""),
    ],
)
def test_alfworld_formalizer_replies_become_commands(reply, command):
    assert normalize_command(reply, env_class("alfworld").interface) == command


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("Search[Eiffel Tower]", "search[Eiffel Tower]"),
        ("Formalized First Action: lookup[ height ]", "lookup[height]"),
        ("finish[1889] then search[x]", "finish[1889]"),
        ("I am not sure", "I am not sure"),  # left for the env to refuse with feedback
    ],
)
def test_hotpotqa_formalizer_replies_become_commands(reply, command):
    assert normalize_command(reply, env_class("hotpotqa").interface) == command


@pytest.mark.parametrize(
    ("env", "reply", "command"),
    [
        ("webarena", "Formalized First Action: click [12]", "click [12]"),
        ("webarena", "STOP [ 3 ]", "stop [3]"),  # the answer action, which the agent grammar leaves out
        ("webarena", "the answer is 3", "the answer is 3"),  # left for the env to refuse
        ("webshop", "Click[Buy Now].", "click[Buy Now]"),
        ("webshop", "Buy It", "Buy It"),  # as written: only ALFWorld's interface lower-cases text
        ("miniwob", 'enter "Ann" to id=4', 'enter "Ann" to id=4'),
        ("alfworld", "Think: The Apple", "think: the apple"),  # ALFWorld's as_written
    ],
)
def test_formalizer_replies_on_every_env_become_its_commands(env, reply, command):
    assert normalize_command(reply, env_class(env).interface) == command


def test_batches_walk_the_pool_without_replacement_in_a_seeded_shuffle():
    pool = [f"t{i}" for i in range(10)]
    first_epoch = [batch_tasks(pool, 4, 7, i, shuffle=True) for i in range(3)]
    assert [len(b) for b in first_epoch] == [4, 4, 2]  # the last batch is short, as a DataLoader's
    assert sorted(t for b in first_epoch for t in b) == sorted(pool)  # every task once per epoch
    second_epoch = [batch_tasks(pool, 4, 7, i, shuffle=True) for i in range(3, 6)]
    assert sorted(t for b in second_epoch for t in b) == sorted(pool)
    assert first_epoch != second_epoch  # each epoch walks its own permutation
    # seeded: a resume draws the same
    assert batch_tasks(pool, 4, 7, 1, shuffle=True) == batch_tasks(pool, 4, 7, 1, shuffle=True)
    assert batch_tasks(pool, 4, 7, 0, shuffle=True) != batch_tasks(pool, 4, 8, 0, shuffle=True)
    assert sorted(batch_tasks(["a", "b"], 4, 0, 5, shuffle=True)) == ["a", "b"]  # B larger than the pool: all of it


def test_batches_walk_the_pool_in_its_listed_order_as_the_original_code():
    pool = [f"t{i}" for i in range(10)]
    walk = [batch_tasks(pool, 4, 0, i, shuffle=False) for i in range(6)]
    assert walk == [pool[:4], pool[4:8], pool[8:]] * 2  # every epoch the same order (shuffle=False)
    assert batch_tasks(["a", "b"], 4, 0, 5, shuffle=False) == ["a", "b"]


async def test_training_batches_follow_the_listed_pool_by_default_and_shuffle_as_an_option():
    pool = [f"t{i}" for i in range(6)]
    config = {"configurable": {"thread_id": "t"}}

    async def batches(**settings) -> list[list[str]]:
        runtime = Runtime(context=AutoPlanContext(batch_size=2, seed=3, **settings))
        drawn = [await sample_batch({"task_ids": pool, "plans": [""] * (i + 1)}, runtime, config) for i in range(3)]
        return [[item["task_id"] for item in out["batch"]] for out in drawn]

    assert await batches() == [pool[:2], pool[2:4], pool[4:]]  # the original code's shuffle=False
    assert await batches(shuffle_pool=True) == [batch_tasks(pool, 2, 3, i, shuffle=True) for i in range(3)]
    assert await batches(shuffle_pool=True) != await batches()


def test_branch_sessions_differ_per_iteration_and_task():
    keys = {branch_session("t", i, task) for i in (0, 1) for task in ("a", "b")}
    assert len(keys) == 4 and "t/1/b" in keys


def test_positions_derive_from_the_counters_of_the_records_and_records_sort_by_index():
    experiences = [
        {"iteration": 0, "index": 1, "usage": {"model_calls": 9}},  # counters from 0
        {"iteration": 0, "index": 0, "usage": {"model_calls": 6}},
        {"iteration": 1, "index": 0, "usage": {"model_calls": 15}},
    ]  # from 12: 3 calls
    reflections = [
        {"iteration": 0, "index": 0, "usage": {"model_calls": 2}},  # own calls
        {"iteration": 0, "index": 1, "usage": {"model_calls": 1}},
    ]
    assert [r["index"] for r in of_iteration(experiences, 0)] == [0, 1]
    state = {"experiences": experiences, "reflections": reflections, "plans": ["", "p", "q"]}
    # iteration 0: collections from 0, reflections from the longest (9), the update after theirs (11)
    assert phase_starts(state, 0) == (0, 9, 11)
    assert phase_starts(state, 1) == (12, 15, 15)  # the next iteration starts after the update's call
    assert phase_starts({"plans": [""]}, 0) == (0, 0, 0)


def test_step_caps_are_the_papers():
    assert AutoPlanContext(env="alfworld").steps() == 35
    assert AutoPlanContext(env="hotpotqa").steps() == 10
    assert AutoPlanContext(env="hotpotqa", max_actions=4).steps() == 4
    assert AutoPlanContext(env="alfworld", max_actions={"hotpotqa": 4}).steps() == 35


def test_clean_plan_drops_an_echoed_header():
    assert clean_plan("New Game Plan:\n1. go to fridge 1") == "1. go to fridge 1"
    assert clean_plan("**New Task Plan:**\n1. search[x]") == "1. search[x]"
    assert clean_plan("1. keep me") == "1. keep me"


def test_with_user_merges_into_a_trailing_user_turn():
    turns = [{"role": "assistant", "content": "a"}, {"role": "user", "content": "Observation: x"}]
    merged = prompting.with_user(turns, "Job failed.")
    assert merged[-1] == {"role": "user", "content": "Observation: x\nJob failed."}
    assert turns[-1]["content"] == "Observation: x"  # the input is not modified
    assert prompting.with_user(turns[:1], "Action:")[-1] == {"role": "user", "content": "Action:"}


def test_prompts_are_looked_up_per_env_then_shared():
    assert prompting.prompt_name("alfworld", "flaw") == "autoplan/alfworld/flaw"
    assert prompting.prompt_name("hotpotqa", "thought") == "autoplan/thought"
    assert prompting.system_prompt("hotpotqa") is None
    assert "game rule may differ" in prompting.system_prompt("alfworld")
    assert prompting.prompt_name("webshop", "flaw") == "autoplan/flaw"  # the generic variant
    assert prompting.system_prompt("webshop") is None
    for env in ("alfworld", "hotpotqa", "webshop"):
        for name in (
            "instance",
            "description",
            "plan_section",
            "formalize",
            "summary",
            "flaw",
            "experience",
            "update",
            "thought",
            "thought_no_plan",
            "action",
            "revision",
        ):
            assert prompts.load(prompting.prompt_name(env, name))


def test_table_2_wording():
    assert prompts.load("autoplan/thought").startswith("Identify which step of plan you are at.")
    assert prompts.load("autoplan/revision") == (
        "Suggest revision to the current flawed part of the plan. Only the flawed part."
    )
    assert "The system message in observation is always correct" in prompts.load("autoplan/alfworld/flaw_paper")
    assert "Pay attention to summary of successful jobs" in prompts.load("autoplan/alfworld/update_request_paper")
    assert prompting.outcome("alfworld", False, "max_actions") == "Job failed. Maximum number of steps reached."
    assert prompting.outcome("hotpotqa", True, "done", 'The gold answer is "x".').endswith('"x".')


def test_prompts_the_paper_shows_only_as_images_are_the_original_codes():
    # Figures 6 and 8 (formalizer, HotpotQA's plan update) are images: the words are the original's
    alfworld = prompts.load("autoplan/alfworld/formalize")
    assert (
        "Action: I want to take laptop 1 from desk 2 and go to the drawer 1 and open drawer 1.\n"
        "Formalized First Action: take laptop 1 from desk 2" in alfworld
    )
    assert 'real names and indices, e.g. "apple 1" and "desk 1".' in alfworld
    hotpotqa = prompts.load("autoplan/hotpotqa/formalize")
    assert hotpotqa.count("Formalized First Action:") == 3  # two examples, then the action
    assert 'Action: look up the word "desk".\nFormalized First Action: lookup[desk]' in hotpotqa
    assert prompts.load("autoplan/hotpotqa/update_request").endswith(
        "rewrite the current task plan. The plan should not be specific to one job but generalizable to all jobs. "
    )
    assert "Valid Actions on the objects" in prompts.load("autoplan/alfworld/description")
    block = prompting.experience_block(
        "alfworld", 0, {"objective": "heat some egg and put it in fridge."}, {"summary": "S", "flaw": "F"}
    )
    assert block.startswith("Job 0:\nYou job is to heat some egg and put it in fridge\nResult of Job 0:\nFailed\n")


def test_observations_as_each_transcript_shows_them():
    look = "You are facing the countertop 1. Next to it, you see nothing."
    assert transcript.observation_turn("alfworld", look, "look", "paper") == f"Observation: {look}"
    assert transcript.observation_turn("alfworld", look, "look", "original") == (
        "Observation: You are facing the countertop 1."
    )  # the original's process_ob
    assert transcript.observation_turn("hotpotqa", "Invalid action: x", "x", "paper") == (
        "Observation:\nInvalid action: x"
    )
    assert transcript.observation_turn("hotpotqa", "Invalid action: x", "x", "original") == (
        "No action in the format of 'search[...]', 'lookup[...]', or 'finish[...]'."
    )
    assert transcript.observation_turn("hotpotqa", "No more results.", "lookup[x]", "original") == (
        "Observation:\nNo more results."
    )
