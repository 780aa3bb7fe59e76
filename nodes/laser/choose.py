"""A LASER step's two model calls: a rationale, then one function from the state's tools.

The prompts are the original's (``prompt_library.py``, byte for byte): the rationale's system
prompt frames the state's layout and its stage ("Every button in the observation represents a
possible action you can take..."), the action call's (Table 7) frames the same layout, and both
show the model "Current observation:" and the page. A rationale is asked as laser_agent.py asks
every call: at most 200 tokens, stopping at a blank line.

The function is chosen by native tool calling or, for models without it, by a JSON
object in the reply (the paper's ablation). A function outside the state's tools, an
argument outside its enum (with ``argument_enums``; matched regardless of case, as WebShop
lowercases a click), or arguments that are not JSON (a reply cut off) are refused and the model
asked again with the reason, as the answer to each of its calls. Without ``argument_enums`` (the
original's schemas) arguments are free strings, carried to the env as given.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

import prompts
from nodes.laser.space import free_strings, names
from nodes.runtime.llm import Caller
from nodes.runtime.parse import ParseError, json_object

ATTEMPTS = 3
RATIONALE_MAX_TOKENS = 200  # laser_agent.py's OpenAIModel(max_length=200, quote="\n\n")
RATIONALE_STOP = ("\n\n",)


@dataclass
class Choice:
    """The function the model chose, or ``None`` with the last refusal in ``problem``;
    ``rationale``: the rationale of its arguments, when a step of their own asked them."""

    name: str | None
    args: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    rationale: str = ""


def system_prompt(name: str, **values: str) -> str:
    """A system prompt as prompt_library.py writes it: each ends with a newline, which a prompt
    file is read without."""
    return prompts.render(name, **values) + "\n"


def state_prompt(instruction: str, layout: str) -> str:
    """A state's rationale prompt: its ``layout`` and ``instruction`` (prompt names) in the
    original's frame; without a layout, ``instruction`` is the whole prompt (a space's own)."""
    if not layout:
        return system_prompt(instruction)
    return system_prompt("laser/rationale", layout=prompts.render(layout), stage=prompts.render(instruction))


def action_prompt(layout: str) -> str:
    """Table 7's prompt with the state's layout (prompt name; '' for the generic sentence)."""
    return system_prompt("laser/action", layout=prompts.render(layout or "laser/any_layout"))


def observed(page: str) -> str:
    """What a LASER call shows of a page: "Current observation:" and the page."""
    return prompts.render("laser/current", observation=page)


def cleaned(text: str) -> str:
    """laser_agent.py's ``post_process_response``: the reply without "Rationale:", "Feedback:" and
    "RationaleN: " labels."""
    text = text.replace("Rationale:", "").strip().replace("Feedback:", "").strip()
    return re.sub(r"Rationale\d: ", "", text).strip()


async def ask(llm: Caller, system: str, user: str) -> str:
    """One text call as laser_agent.py makes it: at most 200 tokens, stopping at a blank line."""
    reply = await llm([SystemMessage(system), HumanMessage(user)], max_tokens=RATIONALE_MAX_TOKENS, stop=RATIONALE_STOP)
    return reply.text


async def rationale(llm: Caller, system: str, user: str) -> str:
    """The state's rationale for the next action (Tables 4-6)."""
    return cleaned(await ask(llm, system, user))


def validate(name: str, args: dict[str, Any], tools: list[dict[str, Any]]) -> str:
    """Why a call is not allowed ('' when it is): unknown function, a missing argument (Buy_Now
    needs one value per customization type), an unknown one, or one outside its values."""
    allowed = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    if name not in allowed:
        return f"The function {name!r} is not available in the current state."
    schema = allowed[name]
    for key in schema.get("required", []):
        if args.get(key) in (None, ""):
            return f"The function {name!r} needs the argument {key!r}."
    for key, value in args.items():
        prop = schema["properties"].get(key)
        if prop is None:
            return f"The function {name!r} has no argument {key!r}."
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return f"The argument {key!r} of {name!r} takes one value, not {value!r}."
        enum = prop.get("enum")
        if enum and str(value).lower() not in {str(allowed).lower() for allowed in enum}:
            return f"{value!r} is not a valid {key} here; valid values: {', '.join(enum)}."
    return ""


def _json_mode_system(tools: list[dict[str, Any]], layout: str) -> str:
    functions = "\n".join(json.dumps(t["function"]) for t in tools)
    return (
        action_prompt(layout)
        + "\n"
        + prompts.render("laser/json_actions", functions=functions, example=names(tools)[0])
    )


def _read_reply(reply: AIMessage, mode: str) -> tuple[str | None, dict[str, Any], str]:
    """(name, args, parse problem) from a tool call or a JSON reply."""
    if mode == "json":
        try:
            data = json_object(reply.text)
        except ParseError as exc:
            return None, {}, str(exc)
        args = data.get("arguments", data.get("args", {}))
        if not isinstance(data.get("name"), str) or not isinstance(args, dict):
            return None, {}, 'Reply with {"name": <function>, "arguments": {...}}.'
        return data["name"], args, ""
    if not reply.tool_calls:
        if reply.invalid_tool_calls:  # arguments that are not JSON, e.g. a reply cut off by the token limit
            bad = reply.invalid_tool_calls[0]
            return (
                None,
                {},
                (f"The arguments of {bad.get('name')!r} are not valid JSON: {str(bad.get('args') or '')[:200]!r}."),
            )
        return None, {}, "You did not call a function."
    call = reply.tool_calls[0]
    return call["name"], dict(call.get("args") or {}), ""


async def choose_function(
    llm: Caller,
    observation: str,
    why: str,
    tools: list[dict[str, Any]],
    mode: str,
    layout: str = "",
    *,
    enums: bool,
) -> Choice:
    """Table 7: turn the rationale into one of ``tools``, re-asking on a refusal. ``layout``: the
    prompt of the state's layout, which the original's prompt shows; ``enums``: keep the page's
    values as the arguments' enums (else free strings, as the original's schemas)."""
    if not enums:
        tools = free_strings(tools)
    user = prompts.render("laser/action_input", observation=observation, rationale=why)
    system = _json_mode_system(tools, layout) if mode == "json" else action_prompt(layout)
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
    problem = ""
    for attempt in range(1, ATTEMPTS + 1):
        reply = await llm(
            messages, tools=None if mode == "json" else tools, tool_choice=None if mode == "json" else "any"
        )
        name, args, problem = _read_reply(reply, mode)
        if name is not None:
            problem = validate(name, args, tools)
            if not problem:
                return Choice(name, args)
        llm.unreadable(f"asked again: {problem}" if attempt < ATTEMPTS else f"refused {ATTEMPTS} times: {problem}")
        retry = prompts.render("laser/retry", problem=problem, allowed=", ".join(names(tools)))
        messages.append(reply)
        calls = [*reply.tool_calls, *reply.invalid_tool_calls]  # the API wants each one answered
        if calls:
            messages.extend(ToolMessage(retry, tool_call_id=c["id"] or "") for c in calls)
        else:
            messages.append(HumanMessage(retry))
    return Choice(None, problem=problem)
