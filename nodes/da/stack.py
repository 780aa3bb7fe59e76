"""The stack of Algorithm 1: push a_t over its remedies, pop, and backtrack to S'_t.

Backtracking (line 6) restores the env to the popped entry's snapshot (the URL and
scroll position for WebArena; a replay of the actions for MiniWoB and ALFWorld; the episode
state for WebShop and HotpotQA) through the env's own ``restore`` and records the new
snapshot in state; the restored page may number its elements differently, which
``needs_mapping`` detects by comparing the acted-on element's signature (the env interface's).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import EnvError, Interface
from nodes.da.context import DAContext
from nodes.da.map_element import same_element
from nodes.da.state import Backtrack, DAState, HistoryItem, Screen, StackEntry
from nodes.da.summarise import look
from nodes.runtime.channels import edit
from nodes.runtime.environment import restore
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node


def _fingerprint(screen: Screen) -> str:
    return json.dumps([screen["snapshot"], screen["observation"]], sort_keys=True, default=str)


def differs(state: DAState) -> bool:
    """S_t != S'_t: the popped entry was saved in another state than the current one."""
    entry = state.get("popped")
    if not entry:
        return False
    return _fingerprint(entry["state"]) != _fingerprint(state["current"])


def needs_mapping(state: DAState, interface: Interface) -> bool:
    """The popped action names an element that is not the same line on the current screen."""
    entry = state.get("popped")
    if not entry or not entry["action"] or not interface.element_ids:  # text envs name no elements
        return False
    return not same_element(interface, entry["action"], entry["state"]["observation"], state["current"]["observation"])


async def pop(state: DAState) -> dict[str, Any]:
    """(S'_t, a_t, tau) = Stack.pop() (line 5); ``popped`` is {} when the stack is empty."""
    stack = list(state.get("stack") or [])
    if not stack:
        return {"popped": {}}
    entry = stack.pop()
    update: dict[str, Any] = {"stack": edit(state["stack"], stack), "popped": entry, "proposal": []}
    if entry["action"]:
        update["subtask"] = entry["subtask"]  # the alternative continues the subtask it was made for
    return update


async def push(state: DAState) -> dict[str, Any]:
    """Push the remedies, then a_t on top so that the first answer is popped first (lines 17-18).

    The remedies go in reverse so that they pop in the order they were proposed: each one
    was asked for assuming the earlier answers wrong, so a_t^(1) is the next best guess.
    (Algorithm 1 pushes r = 1..R; with independently sampled remedies the order is moot.)
    """
    first, *remedies = state.get("proposal") or []
    screen, subtask = state["current"], state.get("subtask", -1)
    entries = [StackEntry(state=screen, action=a, subtask=subtask, origin="remedy") for a in reversed(remedies)]
    entries.append(StackEntry(state=screen, action=first, subtask=subtask, origin="action"))
    stack = state.get("stack") or []
    return {"stack": edit(stack, [*stack, *entries]), "proposal": []}


@model_node(caller_for)
async def backtrack(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """go_back(S'_t); S_t = S'_t (line 6): restore the saved snapshot and look again.

    A snapshot the env cannot restore drops the entry (``popped`` {}): the agent pops
    the next alternative.
    """
    entry = state["popped"]
    assert entry  # routed here only after a non-empty pop
    saved = entry["state"]
    episode = state.get("episode", 1)
    try:
        obs, snapshot = await restore(state, runtime.context, config, saved["snapshot"])
    except EnvError as exc:  # e.g. the page is gone: this alternative cannot be tried
        note = f"Could not go back to {saved['url'] or 'an earlier screen'}: {exc}"
        history = state.get("history") or []
        return {"popped": {}, "history": edit(history, [*history, HistoryItem(episode=episode, action="", text=note)])}
    budget = runtime.context.observation_budget
    current = await look(llm, state.get("goal", ""), obs, snapshot, budget, known=saved)
    update: dict[str, Any] = {
        "current": current,
        "observation": obs.text,
        "env_snapshot": snapshot,
    }
    if entry["action"]:  # a root entry only starts an episode; an alternative is a real backtrack
        backtracks, history = state.get("backtracks") or [], state.get("history") or []
        update["backtracks"] = edit(
            backtracks, [*backtracks, Backtrack(episode=episode, url=current["url"], action=entry["action"])]
        )
        where = f" to {current['url']}" if current["url"] else ""
        note = f"Went back{where} to try an alternative action."
        update["history"] = edit(history, [*history, HistoryItem(episode=episode, action="", text=note)])
    return update
