"""One model question with re-asks: a malformed reply becomes feedback, never a crash.

Every Devil's Advocate prompt expects a particular form (one action, YES/NO, a list,
``###Answer``). ``ask`` sends the prompt, parses the reply, and on a ParseError answers
the model with what was wrong (prompt ``devils_advocate/feedback``) up to ``reasks``
times. When the model never complies the node gets ``None`` and takes the paper's
conservative branch (no action, "not aligned", "not complete").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from envs.base import ActionParseError
from nodes.runtime.llm import Caller
from nodes.runtime.parse import ParseError, numbered_list
from prompts import render

T = TypeVar("T")


@dataclass
class Answer(Generic[T]):
    """The parsed value (None if every attempt was malformed) and the whole exchange."""

    value: T | None
    messages: list[BaseMessage] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The last reply of the model."""
        replies = [m for m in self.messages if isinstance(m, AIMessage)]
        return replies[-1].text if replies else ""


async def ask(
    llm: Caller,
    messages: list[BaseMessage] | str,
    parse: Callable[[str], T],
    *,
    reasks: int,
) -> Answer[T]:
    """Ask, parse, and re-ask with feedback on a malformed reply."""
    exchange: list[BaseMessage] = [HumanMessage(messages)] if isinstance(messages, str) else list(messages)
    for attempt in range(reasks + 1):
        reply = await llm(exchange)
        exchange.append(reply)
        try:
            return Answer(parse(reply.text), exchange)
        except (ParseError, ActionParseError) as problem:
            if attempt == reasks:
                llm.unreadable(f"no answer after {reasks} re-asks: {problem}")
                break
            llm.unreadable(f"asked again: {problem}")
            exchange.append(HumanMessage(render("devils_advocate/feedback", problem=str(problem))))
    return Answer(None, exchange)


_UPPER = re.compile(r"\b(YES|NO)\b")
_ANY = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def yes_no(text: str) -> bool:
    """The verdict of a YES/NO question.

    The alignment prompt asks for a description sentence first ("The action is to ...
    'No thanks' ..."), so the verdict is the last capitalised YES/NO, else a yes/no
    that opens or closes the reply.
    """
    upper = _UPPER.findall(text or "")
    if upper:
        return upper[-1] == "YES"
    stripped = (text or "").strip()
    for candidate in (stripped.split("\n")[-1], stripped):
        match = _ANY.match(candidate.strip(" *#:.`'\"")) or _ANY.search(candidate[-12:])
        if match:
            return match.group(1).lower() == "yes"
    raise ParseError("no verdict found; answer YES or NO")


_ANSWER = re.compile(r"#+\s*Answer\s*:?\s*(.*)", re.IGNORECASE | re.DOTALL)


def final_answer(text: str) -> str:
    """The paragraph after ``###Answer``, on one line (the answer delivered with ``stop``).

    An explanation the model adds after a blank line is not part of the answer, which
    matters for WebArena's exact_match.
    """
    match = _ANSWER.search(text or "")
    if not match:
        raise ParseError("the answer must start with ###Answer")
    return " ".join(match.group(1).strip().split("\n\n")[0].split())


_LIST = re.compile(r"\bList\b")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.+?)\s*$", re.MULTILINE)


def plan_steps(text: str) -> list[str]:
    """The numbered items of a plan ("List: 1. ... 2. ...").

    Only what follows the last "List" counts when there is one, so that a review
    written before the plan (plan revision) cannot leak into the steps.
    """
    text = text or ""
    starts = [m.end() for m in _LIST.finditer(text)]
    for part in ([text[starts[-1] :]] if starts else []) + [text]:
        steps = _NUMBERED.findall(part) or numbered_list(part)
        steps = [" ".join(step.split()) for step in steps if step.strip()]
        if steps:
            return steps
    raise ParseError("no plan found; give the steps as a numbered list (1., 2., 3., ...)")
