# ruff: noqa: E501 - prompt_library.py's strings below are copied as the original writes them, one line each
"""LASER as the original laser_agent.py runs it (the code produced the published numbers):
behaviours the paper does not describe, each checked against a scripted run on WebShop."""

from __future__ import annotations

import pytest

from nodes.laser.customise import parse_types
from nodes.laser.observe import detail_text
from nodes.laser.space import Page
from nodes.laser.webshop import named_parameters
from nodes.runtime.llm import model_for
from tests.graphs.laser_scripts import buy, call, goal_with_options, options_step, run, think


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


def user_text(call_record) -> str:
    return str(call_record["messages"][1].content)


async def test_an_item_examined_before_is_asked_again_across_searches(shop_goal, write_script):
    """laser_agent.py: "items that have been clicked before do not match the user instruction, so
    the next action should be select a different item that have not been clicked before"."""
    task_id, goal, ids = shop_goal
    other = next(i for i in ids if i != goal["asin"])
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("this one"),
        call("select_item", item_id=other),
        think("no"),
        call("Prev"),
        think("back to search"),
        call("Back_to_Search"),
        think("search again"),
        call("Search", keywords=goal["name"]),
        think("that one again"),
        call("select_item", item_id=other),  # examined in the first search: asked again
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "reselect")
    calls = model_for(spec, 0.0, 512).calls
    again = user_text(calls[12])
    assert again.endswith(
        "Next action rationale: items that have been clicked before do not match the user instruction, "
        "so the next action should be select a different item that have not been clicked before."
    )
    assert [b["asin"] for b in state["buffer"]] == [other]  # never opened twice
    assert state["success"] is True


async def test_the_backup_check_waits_for_the_item_state_to_judge_a_13th_select(shop_goal, write_script):
    """laser_agent.py:319 checks ``counter < max_iter`` at the top of its loop only: an item selected
    as the 13th transition is judged by the item state, which may buy it (here with max_actions=4,
    so the mark is 2)."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("the goal"),
        call("select_item", item_id=goal["asin"]),  # transition 2: the mark
        think("it matches"),
        *buy(goal),
    ]
    nodes, state = await run(write_script(script), task_id, "loop-top", max_actions=4)
    assert "backup" not in nodes and nodes[-3:] == ["item", "execute", "finish"]
    assert state["success"] is True and state["backup_used"] is False


async def test_each_transition_checks_the_backup_mark_after_a_select(shop_goal, write_script):
    """backup_check=each_transition: the select that reaches the mark starts the backup strategy."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("the goal"),
        call("select_item", item_id=goal["asin"]),
        think("the best"),
        call("select_item", item_id=goal["asin"]),
        *options_step(goal),
    ]
    nodes, state = await run(
        write_script(script), task_id, "each-transition", max_actions=4, backup_check="each_transition"
    )
    assert nodes[-4:] == ["results", "execute", "backup", "finish"]
    assert state["backup_used"] is True


# prompt_library.py's prompts, copied (the specification): the frames, and each state's setup
# [role, helps users, scene, layout, stage]; laser_agent.py's buy stage and backup stage.
INDIV = "You are an intelligent %s assistant that can help users %s. You are given an observation of the current %s, in the following format: \n\nCurrent observation:\n%s \n\nEvery button in the observation represents a possible action you can take. Based on the current observation, your task is to generate a rationale about the next action you should take. %s\n"
MAPPING = "You are a intelligent %s assistant that can help users %s. You are given an observation of the current environment and a rationale for the next action to be taken, in the following format:\n\nCurrent observation:\n%s\n\nNext action rationale: {the rationale for the next action}\n\nYour task is to perform one of the function calls based on the rationale.\n"
CUSTOM = "You are an intelligent shopping assistant that can help users find the right item. You are given an observation of the current item, in the following format: \n\nCurrent observation:\nInstruction:\n{User Instruction}\n[button] Back to Search [button_]\n[button] < Prev [button_]\n{Customization type1}:\n  [button] {choice1} [button_]\n  [button] {choice2} [button_]\n{Customization type2}:\n  [button] {choice1} [button_]\n  [button] {choice2} [button_]\n{Item name and details}\n[button] Description [button_]\n[button] Features [button_]\n[button] Reviews [button_]\n[button] Buy Now [button_]\n\nYour task is to extract the customization types available for this item. You should extract the type names instead of the specific choices, and separate each type name with a comma. If there is no customization availble, say 'None'. Say nothing extra.\n"
SEARCH_SETUP = [
    "shopping",
    "find the right item",
    "web navigation session",
    "WebShop\nInstruction: \n{the user instruction}\n[button] Search [button_] (generate a search query based on the user instruction and select this button to find relevant items)",
    "Note that if an history of past rationales and actions is provided, you should also consider the history when generating the rationale.",
]
SELECT_SETUP = [
    "shopping",
    "find the right item",
    "web navigation session",
    "Instruction: \n{the user instruction}\n[button] Back to Search [button_] (select this button to go back to the search page)\nPage {current page number} (Total results: {total number of results})\n[button] Next > [button_] (select this button to go to the next page of results)\n[button] {item_id 1} [button_] (select this button to view item 1's details)\n{name of item 1}\n{price of item 1}\n[button] {item_id 2} [button_] (select this button to view item 2's details)\n{name of item 2}\n{price of item 2}\n[button] {item_id 3} [button_] (select this button to view item 3's details)\n{name of item 3}\n{price of item 3}\n{More items...}",
    "At this stage, you want to select an item that might match the user instruction. Note that even if an item has non-matching details with the user instruction, it might offer different customization options to allow you to match. E.g. an item may have color x in its name, but you can customize it to color y later, the customization options are shown after you select the item. Thus if an item name seems relevant or partially matches the instruction, you should select that item to check its details. If an item has been selected before (the button has been clicked), you should not select the same item again. In other words, do not select an item with [clicked button] item_id [clicked button_]. Prepare your response in the following format:\nRationale: the user wanted {keywords of the target item}, and we have found {matching keywords of item x}, thus item {item_id x} seems to be a match.",
]
VERIFY_SETUP = [
    "shopping",
    "find the right item",
    "web navigation session",
    'Instruction:\n{User Instruction}\n[button] Back to Search [button_] (select this button to go back to the search page)\n[button] < Prev [button_] (select this button to go back to the previous page of results)\n{Customization type1}:\n  [button] {option1} [button_] \n  [button] {option2} [button_]\n{Customization type2}:\n  [button] {option1} [button_]\n  [button] {option2} [button_]\n{more customization options... (if any)}\n{Item name and details}\n[button] Description [button_] (select this button to view the full description of the item)\n[button] Features [button_] (select this button to view the full features of the item)\n[button] Reviews [button_] (select this button to view the full reviews of the item)\n[button] Buy Now [button_] (select this button to buy the item)\n\ndescription: (if this is shown, the description button should not be selected again)\n{full description of the item (if any) or "None"}\n\nfeatures: (if this is shown, the features button should not be selected again)\n{full features of the item (if any) or "None"}\n\nreviews: (if this is shown, the reviews button should not be selected again)\n{full reviews of the item (if any) or "None"}\n\nTarget item details (what the user is looking for):\nkeywords: {keywords of the target item}\nmax_price: {the price of the item should not exceed this}',
    'At this stage, you want to verify if the item matches the user instruction. You should consider the available customization options when deciding whether an item matches the user instruction. If an item can be customized to match the user instruction, or if the customization options cover the user specification, it is also a good match. If the item does not match the user instruction and it does not provide enough customization options, you can go to previous page to view other items. You can also check the item\'s description, features and reviews to view more details (Note that description, features and reviews could be "None", do not check them again if they are already given). Prepare your response in the following format:\nRationale: the user wanted {keywords of the target item}, and they required the following customization options: {cutomization of the target item}, the item is {keywords of the item in the current observation}, and it has the following customization options: {options available for the current item}, which {cover}/{not cover the user requirement}, thus we should {buy the item}/{check more details}/{go to previous page to view other items}',
]
BUY_STAGE = "At this stage, you have found the correct item. You task is to generate the correct customization options of the current item to best match the user instruction. Prepare your response in the following format:\nRationale: the user wanted {keywords of the target item}, and they required the following customization options: {cutomization of the target item}, the current item has the following customization options: {options available for the current item}, thus we should choose {the correct customization options}"
BACKUP_STAGE = "At this stage, you should identify one of the items on the current page that best matches the user instruction. If none of the items match the user instruction, identify the item that is the closest match to the user instruction."


def state_prompt(setup: list[str]) -> str:
    return INDIV % tuple(setup)


def action_prompt(setup: list[str]) -> str:
    return MAPPING % (setup[0], setup[1], setup[3])


async def test_prompts_are_the_originals_and_buy_now_has_its_customisation_step(shop_goal, write_script):
    """Every call as laser_agent.py makes it: the state's rationale prompt and Table 7's with the
    state's layout, "Current observation:", rationale calls of at most 200 tokens stopping at a
    blank line; Buy_Now without arguments, then the types, the values' rationale, Buy_Now forced."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"], max_price="1000000"),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("it matches"),
        call("Buy_Now"),
        {"content": "Customization types: " + ", ".join(goal["goal_options"])},
        think("choose the goal's options\n\nthis paragraph is cut by the stop"),
        call("Buy_Now", **goal["goal_options"]),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "original-prompts")
    calls = model_for(spec, 0.0, 512).calls
    systems = [str(c["messages"][0].content) for c in calls]
    users = [str(c["messages"][1].content) for c in calls]
    buy_setup = [*VERIFY_SETUP[:4], BUY_STAGE]
    assert systems == [
        state_prompt(SEARCH_SETUP),
        action_prompt(SEARCH_SETUP),
        state_prompt(SELECT_SETUP),
        action_prompt(SELECT_SETUP),
        state_prompt(VERIFY_SETUP),
        action_prompt(VERIFY_SETUP),
        CUSTOM,
        state_prompt(buy_setup),
        action_prompt(buy_setup),
    ]
    assert users[0].startswith("Current observation:\nWebShop\nInstruction: \n")
    for rationale_call, action_call in ((0, 1), (2, 3), (4, 5), (7, 8)):
        why = users[action_call].split("\n\nNext action rationale: ")[1]
        assert users[action_call] == f"{users[rationale_call]}\n\nNext action rationale: {why}"
    item = users[4]
    assert users[6] == users[7] == item and item.startswith("Current observation:\nInstruction:")
    assert users[8].endswith("Next action rationale: choose the goal's options")  # cut at the blank line
    for text_call in (0, 2, 4, 6, 7):
        assert calls[text_call]["max_tokens"] == 200 and calls[text_call]["stop"] == ["\n\n"]
    assert calls[5]["tools"] == ["Description", "Reviews", "Features", "Buy_Now", "Prev"]  # laser_agent.py's order
    assert calls[8]["tools"] == ["Buy_Now"]
    assert [s["action"] for s in state["trajectory"]][2:] == [
        *[f"click[{value}]" for value in goal["goal_options"].values()],
        "click[Buy Now]",
    ]
    assert state["success"] is True and state["transitions"] == 3


def test_the_customisation_types_are_parsed_as_the_original_parses_them():
    assert parse_types("Customization types: size, color") == ["size", "color"]
    assert parse_types("size,  Color ") == ["size", "Color"]
    assert parse_types("None") == [] and parse_types("types: none") == []


def test_the_forced_buy_now_takes_one_required_value_per_type_named():
    page = Page(options={"size": ["S", "M"], "color": ["red"]})
    schema = named_parameters(["size", "style"], page)
    assert schema["required"] == ["size", "style"]
    assert schema["properties"]["size"] == {"type": "string", "description": "The size of the item", "enum": ["S", "M"]}
    assert schema["properties"]["style"] == {"type": "string", "description": "The style of the item"}


async def test_in_buy_now_asks_the_options_in_the_buy_now_call(shop_goal, write_script):
    """customise=in_buy_now: one call, a value per customisation type of the item."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        call("Buy_Now", **goal["goal_options"]),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "in-buy-now", customise="in_buy_now")
    assert len(model_for(spec, 0.0, 512).calls) == 6 and state["success"] is True


def wandering(goal: dict, other: str) -> list[dict]:
    """Search, examine ``other``, back to search; search, next page, back to search; search."""
    return [
        think("search"),
        call("Search", keywords=goal["name"], max_price="1000000"),
        think("this one"),
        call("select_item", item_id=other),
        think("no"),
        call("Prev"),
        think("back"),
        call("Back_to_Search"),
        think("again"),
        call("Search", keywords=goal["name"]),
        think("next"),
        call("Next"),
        think("back once more"),
        call("Back_to_Search"),
        think("third"),
        call("Search", keywords=goal["name"]),
    ]


async def test_the_history_is_shown_in_the_search_state_after_backtracking_then_reset(shop_goal, write_script):
    """laser_agent.py's history: the calls since it was last shown, under "History:" after the
    search page, in both calls of the search state; no other state shows it."""
    task_id, goal, ids = shop_goal
    other = next(i for i in ids if i != goal["asin"])
    spec = write_script(wandering(goal, other))
    await run(spec, task_id, "history", max_actions=8, backup=False)
    users = [str(c["messages"][1].content) for c in model_for(spec, 0.0, 512).calls]
    first = (
        "\nHistory:\n"
        f"Rationale0: search\nAction0: Search(keywords='{goal['name']}', max_price='1000000')\n"
        f"Rationale1: this one\nAction1: select_item({other})\n"
        "Rationale2: no\nAction2: previous_page()\n"
        "Rationale3: back\nAction3: back_to_search()"
    )
    assert users[8].startswith("Current observation:\nWebShop\n") and users[8].endswith(first)
    assert users[9].startswith(users[8] + "\n\nNext action rationale: ")
    assert users[14].endswith(
        f"\nHistory:\nRationale0: again\nAction0: Search(keywords='{goal['name']}')\n"
        "Rationale1: next\nAction1: next_page()\nRationale2: back once more\nAction2: back_to_search()"
    )
    assert not any("History" in users[i] for i in (0, 2, 4, 6, 10, 12))


async def test_every_step_shows_the_whole_history_in_every_rationale_prompt(shop_goal, write_script):
    """history_shown=every_step: the paper's wording (Tables 4-6)."""
    task_id, goal, ids = shop_goal
    other = next(i for i in ids if i != goal["asin"])
    spec = write_script(wandering(goal, other))
    _, state = await run(spec, task_id, "every-step", max_actions=8, backup=False, history_shown="every_step")
    users = [str(c["messages"][1].content) for c in model_for(spec, 0.0, 512).calls]
    assert users[0].endswith("\n\nHistory of past rationales and actions:\nNone")
    assert users[4].endswith("History of past rationales and actions:\n" + "\n".join(state["history"][:2]))
    assert "History" not in users[5]  # the action call shows the page


def enums_of(call_record) -> list[list[str]]:
    """The enums of every argument of the functions a call (of the state's log) offered."""
    return [
        prop["enum"]
        for tool in call_record["request"].get("tools") or []
        for prop in tool["function"]["parameters"]["properties"].values()
        if "enum" in prop
    ]


async def test_item_ids_are_free_strings_sent_to_the_env_as_the_original_sends_them(shop_goal, write_script):
    """laser_agent.py's ``click_item`` takes any string and clicks it; WebShop ignores a click it
    cannot make. The graph offers no enum and sends the id: the model is not asked again."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("pick"),
        call("select_item", item_id="B000NOTHERE"),
        think("pick again"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "free-id")
    calls = model_for(spec, 0.0, 512).calls
    assert calls[3]["tools"] == ["select_item", "Next", "Back_to_Search"]
    assert not any(enums_of(c) for c in state["calls"])
    sent = [(s["action"], s["valid"]) for s in state["trajectory"]]
    assert sent[1] == ("click[B000NOTHERE]", False) and sent[2] == (f"click[{goal['asin']}]", True)
    assert len(calls) == len(script) and state["success"] is True


async def test_option_values_are_clicked_whatever_their_case_and_an_unknown_one_is_passed_over(shop_goal, write_script):
    """WebShop lowercases a click: "Black" clicks "black". A value the item does not offer is sent
    and ignored, and Buy Now is still clicked, as laser_agent.py clicks each value it was given."""
    task_id, goal, ids = shop_goal
    shouted = {name.title(): value.upper() for name, value in goal["goal_options"].items()}
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        call("Buy_Now"),
        {"content": ", ".join([*shouted, "Pattern"])},
        think("choose"),
        call("Buy_Now", **shouted, Pattern="no such pattern"),
    ]
    _, state = await run(write_script(script), task_id, "case")
    sent = [(s["action"], s["valid"]) for s in state["trajectory"]][2:]
    assert sent == [
        *[(f"click[{value}]", True) for value in shouted.values()],
        ("click[no such pattern]", False),
        ("click[Buy Now]", True),
    ]
    assert state["success"] is True


async def test_with_argument_enums_an_option_type_is_matched_whatever_its_case(shop_goal, write_script):
    """argument_enums: "Size" gets the values of WebShop's "size", and "BLACK" is accepted for "black"."""
    task_id, goal, ids = shop_goal
    shouted = {name.title(): value.upper() for name, value in goal["goal_options"].items()}
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        call("Buy_Now"),
        {"content": ", ".join(shouted)},
        think("choose"),
        call("Buy_Now", **shouted),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "case-enums", argument_enums=True)
    calls = state["calls"]
    assert len(calls) == len(script) and len(enums_of(calls[-1])) == len(shouted)
    assert enums_of(calls[3]) == [ids]
    assert state["success"] is True


def test_a_detail_page_adds_its_first_line_blank_or_none_as_the_original_reads_it():
    """laser_agent.py reads the line after "< Prev" (``(.+)``, stripped): an empty first Features
    bullet (WebShop writes " {bullet}") adds "", a page without text "None"."""
    assert detail_text(" \n second bullet", "first_line") == ""
    assert detail_text("", "first_line") == "None"
    assert detail_text(" first bullet\n second", "first_line") == "first bullet"
    assert detail_text(" \n second bullet", "full") == "second bullet"
