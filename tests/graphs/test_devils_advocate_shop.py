"""Devil's Advocate on the real local shop site in Chromium (WebArena env, task shop-1).

The picture-frame task of the paper: three orders in Nov 2022, the first one opened has
no picture frame, so the agent backtracks to the order history (a URL restore, which
renumbers the accessibility tree) and the remedy's element id goes through element
mapping. Chrome's AX ids differ from run to run, so the scripted replies name elements
as ``<<role 'name' after ANCHOR>>`` and the test model resolves them to the ids on the
screen in the prompt, as a model reading that screen would.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from graphs.context import Context
from graphs.devils_advocate import build_graph, result
from nodes import llm
from nodes.scripted import ScriptedChatModel

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_MARK = re.compile(r"<<(.+?)>>")


def element_on_screen(prompt: str, mark: str) -> str:
    """The id of the first ``[id] target`` line after the last ANCHOR in ``prompt``."""
    target, _, anchor = mark.partition(" after ")
    start = prompt.rfind(anchor) if anchor else 0
    found = re.findall(rf"\[(\d+)\] {re.escape(target)}", prompt[max(start, 0):])
    if not found:
        raise AssertionError(f"{mark!r} is not on the screen of the prompt")
    return found[0] if anchor else found[-1]


class ScreenReadingScript(ScriptedChatModel):
    """A scripted model whose ``<<...>>`` marks become the element ids of the prompt's screen."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        out = super()._generate(messages, stop, run_manager, **kwargs)
        prompt = "\n".join(str(m.content) for m in messages if m.type == "human")
        message = out.generations[0].message
        message.content = _MARK.sub(lambda m: element_on_screen(prompt, m.group(1)), str(message.content))
        return out


REPLIES = [
    "List:\n1. Click on 'My Orders'.\n2. Open the order from Nov 2022 with the picture frame.\n"
    "3. Read the color of the picture frame.",  # plan
    "click [<<link 'My Orders'>>]",  # act
    "click [<<link 'My Account'>>]",  # remedy 1
    "scroll [down]",  # remedy 2
    "The action is to open My Orders; orders 000000173, 174 and 175 are from Nov 2022.",  # describe
    "YES",  # align
    "NO",  # complete: task
    "YES",  # complete: subtask
    "click [<<link 'View Order' after cell '000000173'>>]",  # act: the wrong Nov 2022 order
    "click [<<link 'View Order' after cell '000000174'>>]",  # remedy 1
    "click [<<link 'View Order' after cell '000000175'>>]",  # remedy 2
    "The action is to open order 000000173; it has a USB cable and no picture frame.",  # describe
    "NO",  # align -> backtrack to the order history
    "<<link 'View Order' after cell '000000174'>>",  # map_element on the reloaded history page
    "The action is to open order 000000174; it has a picture frame, Color: Gold.",  # describe
    "YES",  # align
    "YES",  # complete: task
    "###Answer: Gold",  # answer
]


async def test_picture_frame_task_is_solved_after_a_backtrack():
    spec = "scripted:shop-picture-frame"
    model = ScreenReadingScript(replies=[{"content": r} for r in REPLIES], source=spec)
    llm.serve(spec, model)  # conftest's _fresh_models forgets it
    g = build_graph(checkpointer=InMemorySaver())
    out = await g.ainvoke(
        {"task_id": "shop-1"},
        {"configurable": {"thread_id": "da-shop-1"}, "recursion_limit": 500},
        context=Context(model=spec, env="webarena"),
    )
    prompts = ["\n".join(str(m.content) for m in call["messages"]) for call in model.calls]
    executed = [step["action"] for step in out["trajectory"]]

    assert out["success"] and out["answer"] == "Gold" and out["stop_reason"] == "task_completed"
    assert len(model.calls) == len(REPLIES)
    # First answers before remedies: My Orders, then order 173; then the remedy (order 174).
    my_orders = element_on_screen(prompts[1], "link 'My Orders'")
    order_173 = element_on_screen(prompts[8], "link 'View Order' after cell '000000173'")
    assert executed[:2] == [f"click [{my_orders}]", f"click [{order_173}]"]
    assert executed[-1] == "stop [Gold]"
    # The backtrack restored the order history URL and asked for the remedy's new id.
    [back] = out["backtracks"]
    assert back["url"].endswith("/sales/order/history/")
    assert prompts[13].startswith("I want to interact with an element with element id:")
    new_id = element_on_screen(prompts[13], "link 'View Order' after cell '000000174'")
    assert back["mapped_action"] == executed[2] == f"click [{new_id}]"
    assert back["action"] != back["mapped_action"]  # the reload renumbered the tree
    assert "Order # 000000174" in out["trajectory"][2]["observation"]
    assert result(out)["first_episode_actions"] == executed[:3]
