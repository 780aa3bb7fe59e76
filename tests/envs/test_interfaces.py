"""Each env's agent-facing interface: what the agent is told (intro, grammar, element ids,
answer action), how its replies are read (parse_action accepts the grammar's forms and refuses
anything else with feedback), what identifies an element on a real screen, and the goal every
first observation carries."""

from __future__ import annotations

import re

import pytest

from envs import make_env
from envs.base import ENV_CLASSES, ActionParseError, Interface, env_class
from envs.sessions import SESSIONS
from tests.support.screens import MY_ORDERS

WEBARENA = env_class("webarena").interface
MINIWOB = env_class("miniwob").interface
WEBSHOP = env_class("webshop").interface
ALFWORLD = env_class("alfworld").interface
HOTPOTQA = env_class("hotpotqa").interface


@pytest.mark.parametrize("name", sorted(ENV_CLASSES))
def test_every_env_declares_its_interface(name):
    interface = env_class(name).interface
    assert isinstance(interface, Interface) and interface.kind in ("web", "text")
    assert interface.intro and interface.grammar.startswith("- ")
    assert interface.element_ids == (name in ("webarena", "miniwob"))
    assert interface.answer_action == {"webarena": "stop [{answer}]", "hotpotqa": "finish[{answer}]"}.get(name)
    assert interface.name == name  # what a method keeps prompt variants under


def test_only_webarena_has_a_note_taking_action():
    assert WEBARENA.noted("note_down [Order 174: Gold frame]") == "Order 174: Gold frame"
    assert WEBARENA.noted("click [12]") is None
    assert all(i.noted("note_down [x]") is None for i in (MINIWOB, WEBSHOP, ALFWORLD, HOTPOTQA))


def test_webarenas_grammar_is_the_appendixs_note_list():
    assert WEBARENA.grammar.splitlines() == [
        "- If the next action is to click, please indicate the element id in [] (format: click [element_id]).",
        "- If the next action is to scroll, please indicate the direction in [] (format: scroll [up or down]).",
        "- If you need to navigate to a URL, please indicate the URL in [] (format: goto [url]).",
        "- If you need to go back to the previous page, please use go_back.",
        "- If the next action is to type, please indicate both element id and the things to type in [] "
        "(format: type [element_id] [things to type]).",
        "- If you want to note down something, use this format: note_down [things to note down].",
    ]


READS = [
    (WEBARENA, "click [1254]", "click [1254]"),
    (WEBARENA, "The next action is: `click [ 42 ]` because it opens the order.", "click [42]"),
    (WEBARENA, "type [7] [picture frame]", "type [7] [picture frame]"),
    (WEBARENA, "type [7] [frame] [0]", "type [7] [frame] [0]"),
    (WEBARENA, "type [7] [size [8]] [press_enter_after=1]", "type [7] [size [8]] [1]"),
    (WEBARENA, "scroll [Down]", "scroll [down]"),
    (WEBARENA, "scroll [direction=up]", "scroll [up]"),
    (
        WEBARENA,
        "goto [http://127.0.0.1:7770/sales/order/history/]",
        "goto [http://127.0.0.1:7770/sales/order/history/]",
    ),
    (WEBARENA, "go_back", "go_back"),
    (WEBARENA, "I will go_forward now", "go_forward"),
    (WEBARENA, "note_down [Order 174 has the frame, color Gold]", "note_down [Order 174 has the frame, color Gold]"),
    (WEBARENA, "To click the link, the format is click [element_id]; so: click [18]", "click [18]"),
    (MINIWOB, "click id=6", "click id=6"),
    (MINIWOB, 'enter "Ashley" to id=10', 'enter "Ashley" to id=10'),
    (MINIWOB, "press arrowdown x 3", "press ArrowDown x 3"),
    (MINIWOB, "press CTRL+A", "press Control+a"),
    (MINIWOB, "hold CTRL", "hold Control"),
    (MINIWOB, "release ctrl", "release Control"),
    (WEBSHOP, "search[long sleeve activewear]", "search[long sleeve activewear]"),
    (WEBSHOP, "Action: Click[ Buy Now ]", "click[Buy Now]"),
    (WEBSHOP, "I pick click[B07HRFSNL4] then click[Buy Now]", "click[B07HRFSNL4]"),
    (ALFWORLD, "go to countertop 1", "go to countertop 1"),
    (ALFWORLD, "take Apple 1 from  CounterTop 2", "take apple 1 from countertop 2"),
    (ALFWORLD, "put apple 1 in fridge 1", "put apple 1 in/on fridge 1"),
    (ALFWORLD, "put apple 1 onto desk 1", "put apple 1 in/on desk 1"),
    (ALFWORLD, "heat apple 1 with microwave 1", "heat apple 1 with microwave 1"),
    (ALFWORLD, "look", "look"),
    (ALFWORLD, "inventory", "inventory"),
    (HOTPOTQA, "Search[Eiffel Tower]", "search[Eiffel Tower]"),
    (HOTPOTQA, "lookup[ height ]", "lookup[height]"),
    (HOTPOTQA, "finish[1889] then search[x]", "finish[1889]"),
]


@pytest.mark.parametrize(("interface", "reply", "action"), READS)
def test_parse_action_reads_the_grammars_forms(interface, reply, action):
    assert interface.parse_action(reply) == action


@pytest.mark.parametrize(("interface", "reply", "action"), READS)
def test_every_action_starts_with_one_of_the_interfaces_verbs(interface, reply, action):
    assert re.match(r"[a-z_]+", action).group() in interface.verbs


def test_only_miniwob_hides_disabled_ids():
    assert MINIWOB.without_elements("<button id=3>OK</button>\n<a id=31>x</a>", ["3"]) == (
        "<button>OK</button>\n<a id=31>x</a>"
    )
    assert WEBARENA.without_elements("[3] button 'OK'", ["3"]) == "[3] button 'OK'"  # no DisablesElements


@pytest.mark.parametrize(
    ("interface", "reply", "feedback"),
    [
        (WEBARENA, "", "click \\[element_id\\]"),
        (WEBARENA, "Let me look around.", "click \\[element_id\\]"),
        (WEBARENA, "click on My Orders", "click \\[element_id\\]"),
        (WEBARENA, "scroll [left]", "click \\[element_id\\]"),
        (WEBARENA, "stop [Gold]", "click \\[element_id\\]"),  # the answer goes out through answer_action
        (MINIWOB, "click the OK button", "click id=6"),
        (MINIWOB, "double-click id=4", "unknown action"),
        (MINIWOB, "press ARROWDOWN x 99", "between 1 and 50"),
        (WEBSHOP, "buy the pillow", "search\\[query\\] or click\\[button text\\]"),
        (WEBSHOP, "click[ ]", "search\\[query\\] or click\\[button text\\]"),
        (ALFWORLD, "walk to the fridge", "go to recep j"),
        (HOTPOTQA, "I am not sure", "finish\\[answer\\]"),
    ],
)
def test_parse_action_refuses_anything_else_with_feedback(interface, reply, feedback):
    with pytest.raises(ActionParseError, match=feedback):
        interface.parse_action(reply)


def test_element_actions_name_their_element_and_can_be_retargeted():
    assert WEBARENA.action_element("type [12] [yoga mat]") == "12"
    assert WEBARENA.action_element("scroll [down]") is None
    assert WEBARENA.with_element("type [12] [yoga mat] [1]", "40") == "type [40] [yoga mat] [1]"
    assert MINIWOB.action_element('enter "bob" to id=3') == "3" and MINIWOB.action_element("press Enter") is None
    assert MINIWOB.with_element("click id=3", "8") == "click id=8"
    assert WEBSHOP.action_element("click[Buy Now]") is None and WEBSHOP.with_element("click[x]", "2") == "click[x]"
    assert WEBSHOP.element_signature("any page", "1") is None


SCREEN = MY_ORDERS


def test_webarena_signatures_are_role_and_name_with_the_lines_above():
    assert WEBARENA.element_signature(SCREEN, "60")[-1] == 'link "Women\'s Lightweight Running Shoes"'
    assert WEBARENA.element_signature(SCREEN, "4") == ("RootWebArea 'My Orders'",)  # properties left out
    # two identical links tell apart by the cells above them
    assert WEBARENA.element_signature(SCREEN, "268") != WEBARENA.element_signature(SCREEN, "275")
    assert WEBARENA.element_signature(SCREEN, "999") is None


def test_first_observations_carry_the_goal_offline_envs():
    """WebShop, ALFWorld and HotpotQA: info["goal"] is the task the agent is given."""
    import asyncio

    async def first(name: str, task: str):
        env = make_env(name)
        try:
            return await env.reset(task)
        finally:
            await env.close()

    shop = asyncio.run(first("webshop", "synthetic-0"))
    assert shop.info["goal"] == shop.info["instruction"] and shop.info["goal"].startswith("Find me")
    game = asyncio.run(first("alfworld", make_env("alfworld").task_ids("valid_unseen")[0]))
    assert game.info["goal"] and f"Your task is to: {game.info['goal']}" in game.text
    qa_env = make_env("hotpotqa")
    question = asyncio.run(first("hotpotqa", qa_env.task_ids()[0]))
    assert question.text == f"Question: {question.info['goal']}"


@pytest.mark.browser
async def test_browser_envs_give_goal_intro_and_element_signatures_on_real_screens():
    miniwob, _, _ = await SESSIONS.start("interface-miniwob", "miniwob", {}, "click-button/1")
    try:
        obs = await miniwob.observe()
        assert obs.info["goal"].startswith("Click on the")
        button = next(i for i in obs.info["ids"] if f"<button id={i} " in obs.text)
        signature = MINIWOB.element_signature(obs.text, button)
        assert signature and all("id=" not in line and "pos=" not in line for line in signature)
        assert MINIWOB.element_signature(obs.text, "9999") is None
    finally:
        await SESSIONS.release("interface-miniwob")
    webarena, first, _ = await SESSIONS.start("interface-webarena", "webarena", {}, "shop-0")
    try:
        assert first.info["goal"] == first.info["intent"]
        assert first.info["intro"].startswith(
            "An online shopping site (One Stop Market, served locally by the project): http"
        )
        eid = next(line.split("]")[0].strip("\t[") for line in first.text.splitlines() if "] link '" in line)
        assert WEBARENA.element_signature(first.text, eid)[-1].startswith("link '")
    finally:
        await SESSIONS.release("interface-webarena")
