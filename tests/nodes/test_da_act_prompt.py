"""The action prompt renders byte for byte as the appendix's, its "Note:" list now coming from
the env interface (WebArena's grammar is that list)."""

from __future__ import annotations

from envs.webarena.interface import INTERFACE as WEBARENA
from nodes.da.act import action_prompt

# The appendix's action prompt as the project shipped it before the grammar came from the env.
APPENDIX = """I am in a sandbox and only have access to the following websites (i.e., no access to external website like www.reddit.com):
{websites}

Now I'm trying to complete a task on a website.
The task is:
{task}

The plan to complete this task is:
{plan}

I have executed the following actions:
{history}

And now I'm at this step: {step}

Here is the screen I am looking at:
{screen}

I have taken down the following notes:
{notes}

What should be the next action to complete this step in my plan (only give one action)?
Note:
- If the next action is to click, please indicate the element id in [] (format: click [element_id]).
- If the next action is to scroll, please indicate the direction in [] (format: scroll [up or down]).
- If you need to navigate to a URL, please indicate the URL in [] (format: goto [url]).
- If you need to go back to the previous page, please use go_back.
- If the next action is to type, please indicate both element id and the things to type in [] (format: type [element_id] [things to type]).
- If you want to note down something, use this format: note_down [things to note down].

The next action is:"""


def test_the_webarena_action_prompt_is_the_appendixs():
    screen = {"snapshot": {}, "observation": "[1] link 'My Account'", "summary": "", "url": "http://shop/"}
    state = {
        "site": {"websites": "- An online shopping site (OneStopShop): http://shop"},
        "goal": "Find my last order",
        "plan": ["Open My Account.", "Open My Orders."],
        "subtask": 0,
        "episode": 1,
        "history": [],
        "notes": [],
        "current": screen,
    }
    assert action_prompt(state, WEBARENA) == APPENDIX.format(
        websites="- An online shopping site (OneStopShop): http://shop",
        task="Find my last order",
        plan="1. Open My Account.\n2. Open My Orders.",
        history="None",
        step="Open My Account.",
        screen="[1] link 'My Account'",
        notes="None",
    )


def test_other_envs_get_the_generic_prompts_filled_from_their_interface():
    from envs.alfworld.interface import INTERFACE as ALFWORLD
    from nodes.da.views import prompt_name

    written = ("plan", "plan_revision", "act", "align", "describe", "complete_task", "complete_subtask", "answer")
    assert [prompt_name(WEBARENA, n) for n in written] == [f"devils_advocate/webarena/{n}" for n in written]
    assert [prompt_name(ALFWORLD, n) for n in written] == [f"devils_advocate/{n}" for n in written]
    assert prompt_name(WEBARENA, "remedy") == prompt_name(ALFWORLD, "remedy") == "devils_advocate/remedy"
    screen = {"snapshot": {}, "observation": "You are in the middle of a room.", "summary": "", "url": ""}
    state = {
        "site": {"websites": f"- {ALFWORLD.intro}"},
        "goal": "put a clean mug on the desk",
        "plan": ["Find a mug."],
        "subtask": 0,
        "episode": 1,
        "history": [],
        "notes": [],
        "current": screen,
    }
    prompt = action_prompt(state, ALFWORLD)
    assert prompt.startswith(f"I am working in the following environment:\n- {ALFWORLD.intro}\n")
    assert f"Note:\n{ALFWORLD.grammar}\n\nThe next action is:" in prompt and "website" not in prompt
