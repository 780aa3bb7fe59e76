"""Observation summarisation (paper 3.2): a screen over the budget is summarised first.

The summary keeps the ``[id] role 'name'`` lines the task may need, so the agent can
still act on it and element mapping can still compare ids. A screen too long for one
call is summarised in chunks of the budget's size (at most ``MAX_CHUNKS``), and the
joined summary is cut at the budget with a visible marker rather than overflowing.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from envs.base import Observation
from nodes.da.state import Screen
from nodes.runtime.llm import Caller
from prompts import render

MAX_CHUNKS = 8
CUT = "\n[... the rest of the screen was cut to fit the budget ...]"


def chunks(text: str, size: int) -> list[str]:
    """``text`` split at line ends into pieces of at most ``size`` characters."""
    pieces: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:  # a single huge line is split where it must be
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:size])
            line = line[size:]
        if len(current) + len(line) > size:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return pieces


def fit(text: str, budget: int) -> str:
    """``text`` cut to ``budget`` characters, with a marker when the budget leaves room for one."""
    if len(text) <= budget:
        return text
    marker = CUT if budget >= 4 * len(CUT) else ""
    return text[: budget - len(marker)] + marker


async def model_view(llm: Caller, task: str, observation: str, budget: int) -> str:
    """The observation itself when it fits ``budget`` characters, else its summary."""
    if len(observation) <= budget:
        return observation
    pieces = chunks(observation, budget)
    total = len(pieces[:MAX_CHUNKS])
    share = max(200, budget // total)
    summaries = []
    for number, piece in enumerate(pieces[:MAX_CHUNKS], 1):
        prompt = render(
            "devils_advocate/summarise",
            task=task,
            part=f"part {number} of {total}" if total > 1 else "the whole screen",
            observation=piece,
            limit=share,
        )
        reply = await llm([HumanMessage(prompt)])
        summaries.append(reply.text.strip())
    joined = "\n".join(summaries) + (CUT if len(pieces) > MAX_CHUNKS else "")
    return fit(joined, budget)


async def look(
    llm: Caller,
    task: str,
    observation: Observation,
    snapshot: dict[str, Any],
    budget: int,
    known: Screen | None = None,
) -> Screen:
    """S_t as state keeps it: snapshot, observation and, only when it is over budget, a summary.

    ``known`` is a screen seen before; its summary is reused when the observation is the same.
    """
    text = observation.text
    if known is not None and known["observation"] == text:
        summary = known["summary"]
    else:
        summary = "" if len(text) <= budget else await model_view(llm, task, text, budget)
    return Screen(snapshot=snapshot, observation=text, summary=summary, url=observation.url or "")


def shown(screen: Screen) -> str:
    """The screen as the prompts show it."""
    return screen["summary"] or screen["observation"]
