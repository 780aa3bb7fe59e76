"""A person approves irreversible steps (``Context.confirm``): a LangGraph interrupt.

Before an action the env declares irreversible (``Interface.irreversible``: WebShop's Buy Now,
a form submit or the answer on a web site) and before AutoPlan's plan update in training, the
node calls ``ask``, which pauses the graph with ``langgraph.types.interrupt`` and a JSON
``Question``. The pause is a checkpoint like any other: it survives the process, and whoever
continues the thread (``introspect resume``, Studio, langgraph-sdk) answers it with
``Command(resume=ANSWER)``, where ANSWER is one of

- ``{"decision": "approve", "proposal": TEXT}``: carry out TEXT, the proposal the person saw
  (``"approve"`` alone, or no ``proposal``, approves whatever the node proposes now);
- ``{"decision": "edit", "proposal": TEXT}``: carry out TEXT instead;
- ``{"decision": "reject", "reason": TEXT}``: do not; the reason goes back to the agent as
  feedback (an action: a refused StepResult; a plan: the updater is asked again).

LangGraph runs the paused node again from its start when the answer arrives, so a model called
before the question is called again; carrying out the proposal the person saw (not the re-run's)
is what keeps an approval about the action that was shown. An answer that is none of these is
untrusted input: the question is asked again with what was wrong, nothing is carried out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langgraph.types import interrupt
from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.context import Context

DECISIONS = ("approve", "reject", "edit")


class Question(TypedDict, total=False):
    """What an interrupt shows: the proposal (an action or a plan) and the agent's reasons."""

    question: Literal["confirm"]
    kind: Literal["action", "plan"]
    node: str
    proposal: str
    rationale: str
    problem: str  # why the previous answer was not understood


@dataclass(frozen=True)
class Verdict:
    """The person's answer: ``proposal`` to carry out, or None and the ``reason`` it was rejected."""

    proposal: str | None
    reason: str = ""


def read_answer(answer: Any, proposal: str) -> Verdict | str:
    """The Verdict of ``answer`` (see module docstring), or what is wrong with it."""
    if isinstance(answer, str):
        answer = {"decision": answer.strip().lower()}
    if not isinstance(answer, dict) or answer.get("decision") not in DECISIONS:
        return f'expected {{"decision": one of {", ".join(DECISIONS)}}}, got {str(answer)[:200]!r}'
    decision = answer["decision"]
    if decision == "reject":
        return Verdict(None, str(answer.get("reason") or "no reason given").strip())
    given = answer.get("proposal")
    if decision == "edit" and not (isinstance(given, str) and given.strip()):
        return "an edit needs the new proposal as text"
    if given is not None and not isinstance(given, str):
        return "the proposal must be text"
    return Verdict(given.strip() if given and given.strip() else proposal)


def ask(kind: Literal["action", "plan"], proposal: str, rationale: str, node: str) -> Verdict:
    """Pause for a person's verdict on ``proposal`` (asked again until the answer is readable)."""
    question: Question = {
        "question": "confirm",
        "kind": kind,
        "node": node,
        "proposal": proposal,
        "rationale": rationale,
    }
    while True:
        verdict = read_answer(interrupt(question), proposal)
        if isinstance(verdict, Verdict):
            return verdict
        question = {**question, "problem": verdict}


def rejection_feedback(proposal: str, reason: str) -> str:
    """What the agent reads after a rejection."""
    return f"A person rejected the action {proposal}: {reason}. Choose another action."


def wanted(context: Context | None) -> bool:
    """Whether this run asks before irreversible steps (a graph run without a context, as a
    test may run one, asks nothing)."""
    return context is not None and context.confirm
