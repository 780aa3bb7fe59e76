"""What an agent is told about WebShop and how its replies are read (envs.base.Interface).

WebShop's own grammar: ``search[query]`` on the search page and ``click[button text]`` for a
button of the page (an item id, an option, ``Buy Now``, ``< Prev``, ...). Buttons are named by
their text, so observations carry no element ids, and buying ends the task (no answer action).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.base import ActionParseError, Interface

GRAMMAR = """\
- search[query]: on the search page, search the catalogue, e.g. search[machine washable pillow covers]
- click[button text]: click a button shown on the page: an item id (click[B07HRFSNL4]), an option \
(click[28" x 28"]), Description, Features, Reviews, Buy Now, < Prev, Next >, Back to Search"""

_ACTION = re.compile(r"\b(search|click)\s*\[(.*?)\]", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class WebShopInterface(Interface):
    def parse_action(self, text: str) -> str:
        """The first ``search[...]`` or ``click[...]`` in ``text``, the verb in lower case."""
        match = _ACTION.search(text or "")
        if match is None or not match.group(2).strip():
            raise ActionParseError("no action found in the reply; give one action: search[query] or click[button text]")
        return f"{match.group(1).lower()}[{match.group(2).strip()}]"

    def irreversible(self, action: str, observation: str) -> bool:
        """Buy Now: the purchase ends the episode and is scored."""
        return " ".join(action.lower().split()) == "click[buy now]"


INTERFACE = WebShopInterface(
    kind="web",
    intro="WebShop, an online shop of Amazon products: search the catalogue, open an item, choose its options "
    "and buy it",
    grammar=GRAMMAR,
    verbs=("search", "click"),
    name="webshop",
)
