"""ALFWorld env on the shipped games: real wins, the original's and Table 6's feedback, snapshot/restore, data dirs.

Loading a game takes a few seconds, so the tests share one env where they can.
"""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from envs import EnvError, UnknownTaskError, make_env
from envs.alfworld.env import react_text
from envs.alfworld.games import SHIPPED_ROOT

UNSEEN = "json_2.1.1/valid_unseen/"
HEAT_GAME = UNSEEN + "pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"

# One game per task type with a command sequence derived from its traj_data.json plan
# (high_pddl: go to the object, pick it up, [appliance], go to the target, put it down).
WINNING = {
    UNSEEN + "pick_and_place_simple-Pencil-None-Shelf-308/trial_T20190908_122024_052056": [
        "go to desk 1",
        "take pencil 1 from desk 1",
        "go to shelf 1",
        "put pencil 1 in/on shelf 1",
    ],
    UNSEEN + "look_at_obj_in_light-AlarmClock-None-DeskLamp-308/trial_T20190908_222933_607649": [
        "go to desk 2",
        "take alarmclock 1 from desk 2",
        "go to shelf 3",
        "use desklamp 1",
    ],
    UNSEEN + "pick_clean_then_place_in_recep-Bowl-None-Cabinet-10/trial_T20190909_061130_844814": [
        "go to countertop 3",
        "take bowl 1 from countertop 3",
        "go to sinkbasin 1",
        "clean bowl 1 with sinkbasin 1",
        "go to cabinet 1",
        "put bowl 1 in/on cabinet 1",
    ],
    HEAT_GAME: [
        "go to countertop 1",
        "take apple 1 from countertop 1",
        "go to microwave 1",
        "open microwave 1",
        "heat apple 1 with microwave 1",
        "go to garbagecan 1",
        "put apple 1 in/on garbagecan 1",
    ],
    UNSEEN + "pick_cool_then_place_in_recep-Lettuce-None-CounterTop-10/trial_T20190909_174807_646433": [
        "go to countertop 3",
        "take lettuce 2 from countertop 3",
        "go to fridge 1",
        "open fridge 1",
        "cool lettuce 2 with fridge 1",
        "go to countertop 1",
        "put lettuce 2 in/on countertop 1",
    ],
    UNSEEN + "pick_two_obj_and_place-KeyChain-None-Safe-219/trial_T20190909_012027_782483": [
        "go to dresser 1",
        "take keychain 1 from dresser 1",
        "go to safe 1",
        "open safe 1",
        "put keychain 1 in/on safe 1",
        "go to dresser 1",
        "take keychain 2 from dresser 1",
        "go to safe 1",
        "put keychain 2 in/on safe 1",
    ],
}


@pytest.fixture(scope="module")
async def env():
    shared = make_env("alfworld")
    yield shared
    await shared.close()


def test_task_ids_by_split_and_type():
    env = make_env("alfworld")
    assert len(env.task_ids()) == 42
    assert len(env.task_ids("valid_unseen")) == 30
    heat = env.task_ids("valid_unseen:heat")
    assert len(heat) == 5 and all("/pick_heat_then_place_in_recep-" in t for t in heat)
    assert len(env.task_ids("heat")) == 7  # a bare type name: both splits
    assert len(env.task_ids("valid_train:pick,examine")) == 4
    assert env.task_ids(":puttwo") == env.task_ids("pick_two_obj_and_place")
    assert len(make_env("alfworld", task_types=["cool"]).task_ids("valid_unseen")) == 5
    with pytest.raises(EnvError):
        env.task_ids("valid_unseen:juggle")
    with pytest.raises(EnvError):
        env.task_ids("test_seen")


async def test_unknown_task_is_a_user_error(env):
    with pytest.raises(UnknownTaskError):
        await env.reset("json_2.1.1/valid_unseen/no-such-game/trial_1")


@pytest.mark.parametrize("task_id", list(WINNING), ids=[t.split("/")[2].split("-")[0] for t in WINNING])
async def test_known_sequence_wins_each_task_type(env, task_id):
    obs = await env.reset(task_id)
    assert obs.text.startswith("You are in the middle of a room.")
    assert "Welcome to TextWorld" not in obs.text
    assert obs.text.splitlines()[-1] == "Your task is to: " + obs.info["goal"]
    commands = WINNING[task_id]
    info = obs.info
    for i, command in enumerate(commands):
        assert command in info["admissible_commands"]
        result = await env.step(command)
        info = result.info
        assert result.valid is True
        assert result.done == (i == len(commands) - 1)
    assert result.reward == 1.0 and result.success is True and result.info["won"] is True
    after = await env.step("look")
    assert after.done and after.valid is False and after.success is True  # the episode was won
    assert {"valid", "feedback", "success"}.isdisjoint(result.info)


ORIGINAL_CASES = [  # (command, error, the original code's system message: tasks/alfworld.py error_msg)
    ("take apple 1 from countertop 1", "wrong_location", "You are not at countertop 1. "),
    ("take apple from countertop 1", "missing_index", "The index of apple is missing. For example, apple 0."),
    ("take apple 1 from countertop 9", "invalid_receptacle", "You cannot take apple 1 from countertop 9. "),
    ("go to countertop 9", "invalid_receptacle", "countertop 9 is not a valid receptacle in this household. "),
    ("Go to countertop 1.", "wrong_form", 'The action should be in the form of "go to receptacle i". '),
    ("go to countertop 1", None, None),
    ("go to countertop 1", "already_there", "You are already at countertop 1. "),
    ("take apple 9 from countertop 1", "not_there", "apple 9 is not in countertop 1. "),
    ("put apple 1 in/on countertop 1", "not_in_inventory", "You are not carrying apple 1. "),
    (
        "put apple 1 in/on countertop 9",
        "invalid_receptacle",
        "You cannot put apple 1 in/on countertop 9. You are not carrying apple 1. ",  # both, in the original's order
    ),
    ("put apple in/on countertop 1", "missing_index", "The index of apple is missing. For example, apple 0."),
    ("take apple 1 from countertop 1", None, None),
    ("take tomato 1 from countertop 1", "inventory_limit", "You cannot hold more than one object. "),
    ("heat apple 1 with microwave 9", "invalid_receptacle", "You cannot heat apple 1 with microwave 9. "),
    ("cool apple 1 with fridge 9", "invalid_receptacle", "You cannot cool apple 1 with fridge 9. "),
    ("clean apple with sinkbasin 1", "missing_index", "The index of apple is missing. For example, apple 0."),
    ("heat apple 1 with microwave 1", "wrong_location", "You are not at microwave 1. "),  # where, then what
    ("go to fridge 1", None, "The fridge 1 is closed."),
    ("put apple 1 in/on fridge 1", "closed_receptacle", "fridge 1 is closed. "),
    ("clean apple 1 with fridge 1", "invalid_cleaning_appliance", "fridge cannot be used for cleaning. "),
    ("close fridge 1", "already_closed", "fridge 1 is already closed. "),
    ("open countertop 1", "wrong_location", "You are not at countertop 1. "),
    (
        "use fridge 1",
        "not_usable",
        ' In this game you cannot apply "use" action to fridge 1. '
        'You can use "cool" action to cool object with fridge. ',
    ),
    ("fly to the moon", "unknown_command", "Invalid action format. Check the game description for the right formats."),
]


async def test_refusals_are_the_original_codes_by_default(env):
    before = (await env.reset(HEAT_GAME)).info["admissible_commands"]
    for action, error, text in ORIGINAL_CASES:
        result = await env.step(action)
        if error is None:
            assert result.valid is True and result.feedback == "", action
            assert text is None or result.observation.text == text, action
        else:
            assert (result.valid, result.info["error"]) == (False, error), action
            # the original's observation: "Action failed. " and its system message, trailing spaces kept
            assert result.observation.text == "Action failed. System Message: " + text, action
            assert result.feedback == text.strip()
            assert result.info["admissible_commands"] == before  # a refused command changes nothing
        before = result.info["admissible_commands"]


async def test_the_original_places_the_agent_at_its_last_go_to_target(env):
    # countertop 1 and coffeemachine 1 stand at one place of this game; AutoPlan's code believes the
    # agent is at the receptacle it last went to, and its refusals say so
    await env.reset(HEAT_GAME)
    middle = await env.step("use microwave 1")
    assert middle.feedback == "microwave 1 is not in/on your current location middle of a room."
    assert (await env.step("go to countertop 1")).valid
    cases = [
        ("use microwave 1", "microwave 1 is not in/on your current location countertop 1. "),
        ("use coffeemachine 1", "coffeemachine 1 is not in/on your current location countertop 1. "),
        ("open coffeemachine 1", "You are not at coffeemachine 1. "),
        ("take mug 1 from coffeemachine 1", "You are not at coffeemachine 1. "),
        ("  use countertop 1", 'The action should be in the form of "use receptacle i". '),  # read as sent
    ]
    for action, text in cases:
        result = await env.step(action)
        assert result.observation.text == "Action failed. System Message: " + text, action
    assert (await env.step(" go to stoveburner 3 ")).valid  # the game strips a command, as textworld does
    used = await env.step("use stoveburner 1")  # stoveburners 1 and 3 share a place too
    assert used.feedback == "stoveburner 1 is not in/on your current location stoveburner 3."
    snap = await env.snapshot()
    fresh = make_env("alfworld")
    assert (await fresh.restore(snap)).text == used.observation.text  # replayed as sent
    await fresh.close()


async def test_think_goes_to_the_game_as_autoplans_code_sends_it():
    env = make_env("alfworld", react_think=False)
    await env.reset(HEAT_GAME)
    thought = await env.step("think: where is the apple?")
    assert thought.valid is False and thought.info["steps"] == 1
    assert thought.observation.text == (
        "Action failed. System Message: Invalid action format. Check the game description for the right formats."
    )
    # the original picks its check by the first verb the text contains anywhere
    put = await env.step("think: I will put it down")
    assert put.feedback == 'The action should be in the form of "put object i in/on receptacle j" .'
    await env.close()
    with pytest.raises(EnvError, match="feedback_wording"):
        make_env("alfworld", feedback_wording="paper")


async def test_every_table_6_feedback_case():
    env = make_env("alfworld", feedback_wording="table6")
    obs = await env.reset(HEAT_GAME)
    assert obs.info["goal"] == "heat some apple and put it in garbagecan."
    cases = [
        ("take apple 1 from countertop 1", "wrong_location", "You are not at countertop 1."),
        ("Go to countertop 1.", "wrong_form", 'Use the form "go to countertop 1".'),
        (
            "go to countertop 1",
            None,
            "On the countertop 1, you see a apple 1, a cellphone 1, a creditcard 1, and a tomato 1.",
        ),
        ("take apple from countertop 1", "missing_index", "You miss the index of apple, e.g., apple 1."),
        (
            "take apple 1 from countertop 9",
            "invalid_receptacle",
            "countertop 9 is not a valid action in this household.",
        ),
        ("take apple 9 from countertop 1", "not_there", "There is no apple 9 in/on countertop 1."),  # an object
        ("put apple 1 in/on countertop 1", "not_in_inventory", "You are not carrying apple 1."),
        ("put apple 9 in/on countertop 1", "not_in_inventory", "You are not carrying apple 9."),
        ("take apple 1 from countertop 1", None, "You pick up the apple 1 from the countertop 1."),
        ("take tomato 1 from countertop 1", "inventory_limit", "You cannot hold more than one object."),
        ("heat apple 1 with toaster 1", "invalid_heating_appliance", "toaster cannot be used for heating."),
        ("cool apple 1 with microwave 1", "invalid_cooling_appliance", "microwave cannot be used for cooling."),
        ("clean apple 1 with fridge 1", "invalid_cleaning_appliance", "fridge cannot be used for cleaning."),
        ("go to fridge 1", None, "The fridge 1 is closed."),
        ("put apple 1 in/on fridge 1", "closed_receptacle", "fridge 1 is closed."),
        ("open fridge 1", None, None),
        ("put apple 1 in fridge 1", "wrong_form", 'Use the form "put apple 1 in/on fridge 1".'),
        # "use" on an appliance: the original's sentence and the command that does the job
        (
            "use fridge 1",
            "not_usable",
            'In this game you cannot apply "use" action to fridge 1. You can use "cool" action to cool object '
            "with fridge.",
        ),
        ("go to microwave 1", None, None),
        (
            "use microwave 1",
            "not_usable",
            'In this game you cannot apply "use" action to microwave 1. You can use "heat" action to heat object '
            "with microwave.",
        ),
        ("use countertop 1", "not_usable", 'In this game you cannot apply "use" action to countertop 1.'),
    ]
    before = obs.info["admissible_commands"]
    for action, error, text in cases:
        result = await env.step(action)
        if error is None:
            assert result.valid is True and result.feedback == "", action
            assert text is None or result.observation.text == text, action
        else:
            assert result.valid is False and result.info["error"] == error, action
            assert result.info["raw"] == "Nothing happens."
            # the original's observation of a refused command, which the Flaw prompt refers to
            assert result.observation.text == "Action failed. System Message: " + result.feedback
            assert text is None or result.feedback == text, action
            assert result.info["admissible_commands"] == before  # a refused command changes nothing
        before = result.info["admissible_commands"]
    assert result.info["steps"] == len(cases) and not result.done
    await env.close()
    # importing alfworld sets ALFWORLD_DATA to its empty cache dir; the shipped games still count
    assert len(make_env("alfworld").task_ids()) == 42


async def test_snapshot_restores_state_on_fresh_and_used_instances(env):
    await env.reset(HEAT_GAME)
    for action in ["go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1"]:
        last = await env.step(action)
    snap = await env.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    fresh = make_env("alfworld")
    restored = await fresh.restore(snap)
    assert restored.text == last.observation.text
    assert restored.info["admissible_commands"] == last.info["admissible_commands"]
    assert restored.info["steps"] == 4
    assert "open microwave 1" in restored.info["admissible_commands"]
    a, b = await env.step("open microwave 1"), await fresh.step("open microwave 1")
    assert a.observation.text == b.observation.text and a.info["admissible_commands"] == b.info["admissible_commands"]
    await fresh.close()
    back = await env.restore(snap)  # the used instance goes back to before "open microwave 1"
    assert back.info["admissible_commands"] == last.info["admissible_commands"]


async def test_alfworld_data_dir_from_environment(tmp_path, monkeypatch):
    source = SHIPPED_ROOT / HEAT_GAME
    target = tmp_path / "json_2.1.1" / "valid_seen" / "pick_heat_then_place_in_recep-Apple-None-GarbageCan-10" / "t1"
    target.mkdir(parents=True)
    for item in source.iterdir():  # the full ALFWorld download is not compressed
        if item.name == "game.tw-pddl.gz":
            (target / "game.tw-pddl").write_bytes(gzip.decompress(item.read_bytes()))
        else:
            shutil.copy(item, target / item.name)
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path))
    env = make_env("alfworld", max_steps=3, augmented_feedback=False)
    task = "json_2.1.1/valid_seen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/t1"
    assert env.task_ids() == [task] and env.task_ids("valid_seen:heat") == [task]
    obs = await env.reset(task + "/game.tw-pddl")
    assert obs.info["task_id"] == task
    refused = await env.step("fly to the moon")
    assert refused.observation.text == "Nothing happens."  # plain ALFWorld text
    assert refused.valid is False and refused.info["error"] == "unknown_command"
    assert not (await env.step("go to countertop 1")).done
    last = await env.step("think: the apple is here")
    assert last.observation.text == "OK."
    assert last.done and last.reward == 0.0 and last.success is False
    assert last.info["stop_reason"] == "max_steps"
    await env.close()


def test_react_text_format():
    raw = "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in a room.\n\nYour task is to: cool a mug."
    assert react_text(raw) == "You are in a room.\nYour task is to: cool a mug."
    assert react_text("You arrive at loc 7. The fridge 1 is closed.") == "The fridge 1 is closed."


async def test_a_cancelled_step_keeps_the_engine_until_its_thread_ends():
    """A budget stop cancels a task mid-step; its worker thread runs on. Closing the env must
    wait for that thread: freeing the engine under a running step crashes fast-downward's C
    library (here, ``closed`` would come before ``stepped``)."""
    import asyncio
    import time

    env = make_env("alfworld")
    first = await env.reset(HEAT_GAME)
    command = first.info["admissible_commands"][0]
    events: list[str] = []
    engine_step, drop_engine = env._engine_step, env._drop_engine

    def slow_step(text):
        events.append("stepping")
        time.sleep(0.5)
        try:
            return engine_step(text)
        finally:
            events.append("stepped")

    def recorded_drop():
        events.append("closed")
        drop_engine()

    env._engine_step, env._drop_engine = slow_step, recorded_drop
    task = asyncio.create_task(env.step(command))
    while not events:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await env.close()
    assert events == ["stepping", "stepped", "closed"]
