"""What a LASER state shows the model: the page, and in the item state what LASER adds.

Search and results pages are WebShop's text with its empty lines removed (``laser_agent.py``
joins the observation's paragraphs). The item state shows the item page followed by, as
in Table 6, the text of each detail page read for this item (by default its first line, as the
original code keeps it: ``detail_text``) under "description:", "features:", "reviews:" ("None"
when the page has no text) and the "Target item details:" block with the arguments of the last
``Search`` (keywords, max_price), as laser_agent.py writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TARGET_HEADER = "Target item details:"  # laser_agent.py's (its prompt's layout says more)
TARGET_KEYS = ("keywords", "max_price")


def detail_text(section: str, mode: str) -> str:
    """A detail page's text as the item state keeps it: with ``mode="first_line"`` (the
    default setting) its first line only, as the original ``laser_agent.py`` reads one line
    after "< Prev" ("None" when the page has none, "" when that line is blank: an empty first
    Features bullet); with ``mode="full"`` all of it (the paper, Table 6: "full description of
    the item (if any) or None")."""
    if mode == "first_line":
        return section.split("\n", 1)[0].strip() if section else "None"
    return section.strip() or "None"


def target_block(target: Mapping[str, Any]) -> str:
    """Table 6's target block from the last Search's arguments ('' before any search)."""
    lines = [f"{key}: {target[key]}" for key in TARGET_KEYS if target.get(key) not in (None, "")]
    return "\n".join([TARGET_HEADER, *lines]) if lines else ""


def item_observation(page_text: str, details: Mapping[str, str], target: Mapping[str, Any]) -> str:
    """The item state's observation: the page, the details read, the target."""
    parts = [page_text.rstrip("\n")]
    parts += [f"{name.lower()}:\n{text}" for name, text in details.items()]
    block = target_block(target)
    if block:
        parts.append(block)
    return "\n\n".join(parts)


def page_observation(page_text: str) -> str:
    """Search and results pages as laser_agent.py shows them: empty lines removed."""
    return "\n".join(page_text.strip().split("\n\n"))


def backup_listing(instruction: str, candidates: Sequence[Mapping[str, Any]]) -> str:
    """The examined items as a results page without navigation (the original backup's view,
    each line ending in a newline as ``back_up_agent`` writes it)."""
    lines = ["Instruction:", instruction]
    for item in candidates:
        lines += [f"[button] {item['asin']} [button_]", str(item.get("title", "")), str(item.get("price", ""))]
    return "".join(f"{line}\n" for line in lines)
