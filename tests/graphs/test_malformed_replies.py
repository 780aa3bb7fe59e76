"""A malformed model reply becomes feedback to the agent, never a crash: for every method,
five kinds of bad reply (empty, truncated, wrong format, a tool call with bad arguments, an
action outside the grammar) go through the real ChatOpenAI client (the local stub answers)
at a point of the method's known run (tests.support.scenarios); the run must go on, show the
agent what was wrong, and end as the known run ends."""

from __future__ import annotations

from typing import Any

import pytest

from nodes.runtime.calls import unreadable_replies
from tests.support.openai_stub import Reply
from tests.support.scenarios import SCENARIOS

pytestmark = pytest.mark.slow
MODEL = "openai:gpt-4o-mini"
KINDS = ("empty", "truncated", "wrong_format", "bad_tool_call", "outside_grammar")


def request_text(stub: Any, index: int) -> str:
    """Everything the model was sent in request ``index`` (0-based)."""
    return "\n".join(str(m.get("content") or "") for m in stub.requests[index]["messages"])


async def run_with(run_graph, stub, method: str, at: int, bad: list[Reply], *, replace: int = 0, **settings):
    """The method's known run with the replies ``bad`` answered from call ``at`` on: inserted
    before the known reply, or instead of the ``replace`` known replies from there; ``settings``
    over the scenario's."""
    scenario = SCENARIOS[method]
    replies = scenario.stub_replies()
    replies[at : at + replace] = bad
    stub.replies.extend(replies)
    return await run_graph(
        method,
        scenario.graph_input,
        model=MODEL,
        env=scenario.env,
        thread=f"bad-{method}",
        **{**scenario.context, **settings},
    )


LASER_BAD = {
    "empty": (Reply(content=""), "You did not call a function."),
    # a reply cut off inside the call's arguments (finish_reason "length"): not JSON
    "truncated": (
        Reply(tool_calls=[{"name": "Search", "arguments": '{"keywords": "Ambesonne Abstract Thr'}]),
        "The arguments of 'Search' are not valid JSON",
    ),
    "wrong_format": (Reply(content="Search for decorative pillows."), "You did not call a function."),
    "bad_tool_call": (
        Reply(tool_calls=[{"name": "Search", "args": {"max_price": "50.00"}}]),
        "The function 'Search' needs the argument 'keywords'.",
    ),
    "outside_grammar": (
        Reply(tool_calls=[{"name": "Buy_Now", "args": {}}]),
        "The function 'Buy_Now' is not available in the current state.",
    ),
}


@pytest.mark.parametrize("kind", KINDS)
async def test_laser(kind, run_graph, openai_stub):
    """LASER's first function call (the search state's) is answered badly: no call at all
    (empty; prose, LASER's wrong format), a call whose argument text was cut off, a call
    without its required argument, a function of another state (outside the state's action
    space). The refusal is sent back as the answer to the call (a tool message, as the API
    requires) or as a user message, and the model is asked again."""
    bad, feedback = LASER_BAD[kind]
    outcome = await run_with(run_graph, openai_stub, "laser", 1, [bad])
    assert outcome.finished and outcome.state["success"] and outcome.state["reward"] == 1.0
    assert outcome.state["usage"]["model_calls"] == len(SCENARIOS["laser"].replies) + 1
    assert feedback in request_text(openai_stub, 2)
    assert outcome.state["trajectory"][0]["action"].startswith("search[Ambesonne")
    [unread] = unreadable_replies(outcome.state["calls"])  # what a results row lists
    assert unread["position"] == 1 and unread["handling"].startswith("asked again: ") and feedback in unread["handling"]


EXCEPTION = "However, your last action is invalid."  # Appendix D's exception reflection
INCOMPLETE = "You did not take any action."
# the bad plan, then what a click without a number makes the original code ask (its grounding call)
SR_BAD = {
    "empty": (Reply(content=""), [], "incomplete", INCOMPLETE),
    "truncated": (Reply(content="click id="), [Reply(content="")], "exception", "Your index=1 action: click id=\n"),
    "wrong_format": (
        Reply(content='Click on the "Ok" button.'),
        [Reply(content="the one that says Ok")],
        "exception",
        'Your index=1 action: Click on the "Ok" button.\n',
    ),
    "bad_tool_call": (
        Reply(tool_calls=[{"name": "click", "args": {"id": "the Ok button"}}]),
        [],
        "incomplete",
        INCOMPLETE,
    ),
    "outside_grammar": (Reply(content="press NOSUCHKEY"), [], "exception", "Your index=1 action: press NOSUCHKEY\n"),
}


@pytest.mark.browser
@pytest.mark.parametrize("kind", KINDS)
async def test_structured_reflection(kind, run_graph, openai_stub):
    """The first plan of trial 1 is bad. A plan line that is not an action (a key the grammar
    lacks), or a click without a number whose grounding reply names no id either (cut off, written
    in words), is not executed: the trial ends with "exception" and the reflection prompt
    (Appendix D's) says the action at index 1 was invalid. An empty reply, and a tool call (SR's
    prompts ask for text: a tool call with bad arguments carries none), hold no plan: the trial
    ends "incomplete" and the reflection prompt says no action was taken; its lesson at index 1
    lies past that empty trial, so trial 2 plans anew. Either way trial 2 succeeds."""
    bad, grounding, status, shown = SR_BAD[kind]
    # the known run: plan, describe the click, reflect; here the bad plan executes nothing
    replies = SCENARIOS["structured_reflection"].stub_replies()
    then = [replies[2], Reply(content="click id=5")] if status == "incomplete" else [replies[2]]
    outcome = await run_with(run_graph, openai_stub, "structured_reflection", 0, [bad, *grounding, *then], replace=3)
    reflection = request_text(openai_stub, 1 + len(grounding))
    assert outcome.finished and outcome.state["success"] and outcome.state["reward"] == 1.0
    assert [t["status"] for t in outcome.state["trials"]] == [status, "correct"]
    assert outcome.state["usage"]["model_calls"] == (2 if status == "exception" else 3) + len(grounding)
    assert shown in reflection
    if status == "exception":
        assert EXCEPTION in reflection
    # the plan (or, for a click without a number, its grounding reply) is listed with what SR did
    [unread] = unreadable_replies(outcome.state["calls"])
    assert unread["position"] == len(grounding) and "the trial ends" in unread["handling"]


DA_BAD = {
    "empty": Reply(content=""),
    "truncated": Reply(content="click [3"),
    "wrong_format": Reply(content="I would click on the picture frame link."),
    "bad_tool_call": Reply(tool_calls=[{"name": "click", "args": {"element_id": "frame"}}]),
    "outside_grammar": Reply(content="hover [36]"),
}


@pytest.mark.browser
@pytest.mark.parametrize("kind", KINDS)
async def test_devils_advocate(kind, run_graph, openai_stub):
    """The first action (Algorithm 1 line 14) is answered badly: empty, cut off inside the
    element id, in words, a tool call (DA's prompts ask for text: a tool call with bad
    arguments carries none, read as an empty reply), a verb outside WebArena's grammar. With
    re-asks on (the paper has none), the model is told what was wrong and which forms exist,
    and asked again."""
    outcome = await run_with(run_graph, openai_stub, "devils_advocate", 1, [DA_BAD[kind]], reasks=2)
    assert outcome.finished and outcome.state["success"] and outcome.state["reward"] == 1.0
    assert outcome.state["usage"]["model_calls"] == len(SCENARIOS["devils_advocate"].replies) + 1
    reask = openai_stub.requests[2]["messages"][-1]["content"]
    assert "no valid action found in the reply" in reask and "click [element_id]" in reask
    [unread] = unreadable_replies(outcome.state["calls"])
    assert unread["position"] == 1 and unread["handling"].startswith("asked again: no valid action found")


AUTOPLAN_BAD = {
    "empty": Reply(content=""),
    "truncated": Reply(content="take apple 1 from cou"),
    "wrong_format": Reply(content="Sure! Here is the formalized action:"),
    "bad_tool_call": Reply(tool_calls=[{"name": "take", "args": {"object": 1}}]),
    "outside_grammar": Reply(content="fly to the moon"),
}


@pytest.mark.parametrize("kind", KINDS)
async def test_autoplan(kind, run_graph, openai_stub):
    """A step whose formalized action (the reply that must be in ALFWorld's grammar) is bad:
    empty, cut off, prose, a tool call (AutoPlan's prompts ask for text: a tool call with bad
    arguments carries none, an empty command), a command the game does not know. The game
    refuses it and the next thought sees AutoPlan's feedback (paper 004, Table 6)."""
    scenario = SCENARIOS["autoplan"]
    step = [Reply(content="Let me begin."), Reply(content="start with something"), AUTOPLAN_BAD[kind]]
    outcome = await run_with(run_graph, openai_stub, "autoplan", 0, step)
    assert outcome.finished and outcome.state["success"] and outcome.state["reward"] == 1.0
    assert outcome.state["usage"]["model_calls"] == len(scenario.replies) + 3
    refused = outcome.state["trajectory"][0]
    assert refused["valid"] is False and refused["feedback"]
    assert "Action failed." in request_text(openai_stub, 3) and refused["feedback"] in request_text(openai_stub, 3)
    # the formalizer's reply, with what AutoPlan did; a cut-off command still reads as one (take X from Y)
    unread = unreadable_replies(outcome.state["calls"])
    assert [u["position"] for u in unread] == ([] if kind == "truncated" else [2])
    assert all(u["handling"].startswith("sent to the env as written") for u in unread)
