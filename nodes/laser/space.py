"""LASER's state space as a declared object: what makes LASER's graph a builder for any site.

LASER (paper 003) models an interactive task as a finite set of states; in each state the
agent sees a state-specific instruction and may call only that state's functions, each of
which carries the agent to a state (Figure 1). A ``StateSpace`` declares exactly that:

- its ``states``, each with the prompt of its instruction (``prompts/<name>.md``), optionally of
  its layout (the original frames the two in one prompt, and shows the layout to the action call
  too), and its ``tools``;
- each ``Tool``: the function schema the model is offered (its arguments may be filled from the
  current page, e.g. the item ids a results page lists), the env actions that carry a call out,
  and the state it leads to (``FINISH`` ends the episode);
- ``classify``: how an observation is read into a small JSON ``Page`` summary, including the
  state the page is in (so that routing, the buffer and argument enums never need the live env);
- optionally a ``Backup``: how the backup strategy ends the task from the best examined item.

``graphs.laser.build_graph(space=...)`` builds the graph from a space: one node per state, an
``execute`` node, and conditional edges labelled by the tools that lead to each state. The
declared spaces are ``nodes.laser.webshop.WEBSHOP`` (the paper's) and
``nodes.laser.shop.LOCAL_SHOP`` (the project's local shop through the WebArena env).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from envs.base import Observation

FINISH = "finish"  # a tool leading here ends the episode (a purchase, an answer)


class Page(TypedDict, total=False):
    """What LASER keeps of a page in state (JSON): its state and what the tools need from it."""

    state: str  # the LASER state the page is in
    item_ids: list[str]  # the items a results page lists (select_item's values)
    options: dict[str, list[str]]  # an item's customization type -> values
    asin: str  # the item an item page shows (its id in the buffer)
    title: str
    price: str
    section: str  # the text of a detail page (WebShop's Description / Features / Reviews)
    elements: dict[str, str]  # control name -> element id, for spaces whose actions name element ids


def no_parameters(page: Page) -> dict[str, Any]:
    return {"type": "object", "properties": {}, "required": []}


def string_parameter(description: str, values: Sequence[str] = ()) -> dict[str, Any]:
    """A string argument; ``values`` (when any) become its enum, so that a model which follows
    the schema cannot name something the page does not offer."""
    schema: dict[str, Any] = {"type": "string", "description": description}
    if values:
        schema["enum"] = list(values)
    return schema


def free_strings(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tools`` with every argument a free string, its enum left out: laser_agent.py's schemas
    (``argument_enums=false``), whose values go to the env as the model gives them."""
    freed = []
    for tool in tools:
        function = tool["function"]
        schema = function["parameters"]
        properties = {key: {k: v for k, v in prop.items() if k != "enum"} for key, prop in schema["properties"].items()}
        freed.append({**tool, "function": {**function, "parameters": {**schema, "properties": properties}}})
    return freed


def parameters(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


@dataclass(frozen=True)
class Customise:
    """A finishing call whose arguments get a step of their own, as laser_agent.py buys: the state
    offers the tool without arguments; once it is chosen the model names the item's customisation
    types (the ``types`` prompt, answered "type1, type2" or "None"), writes a rationale for the
    values (the ``instruction`` in the frame of the ``layout``) and calls the tool again, forced,
    with one argument per type named (``parameters(types, page)``, described by ``description``)."""

    types: str  # prompt name
    instruction: str  # prompt name
    layout: str  # prompt name
    description: str
    parameters: Callable[[Sequence[str], Page], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One function of a state: its schema, its env actions and where it leads.

    ``actions(args, page)`` returns the env actions (in the env's grammar) that carry out a call
    with ``args`` on ``page``; they run in order and stop at the first the env refuses.
    ``reads_then``: a detail page (not a transition): its text is kept for the item being
    examined, these actions go back to the item, and it is not offered again for that item.
    ``target``: the call's arguments describe what the user looks for (the item state shows the
    last such call's ``keywords`` / ``max_price``, Table 6).
    ``examines``: the argument naming the item a call opens (WebShop's ``select_item``: ``item_id``);
    naming one examined before is asked again, as laser_agent.py asks again.
    ``logged``: how the original's history writes a call (default: ``name({...})``).
    ``customise``: the call's arguments are asked in a step of their own (``Customise``).
    ``tolerates_refusals``: an action before the last that the env refuses is passed over, as the
    env ignores it (laser_agent.py clicks each option value it was given, then Buy Now; WebShop
    ignores a click it cannot make); only the last action's refusal refuses the call.
    ``backtracks``: the call goes back to an earlier state (WebShop's Prev and Back_to_Search), the
    paper's backtracking, which ``backtracking=false`` (an ablation) does not offer.
    """

    name: str
    description: str
    to: str  # the state the call leads to, or FINISH
    actions: Callable[[dict[str, Any], Page], list[str]]
    parameters: Callable[[Page], dict[str, Any]] = no_parameters
    reads_then: tuple[str, ...] = ()
    target: bool = False
    examines: str = ""
    logged: Callable[[dict[str, Any]], str] | None = None
    customise: Customise | None = None
    tolerates_refusals: bool = False
    backtracks: bool = False

    def schema(self, page: Page, bare: bool = False) -> dict[str, Any]:
        """The function schema offered to the model on ``page`` (``bare``: without arguments)."""
        return function_schema(self.name, self.description, no_parameters(page) if bare else self.parameters(page))


@dataclass(frozen=True)
class State:
    """A LASER state: the prompt of its instruction and the tools it offers."""

    name: str
    instruction: str  # prompt name, e.g. "laser/search_state"
    tools: tuple[Tool, ...]
    layout: str = ""  # prompt name of the page's layout, e.g. "laser/search_layout" ('': none apart)


@dataclass(frozen=True)
class Backup:
    """The backup strategy (paper 003, section 2): out of steps, choose the best examined item
    (``choose``, a function over their ids, asked with the ``select`` prompt), reopen it and end
    the task with ``finish``, whose arguments are asked as its ``customise`` step declares."""

    select: str  # prompt name
    layout: str  # prompt name: the examined items' layout in the rationale prompt
    choose: Callable[[Sequence[str]], dict[str, Any]]  # the schema choosing one examined item id
    choose_layout: str  # prompt name: the layout the choosing call's prompt shows
    finish: Tool  # declares its Customise step


@dataclass(frozen=True)
class StateSpace:
    """The states a site's pages can be in, their tools, and how a page is classified.

    ``history_state``: the state whose prompt shows the original's history (the calls since it
    was last shown: laser_agent.py shows it on the search page, after backtracking).
    ``shows_goal``: the page text already shows the user's instruction (WebShop's pages do);
    otherwise LASER puts "Instruction:" and the task's goal above the page. ``item_state``: the
    state in which an item is examined (its buffer and detail pages belong there). ``ended``:
    what the finishing tool does, in words for the stop reason ("bought", "answered").
    """

    name: str
    states: tuple[State, ...]
    classify: Callable[[Observation], Page]
    shows_goal: bool = True
    history_state: str = "search"
    item_state: str = "item"
    ended: str = "bought"
    backup: Backup | None = None

    def __post_init__(self) -> None:
        names = [state.name for state in self.states]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"state space {self.name!r}: states need distinct names")
        for state in self.states:
            for tool in state.tools:
                if tool.to not in (*names, FINISH):
                    raise ValueError(
                        f"state space {self.name!r}: {state.name}.{tool.name} leads to "
                        f"{tool.to!r}, which is not a state"
                    )

    def state(self, name: str) -> State:
        return next(state for state in self.states if state.name == name)

    def tool(self, state: str, name: str) -> Tool:
        return next(tool for tool in self.state(state).tools if tool.name == name)

    def transitions(self) -> dict[str, dict[str, str]]:
        """Each state's functions and the state each leads to (Figure 1)."""
        return {state.name: {tool.name: tool.to for tool in state.tools} for state in self.states}

    def tools_for(
        self, state: str, page: Page, read: Iterable[str] = (), customise: bool = True, backtracking: bool = True
    ) -> list[dict[str, Any]]:
        """The function schemas the model may call in ``state`` on ``page``; ``read`` names the
        detail pages already read for the current item (not offered again). With ``customise`` a
        tool with a customisation step is offered without arguments (they are asked after);
        without ``backtracking`` the tools that go back are not offered."""
        done = set(read)
        return [
            tool.schema(page, bare=customise and tool.customise is not None)
            for tool in self.state(state).tools
            if not (tool.reads_then and tool.name in done) and (backtracking or not tool.backtracks)
        ]


def merged_transitions(spaces: Iterable[StateSpace]) -> dict[str, dict[str, str]]:
    """The states and transitions of several spaces together (one graph serving them all)."""
    merged: dict[str, dict[str, str]] = {}
    for space in spaces:
        for state, functions in space.transitions().items():
            merged.setdefault(state, {}).update(functions)
    return merged


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]
