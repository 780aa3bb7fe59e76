"""Helpers shared by the Structured Reflection graph tests (fake env and real MiniWoB)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from graphs.context import Context
from graphs.structured_reflection import build_graph
from nodes.llm import model_for


def scripted(tmp_path, replies: list[str]) -> str:
    """A ``scripted:`` spec answering ``replies`` in order."""
    path = tmp_path / f"sr-{uuid.uuid4().hex[:8]}.jsonl"
    path.write_text("".join(json.dumps({"content": r}) + "\n" for r in replies), encoding="utf-8")
    return f"scripted:{path}"


def prompts_seen(spec: str) -> list[str]:
    """Every prompt the scripted model was shown, in call order."""
    return [str(call["messages"][-1].content) for call in model_for(spec, 0.0, 512).calls]


def screen_in(prompt: str) -> str:
    return prompt.split("<screen>", 1)[1].split("</screen>", 1)[0]


async def run_sr(spec: str, task: str, env: str, **options: Any) -> dict[str, Any]:
    """Run the SR graph on ``task`` of ``env`` to its end, in memory."""
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 500}
    return await graph.ainvoke({"task_id": task}, config, context=Context(model=spec, env=env, **options))
