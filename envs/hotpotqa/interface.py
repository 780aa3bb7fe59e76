"""What an agent is told about HotpotQA and how its replies are read (envs.base.Interface).

ReAct's grammar over Wikipedia: ``search[entity]``, ``lookup[keyword]``, ``finish[answer]``
(the words of AutoPlan's task description). A reply is read for its first action of the
three, the verb in lower case and the argument stripped, as AutoPlan's code reads its
formalizer ("Search [Ed Wood]" is ``search[Ed Wood]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.base import ActionParseError, Interface

GRAMMAR = """\
- search[entity]: search the entity on Wikipedia. If there is an exact match of the entity, open its \
Wikipedia page and return the first paragraph. If not, it will return some related entities.
- lookup[keyword]: return the next sentence containing the keyword in the current Wikipedia page opened by \
search[].
- finish[answer]: return the answer and finish the task."""

_ACTION = re.compile(r"\b(search|lookup|finish)\s*\[(.*?)\]", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class HotpotQAInterface(Interface):
    def parse_action(self, text: str) -> str:
        match = _ACTION.search(text or "")
        if match is None:
            raise ActionParseError(
                "no action found in the reply; use search[entity], lookup[keyword] or finish[answer]"
            )
        return f"{match.group(1).lower()}[{match.group(2).strip()}]"


INTERFACE = HotpotQAInterface(
    kind="text",
    intro="Question answering over Wikipedia: search its pages, look up sentences in them, and answer the question",
    grammar=GRAMMAR,
    answer_action="finish[{answer}]",
    verbs=("search", "lookup", "finish"),
    name="hotpotqa",
)
