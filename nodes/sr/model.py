"""One prompt in, the reply's text out: how every SR node talks to the model.

The paper's prompts are single text prompts (Appendices A-E), so each call is one human
message, asked through the Caller ``caller`` makes for the node (nodes.runtime.node.model_node).

Length: on an env the paper wrote its prompts for (MiniWoB), every call is limited to
``SRContext.paper_max_tokens`` (128, the original code's ``llm_max_step``, which it passes to
every call: plan, paraphrase, reflection); elsewhere to the shared ``max_tokens``.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from envs.base import Interface
from nodes.runtime.llm import Caller
from nodes.sr.context import SRContext
from nodes.sr.prompting import paper_view


def token_limit(context: SRContext, interface: Interface) -> int | None:
    """This env's limit of an SR call (None: the caller's, ``max_tokens``)."""
    return context.paper_max_tokens if paper_view(interface) else None


async def ask(llm: Caller, prompt: str, max_tokens: int | None = None) -> str:
    """The model's reply to ``prompt`` as plain text (``max_tokens``: this call's own limit)."""
    return (await llm([HumanMessage(prompt)], max_tokens=max_tokens)).text


def longest(replies: list[str]) -> str:
    """The reply the original code keeps of several samples (``util.take_longest``): the longest,
    and of equally long ones the last in sorted order."""
    return max((len(reply), reply) for reply in replies)[1]
