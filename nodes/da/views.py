"""What the prompts show: the plan, the history H, the notes, and the websites of a task.

Kept in one place so that every prompt of the method renders the same structure the
same way (the paper uses the same {PLAN}, {HISTORY} and {NOTES} in all of them).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from envs.base import Observation
from nodes.da.state import DAState

# The site list of the paper's plan and action prompts (Appendix, v4: "An online shopping site
# (OneStopShop): {webarena_root}:7770", ...), keyed by WebArena's site names as they appear in a
# task config's "sites"; "shop" is the project's local OneStopShop look-alike.
SITE_INTROS: dict[str, str] = {
    "shopping": "An online shopping site (OneStopShop)",
    "shopping_admin": "An e-commerce management site (Magento)",
    "reddit": "A Reddit site (Postmill)",
    "gitlab": "A GitLab site",
    "map": "A map site (OpenStreetMap)",
    "wikipedia": "A Wikipedia site",
    "shop": "An online shopping site (One Stop Market, served locally by the project)",
}

NONE = "None"


def goal_of(observation: Observation, task_id: str) -> str:
    """The task intent the env reports with its first observation."""
    for key in ("intent", "goal", "instruction"):
        value = observation.info.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return f"task {task_id}"


def site_of(observation: Observation, instruction: str = "") -> dict[str, str]:
    """The {websites}, {website_intro} and {instruction} fields of the plan and action prompts.

    As in the paper's appendix: the websites are listed one per line as "<intro>: <URL>" in the
    appendix's own words (SITE_INTROS), {WEBSITE INTRO} is that line for the site(s) the task works
    with, and {INSTRUCTION} holds site-specific instructions, which the paper does not give: the
    run's ``instruction`` (Context ``site_instructions``) or the env's, else "None".
    """
    info: dict[str, Any] = observation.info
    sites = info.get("sites") or []
    urls = info.get("site_urls") if isinstance(info.get("site_urls"), dict) else {}
    intros = []
    for name in sites if isinstance(sites, (list, tuple)) else [sites]:
        intro = SITE_INTROS.get(str(name), f"A website ({name})")
        url = urls.get(name)
        intros.append(f"{intro}: {url}" if url else intro)
    if not intros:
        origin = _origin(observation.url or info.get("start_url") or "")
        intros.append(f"The website at {origin}" if origin else "The website you are on")
    return {
        "websites": "\n".join(f"- {line}" for line in intros),
        "website_intro": str(info.get("site_intro") or "") or "\n".join(intros),
        "instruction": instruction.strip() or str(info.get("site_instruction") or "") or NONE,
    }


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def numbered(items: list[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1)) or NONE


def plan_text(state: DAState) -> str:
    return numbered(list(state.get("plan") or []))


def subtask_text(state: DAState) -> str:
    plan, index = list(state.get("plan") or []), int(state.get("subtask", -1))
    return plan[index] if 0 <= index < len(plan) else NONE


def history_text(state: DAState, *, episode: int | None = None) -> str:
    """H as a numbered list; with ``episode`` only that episode's actions."""
    items = [
        item["text"]
        for item in state.get("history") or []
        if episode is None or item["episode"] == episode
    ]
    return numbered(items)


def experience_text(state: DAState) -> str:
    """H over all episodes, grouped by episode (the plan revision's "past experience")."""
    blocks = []
    for episode in range(1, int(state.get("episode", 1)) + 1):
        items = history_text(state, episode=episode)
        if items != NONE:
            blocks.append(f"Episode {episode}:\n{items}")
    return "\n\n".join(blocks) or NONE


def notes_text(state: DAState) -> str:
    return numbered(list(state.get("notes") or []))
