"""One prompt in, the reply's text out: how every SR node talks to the model.

The paper's prompts are single text prompts (Appendices A-E), so each call is one human
message, asked through the Caller ``caller`` makes for the node (nodes.node.model_node).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage

from nodes.llm import Caller, caller_for
from nodes.sr.stage import DEFAULTS


def caller(context: Any, state: Mapping[str, Any]) -> Caller:
    """The run's model at the paper's fixed temperature (0.0) unless the Context sets one."""
    return caller_for(context, state, temperature=DEFAULTS["temperature"])


async def ask(llm: Caller, prompt: str) -> str:
    """The model's reply to ``prompt`` as plain text."""
    return (await llm([HumanMessage(prompt)])).text
