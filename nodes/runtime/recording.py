"""Record every model exchange of a run, and replay a recording instead of a model.

A recording is JSONL, one line per model call: where it was made (``task_id``,
``position``: the model-call count the Caller starts from, kept in graph state, so it is
the same on every run of the same graph; ``step`` and ``node``: LangGraph's), what was
asked (``request``: the messages, the tool schemas, tool_choice, stop sequences and the
call's max_tokens), what came back (``content``, ``tool_calls``, ``usage``), which model
answered (``model``), and how long it took (``seconds``, ``retries``): the record of
nodes.runtime.calls, which graph state also keeps (its ``calls`` log). ``content`` and
``tool_calls`` sit at the top level, so a
recording is also a script (``scripted:FILE`` replays it by line order, unchecked).

``replay:FILE`` (``ReplayChatModel``) answers call (task, position) with the recorded reply
and its recorded usage, after checking that the graph asks what was recorded: a changed
prompt, tool list or limit is a ``ReplayMismatch`` naming the call, its step and node, and
the first difference. Local servers get a free port on every run (the local shop,
MiniWoB's pages), so ``127.0.0.1:PORT`` and ``localhost:PORT`` compare equal whatever
the port.

Nothing secret is written: the request holds no headers or client settings, only what
the graph composed, and every line passes through ``redact`` (key-like environment
variables). Lines are written by one worker thread, in call order, so recording never
blocks the event loop.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from nodes.runtime.calls import ModelCall, redacted
from nodes.runtime.scripted import ScriptedChatModel, ScriptError, load_script
from nodes.runtime.secrets import redact


class ReplayMismatch(ScriptError):
    """The graph asked something the recording does not hold."""


def message_record(message: BaseMessage) -> dict[str, Any]:
    """A message as JSON: its role, content and, for replies and tool results, their calls and ids."""
    record: dict[str, Any] = {"role": message.type, "content": message.content}
    calls = getattr(message, "tool_calls", None)
    if calls:
        record["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in calls]
    tool_call_id = getattr(message, "tool_call_id", None)  # a ToolMessage's
    if tool_call_id:
        record["tool_call_id"] = tool_call_id
    return record


def request_record(
    messages: Sequence[BaseMessage],
    tools: Sequence[Any] | None,
    tool_choice: str | None,
    stop: Sequence[str],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """What one call asks, as JSON: the messages, the tool schemas as the OpenAI API receives
    them, and ``settings`` (the call's max_tokens, temperature, top_p)."""
    return {
        "messages": [message_record(m) for m in messages],
        "tools": [t if isinstance(t, dict) and "function" in t else convert_to_openai_tool(t) for t in tools or []],
        "tool_choice": tool_choice,
        "stop": list(stop),
        **settings,
    }


def where() -> tuple[int | None, str | None]:
    """LangGraph's step and node of the call under way (None outside a graph)."""
    try:
        from langgraph.config import get_config

        meta = get_config().get("metadata") or {}
    except RuntimeError:  # not inside a graph
        return None, None
    return meta.get("langgraph_step"), meta.get("langgraph_node")


class Recorder:
    """Appends one JSON line per model call to a file, from a single worker thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="introspect-recorder")

    def check(self) -> None:
        """Refuse, before anything runs, a path that cannot be written."""
        if self.path.is_dir():
            raise ScriptError(f"--record {self.path} is a directory; name a .jsonl file")
        for parent in self.path.parents:
            if parent.exists() and not parent.is_dir():
                raise ScriptError(f"cannot create recording {self.path}: {parent} is not a directory")

    async def write(self, line: Mapping[str, Any]) -> None:
        text = redact(json.dumps(line, ensure_ascii=False, default=str)) + "\n"
        await asyncio.get_running_loop().run_in_executor(self._writer, self._append, text)

    def _append(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)


# The recorder of the command under way (``--record``); tasks started by it inherit it.
RECORDER: ContextVar[Recorder | None] = ContextVar("introspect_recorder", default=None)


@contextmanager
def recording(path: str | Path) -> Iterator[Recorder]:
    """Record the model calls made inside (tasks started there too) to ``path``, appended: a
    resumed run continues its recording."""
    recorder = Recorder(path)
    recorder.check()
    token = RECORDER.set(recorder)
    try:
        yield recorder
    finally:
        RECORDER.reset(token)


def call_record(
    spec: str,
    task: str | None,
    position: int,
    request: dict[str, Any],
    reply: AIMessage,
    seconds: float,
    retries: int,
) -> ModelCall:
    """One exchange as the state's call log and a recording keep it (nodes.runtime.calls), redacted."""
    step, node = where()
    return redacted(
        ModelCall(
            task_id=task,
            position=position,
            step=step,
            node=node,
            model=spec,
            content=reply.content,
            tool_calls=[{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in reply.tool_calls],
            usage=dict(reply.usage_metadata or {}),
            seconds=round(seconds, 3),
            retries=retries,
            request=request,
        )
    )


async def record_call(call: ModelCall) -> None:
    """Write one exchange to the recorder under way, if any."""
    recorder = RECORDER.get()
    if recorder is not None:
        await recorder.write(call)


def reply_of(call: Mapping[str, Any]) -> AIMessage:
    """The reply a record holds (a recording's line, a journaled reply: nodes.runtime.journal), as the
    model gave it: its text, tool calls and usage."""
    position = call.get("position", 0)
    return AIMessage(
        content=call.get("content", ""),
        usage_metadata=call.get("usage") or None,
        tool_calls=[
            {"name": c["name"], "args": c.get("args", {}), "id": c.get("id") or f"call_{position}_{i}"}
            for i, c in enumerate(call.get("tool_calls") or [])
        ],
    )


_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d+")


def _normal(value: Any) -> str:
    """A request as compared: JSON with local ports blanked."""
    return _PORT.sub(r"\1:PORT", json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def same_request(recorded: Any, asked: Any) -> bool:
    """Whether two requests ask the same (local ports aside)."""
    return _normal(recorded) == _normal(asked)


def first_difference(recorded: dict[str, Any], asked: dict[str, Any]) -> str:
    """Where two requests first differ, in words (which message or field, and around what)."""
    for key in sorted((set(recorded) | set(asked)) - {"messages"}):
        if _normal(recorded.get(key)) != _normal(asked.get(key)):
            return f"{key} differs: recorded {_normal(recorded.get(key))[:120]}, asked {_normal(asked.get(key))[:120]}"
    old, new = recorded.get("messages") or [], asked.get("messages") or []
    for index, (a, b) in enumerate(zip(old, new)):
        left, right = _normal(a), _normal(b)
        if left != right:
            at = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
            return (
                f"message {index + 1} ({b.get('role')}) differs at character {at}: recorded "
                f"{left[max(0, at - 40) : at + 60]!r}, asked {right[max(0, at - 40) : at + 60]!r}"
            )
    return f"it has {len(new)} messages, the recording {len(old)}"


class ReplayChatModel(ScriptedChatModel):
    """Answers from a recording by (task, position), checking each request against it."""

    @property
    def _llm_type(self) -> str:
        return "replay"

    def _reply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[ChatResult, float]:
        position = int(kwargs.get("script_position", 0))
        task = kwargs.get("script_task")
        asked = kwargs.get("replay_request") or request_record(
            messages, kwargs.get("tools"), kwargs.get("tool_choice"), stop or [], {}
        )
        self.calls.append({"position": position, "task_id": task, "request": asked})
        line = self.lookup(task, position)
        step, node = where()
        here = f"call {position + 1} of task {task!r} (graph step {step}, node {node})"
        if line is None:
            raise ReplayMismatch(f"recording {self.source} has no {here}: the run asks more than was recorded")
        if not same_request(line.get("request"), asked):
            raise ReplayMismatch(
                f"recording {self.source} does not hold {here}: the graph asks something other than the recorded "
                f"call (step {line.get('step')}, node {line.get('node')}): {first_difference(line['request'], asked)}"
            )
        message = reply_of(line)
        return ChatResult(generations=[ChatGeneration(message=message)]), float(line.get("delay") or 0.0)

    def lookup(self, task: str | None, position: int) -> dict[str, Any] | None:
        """The recorded call (the last one, when a re-run step recorded it twice)."""
        found = None
        for line in self.load():
            if line.get("position") == position and line.get("task_id") == task:
                found = line
        return found

    def load(self) -> list[dict[str, Any]]:
        if self.replies is None:
            lines = load_script(self.source)
            for number, line in enumerate(lines, 1):
                if not isinstance(line.get("request"), dict) or not isinstance(line.get("position"), int):
                    raise ScriptError(
                        f"{self.source}:{number}: not a recording (no request or position); "
                        "a script without requests replays with scripted:FILE"
                    )
            self.replies = lines
        return self.replies
