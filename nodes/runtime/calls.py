"""The record of one model call: what was asked, what came back, its tokens, time and retries.

One shape serves two stores. Every model call a node makes is kept in graph state, in the
``calls`` log every method's state inherits (nodes.runtime.state; the ``model_node`` wrapper writes a
node's calls with its usage), so a thread's checkpoints say what the model was asked and
answered at each step: ``introspect view`` shows them and ``introspect export`` turns them
into training data. A recording (``--record``, nodes.runtime.recording) writes the same record as a
JSON line, so a thread checkpointed before the log existed is shown from its recording.

The log is a ``log()`` channel (nodes.runtime.channels): a checkpoint stores only the calls its step
made, not every call so far again. Nothing secret enters it: a request holds only what the
graph composed, and the record passes through ``redact`` as a recorded line does.

This module holds plain data and functions over it (no model stack), so the viewer and the
exporter read records without importing langchain.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.secrets import secret_values


class Verdict(TypedDict, total=False):
    """A method's judgement of its own progress, read from one reply (nodes.runtime.verdicts)."""

    kind: str  # the place's kind (``nodes.runtime.verdicts.Place``)
    value: str  # the verdict as read: "YES", "NO", "Buy_Now", "cycle", ...
    says: bool  # whether it says the task is (or will be) accomplished
    graded: float  # a graded place's number in [0, 1]


class Kept(TypedDict):
    """Where the reply journal (nodes.runtime.journal) keeps a call's whole record: the
    checkpoint of the step that made it and the record's key there."""

    checkpoint_ns: str
    checkpoint_id: str
    key: str


class ModelCall(TypedDict, total=False):
    """One model call, as the state's log and a recording's line hold it."""

    task_id: str | None
    position: int  # the run's model-call count before it: where a script or recording answers from
    step: int | None  # LangGraph's superstep and node that made it
    node: str | None
    model: str  # the spec that answered (a judge's may differ from the run's)
    request: dict[str, Any]  # messages, tools (OpenAI form), tool_choice, stop, max_tokens, temperature, top_p
    content: Any  # the reply's text (a list of parts for some providers)
    tool_calls: list[dict[str, Any]]  # [{"name", "args", "id"}]
    usage: dict[str, Any]  # the reply's usage metadata: input_tokens, output_tokens, ...
    seconds: float  # wall time of the call, retries included
    retries: int  # requests sent again after a transient failure
    unreadable: str  # the reply could not be read: what the method did instead (absent when it was read)
    verdict: Verdict  # the reply gave a verdict on the method's progress (nodes.runtime.verdicts; absent otherwise)
    kept: Kept  # in the state's log: where the journal keeps the whole record (absent: the log has it whole)


WHOLE = ("request", "content", "tool_calls")  # what of a journaled call only the journal keeps


def redacted(call: ModelCall) -> ModelCall:
    """``call`` with every key-like environment variable's value replaced (nodes.runtime.secrets);
    ``call`` itself when no such variable is set (a record is built fresh for each call)."""
    secrets = secret_values()
    return _scrubbed(call, secrets) if secrets else call


def _scrubbed(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, "***")
        return value
    if isinstance(value, Mapping):
        return {str(key): _scrubbed(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(item, secrets) for item in value]
    return value


def logged(call: ModelCall) -> ModelCall:
    """``call`` as the state's log keeps it: a journaled call without its request and reply,
    which the journal keeps (``whole`` puts them back), so that a checkpoint does not hold
    every call's messages; an unreadable reply stays (results list it). A call made without a
    checkpointer, which has no journal, is kept whole."""
    if "kept" not in call:
        return call
    drop = ("request",) if call.get("unreadable") else WHOLE
    return ModelCall(**{key: value for key, value in call.items() if key not in drop})  # type: ignore[typeddict-item]


def whole(call: Mapping[str, Any], journaled: Mapping[tuple[str, str, str], ModelCall]) -> ModelCall:
    """A call of the state's log with what the journal keeps of it (``logged``); a call logged
    whole (a thread checkpointed before the journal kept them, a run without one) as it is."""
    kept = call.get("kept")
    record = journaled.get((kept["checkpoint_ns"], kept["checkpoint_id"], kept["key"])) if kept else None
    return ModelCall(**{**(record or {}), **call})  # type: ignore[typeddict-item]  # a record's own keys


def tokens(call: Mapping[str, Any]) -> tuple[int, int]:
    """A call's (input, output) tokens."""
    usage = call.get("usage") or {}
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


def at_positions(lines: Iterable[Mapping[str, Any]], task_id: str | None, start: int, stop: int) -> list[ModelCall]:
    """The recorded calls of ``task_id`` at positions ``start`` to ``stop`` (excluded), in order;
    of a call recorded twice (a step run again after a crash) the last, as a replay takes it."""
    found: dict[int, ModelCall] = {}
    for line in lines:
        position = line.get("position")
        if line.get("task_id") == task_id and isinstance(position, int) and start <= position < stop:
            found[position] = ModelCall(**line)  # type: ignore[typeddict-item]  # a line is a record's JSON
    return [found[p] for p in sorted(found)]


def unreadable_replies(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The replies a run could not read and what its method did with each, for its results row:
    position, node, the reply's first 300 characters (text, or its tool calls) and the handling."""
    out = []
    for call in calls:
        if call.get("unreadable"):
            content = call.get("content")
            reply = content if isinstance(content, str) and content else json.dumps(call.get("tool_calls") or [])
            out.append(
                {
                    "position": call.get("position"),
                    "node": call.get("node"),
                    "reply": reply[:300],
                    "handling": call["unreadable"],
                }
            )
    return out


ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def openai_tool_calls(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls as the OpenAI chat API writes them: arguments as a JSON string."""
    return [
        {
            "id": call.get("id") or f"call_{index}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("args") or {}, ensure_ascii=False)},
        }
        for index, call in enumerate(calls)
    ]


def openai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message of a request (nodes.runtime.recording.message_record) in the OpenAI chat format."""
    out: dict[str, Any] = {
        "role": ROLES.get(str(message.get("role")), str(message.get("role"))),
        "content": message.get("content", ""),
    }
    if message.get("tool_calls"):
        out["tool_calls"] = openai_tool_calls(message["tool_calls"])
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


def openai_chat(call: Mapping[str, Any]) -> dict[str, Any]:
    """One call as a line of OpenAI's fine-tuning format: the messages sent, then the reply as
    the assistant's message (its tool calls in OpenAI form), and the tools it was offered."""
    request = call.get("request") or {}
    reply: dict[str, Any] = {"role": "assistant", "content": call.get("content", "")}
    if call.get("tool_calls"):
        reply["tool_calls"] = openai_tool_calls(call["tool_calls"])
    line: dict[str, Any] = {"messages": [*(openai_message(m) for m in request.get("messages") or []), reply]}
    if request.get("tools"):
        line["tools"] = request["tools"]
    return line
