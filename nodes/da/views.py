"""What the prompts show: the plan, the history H, the notes, and the websites of a task.

Kept in one place so that every prompt of the method renders the same structure the
same way (the paper uses the same {PLAN}, {HISTORY} and {NOTES} in all of them).
"""

from __future__ import annotations

from typing import Any

import prompts
from envs.base import Interface, Observation
from nodes.da.state import DAState

NONE = "None"


def prompt_name(interface: Interface, name: str) -> str:
    """``devils_advocate/<interface>/<name>`` where the paper wrote that prompt for the interface
    (WebArena's prompts name its sandbox of websites, Playwright, its action syntax and the
    accessibility tree), else the generic ``devils_advocate/<name>``: the same prompt about an
    observation, filled from the Interface (grammar, intro)."""
    return prompts.variant("devils_advocate", interface.name, name)


def site_of(observation: Observation, interface: Interface, instruction: str = "") -> dict[str, str]:
    """The {websites}, {website_intro} and {instruction} fields of the plan and action prompts.

    As in the paper's appendix: {websites} lists every website of the sandbox, one per line as
    "<intro>: <URL>" (as bullets), whatever the task: the env's ``info["websites"]`` (WebArena's
    configured sites), else the task's. {WEBSITE INTRO} is that list for the site(s) the task
    works with: the env's introduction of the task (``info["intro"]``; WebArena words it as the
    appendix does), else of itself (``interface.intro``). {INSTRUCTION} holds site-specific
    instructions, which the paper does not give: the run's ``instruction`` (Context
    ``site_instructions``), else "None".
    """
    info: dict[str, Any] = observation.info
    intro = str(info.get("intro") or "").strip() or interface.intro
    websites = str(info.get("websites") or "").strip() or intro
    return {
        "websites": "\n".join(f"- {line}" for line in websites.splitlines()),
        "website_intro": intro,
        "instruction": instruction.strip() or NONE,
    }


def numbered(items: list[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1)) or NONE


def plan_text(state: DAState) -> str:
    return numbered(list(state.get("plan") or []))


def subtask_text(state: DAState) -> str:
    plan, index = list(state.get("plan") or []), state.get("subtask", -1)
    return plan[index] if 0 <= index < len(plan) else NONE


def history_text(state: DAState, *, episode: int | None = None) -> str:
    """H as a numbered list; with ``episode`` only that episode's actions."""
    items = [item["text"] for item in state.get("history") or [] if episode is None or item["episode"] == episode]
    return numbered(items)


def experience_text(state: DAState) -> str:
    """H over all episodes, grouped by episode (the plan revision's "past experience")."""
    blocks = []
    for episode in range(1, state.get("episode", 1) + 1):
        items = history_text(state, episode=episode)
        if items != NONE:
            blocks.append(f"Episode {episode}:\n{items}")
    return "\n\n".join(blocks) or NONE


def notes_text(state: DAState) -> str:
    return numbered(list(state.get("notes") or []))
