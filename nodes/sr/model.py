"""One prompt in, the reply's text out: how every SR node talks to the model.

The paper's prompts are single text prompts (Appendices A-E), so each call is one human
message, asked through the Caller ``caller`` makes for the node (nodes.node.model_node).
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from nodes.llm import Caller


async def ask(llm: Caller, prompt: str) -> str:
    """The model's reply to ``prompt`` as plain text."""
    return (await llm([HumanMessage(prompt)])).text
