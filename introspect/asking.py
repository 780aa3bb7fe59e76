"""The command line's side of ``Context.confirm``: show a paused graph's question (nodes.runtime.confirm)
and read the person's answer from standard input.

The answer goes back as ``Command(resume={interrupt_id: answer})``. Approving sends the
proposal that was shown, so the graph carries out what the person saw even if the paused
node, run again, proposes something else. Input is read in a thread: the event loop (and a
browser the run keeps open) goes on meanwhile. Closed input (no one to ask) answers nothing:
the thread stays paused, and ``introspect resume`` asks the same question again.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from typing import Any

CHOICES = "[a]pprove, [r]eject with a reason, [e]dit"


async def _line(prompt: str) -> str | None:
    print(prompt, end="", flush=True)
    text = await asyncio.to_thread(sys.stdin.readline)
    return text.rstrip("\n") if text else None


def show(question: dict[str, Any]) -> None:
    kind = question.get("kind", "action")
    proposal = str(question.get("proposal", ""))
    print(
        f"confirm ({question.get('node', '?')}): the agent wants to "
        + (f"take the irreversible action: {proposal}" if kind == "action" else "update the plan to:"),
        flush=True,
    )
    if kind != "action":
        print(textwrap.indent(proposal, "    "), flush=True)
    if question.get("rationale"):
        print(f"  rationale: {' '.join(str(question['rationale']).split())}", flush=True)
    if question.get("problem"):
        print(f"  (the last answer was not understood: {question['problem']})", flush=True)


async def answer(question: dict[str, Any]) -> dict[str, Any] | None:
    """The person's answer to one question, or None when input is closed."""
    show(question)
    what = "action" if question.get("kind", "action") == "action" else "plan (one line)"
    while True:
        choice = await _line(f"  {CHOICES}? ")
        if choice is None:
            return None
        choice = choice.strip().lower()
        if choice in ("a", "approve", "y", "yes"):
            return {"decision": "approve", "proposal": question.get("proposal", "")}
        if choice in ("r", "reject", "n", "no"):
            reason = await _line("  reason (the agent reads it): ")
            return None if reason is None else {"decision": "reject", "reason": reason.strip()}
        if choice in ("e", "edit"):
            edited = await _line(f"  new {what}: ")
            if edited is None:
                return None
            if edited.strip():
                return {"decision": "edit", "proposal": edited.strip()}
        print(f"  please answer {CHOICES}", flush=True)


async def answer_all(pending: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """Answers to every pending question by interrupt id (None when input is closed)."""
    answers: dict[str, Any] = {}
    for interrupt_id, question in pending:
        reply = await answer(question if isinstance(question, dict) else {"proposal": str(question)})
        if reply is None:
            print("no answer (input closed): the run stays paused at this question", flush=True)
            return None
        answers[interrupt_id] = reply
    return answers
