"""A chat model that answers from a JSONL script, for demos, tests and dry runs.

Each line is ``{"content": "...", "tool_calls": [{"name": ..., "args": {...}}]}``, with an
optional ``"delay"`` in seconds that imitates a real model's latency (demos, crash tests).
The reply for a call is the line at the call's *position*, which the caller takes from
the model-call count kept in graph state; so a resumed run continues the script exactly
where its checkpoint left it. Every call is recorded in ``calls`` (the tools offered
and the prompt, with the call's stop sequences and token limit), which lets tests assert
what the agent was shown and how it was asked. A reply is cut at the call's first stop
sequence, as a server cuts it.

A script named by file is read on its first call, in a worker thread, never on the event
loop (LangGraph's server refuses blocking calls there); ``load()`` reads it earlier where a
malformed script must be refused up front.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from errors import UserError


class ScriptError(UserError, ValueError):
    """The script file is missing, malformed, or has run out of replies."""


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a JSONL script."""
    file = Path(path)
    if not file.is_file():
        raise ScriptError(f"script file not found: {file}")
    replies: list[dict[str, Any]] = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{file}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("content", ""), str):
            raise ScriptError(f"{file}:{number}: expected an object with a string 'content'")
        replies.append(reply)
    return replies


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the first of the stop sequences, as a server that honours ``stop`` sends it."""
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return text[: min(cuts)] if cuts else text


def _approx_tokens(text: str) -> int:
    """Scripted runs report tokens estimated at four characters each."""
    return max(1, len(text) // 4) if text else 0


class ScriptedChatModel(BaseChatModel):
    """Replies from a fixed list; position comes from the caller (``script_position``)."""

    replies: list[dict[str, Any]] | None = None  # None: read from ``source`` on first use
    source: str = "<inline>"
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        """A model for the script at ``path``, read on first use (a missing file fails now)."""
        if not Path(path).is_file():
            raise ScriptError(f"script file not found: {path}")
        return cls(source=str(path))

    def load(self) -> list[dict[str, Any]]:
        """The replies, read from the script file the first time."""
        if self.replies is None:
            self.replies = load_script(self.source)
        return self.replies

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        result, delay = self._reply(messages, stop, kwargs)
        if delay:
            time.sleep(delay)
        return result

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The reply on the event loop: without this, LangChain would run ``_generate`` in a
        worker thread for every call (a thread switch, and a wait for the interpreter lock
        whenever the loop is busy), which a script does not need. Only the script file's first
        read goes to a thread."""
        if self.replies is None:
            await asyncio.to_thread(self.load)
        result, delay = self._reply(messages, stop, kwargs)
        if delay:
            await asyncio.sleep(delay)
        return result

    def _reply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[ChatResult, float]:
        """The scripted reply for this call and the delay it should take."""
        position = int(kwargs.get("script_position", len(self.calls)))
        offered = [t["function"]["name"] for t in kwargs.get("tools", []) or []]
        prompt = "\n".join(str(m.content) for m in messages)
        self.calls.append(
            {
                "position": position,
                "tools": offered,
                "messages": messages,
                "stop": list(stop or []),
                "max_tokens": kwargs.get("max_tokens"),
            }
        )
        replies = self.load()
        if position >= len(replies):
            raise ScriptError(f"script {self.source} has {len(replies)} replies; call {position + 1} asked for more")
        reply = replies[position]
        content = cut_at_stop(reply.get("content", ""), stop or [])
        tool_calls = [
            {"name": c["name"], "args": c.get("args", {}), "id": c.get("id", f"call_{position}_{i}")}
            for i, c in enumerate(reply.get("tool_calls", []) or [])
        ]
        usage = {
            "input_tokens": _approx_tokens(prompt),
            "output_tokens": _approx_tokens(content + json.dumps(tool_calls)),
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        message = AIMessage(content=content, tool_calls=tool_calls, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)]), float(reply.get("delay") or 0.0)
