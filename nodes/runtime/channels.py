"""State fields checkpointed as each step's change rather than whole at every step.

A checkpointer stores every channel's value in every checkpoint. For a field that grows
(a trajectory with the page text of every step, SR's screens, the DA stack of saved
screens, AutoPlan's chat) that made a checkpoint's size grow with the run: LASER's was
15x larger at step 30 than at step 1. These fields are LangGraph's ``DeltaChannel``:
a checkpoint stores only what its step wrote, and a field's value is rebuilt by replaying
the writes since its last snapshot (every ``SNAPSHOT_EVERY`` updates), which the SQLite,
Postgres and in-memory checkpointers do in one query. Nodes still read whole values.

Two kinds of field, by how nodes write them:

- a **log** (``log()``): each write is a list of new items, appended (the trajectory,
  AutoPlan's chat and experiences), as ``operator.add`` did;
- a **record** (``record()``): a write replaces the value; for a list it may instead be an
  ``Edit``, ``{"keep": n, "then": [...]}``: keep the first n items, then these. Nodes
  write ``edit(old, new)``, which is only the change (a push, a pop, a replaced last
  item). A whole value (what Studio's state editor sends) still replaces, so the reducer
  cannot refuse one; a node's whole list that repeats items the list holds is refused
  where the graphs register their nodes (``check_edits``, graphs.edges). A record
  replaced at most steps (``current()``: the observation, a screen) holds page text that
  then sits in a checkpoint only at the step that showed it, not in every later one.

An unwritten field reads as its type's empty value ([] or {}), not as a missing key.
Both reducers fold the writes in order, so two batches applied in turn give what their
concatenation gives, as DeltaChannel requires; both keep every value plain JSON.

DeltaChannel is a **beta** LangGraph API, and its stored format (the snapshot marker in a
checkpoint, the writes a field is rebuilt from) may change in a LangGraph release. Every
state field annotated with ``log()``, ``record()`` or ``current()`` depends on it: the
trajectory, observation and env snapshot of every run, and each method's growing fields.
A checkpoint file written by an earlier version is pinned by
tests/nodes/test_checkpoint_format.py, which reads it back and resumes it: it must pass
before a LangGraph upgrade, since the threads on users' disks are in that format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from langgraph.channels.delta import DeltaChannel
from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from errors import IntrospectError

# Updates of a field between two full snapshots of it: a step that snapshots stores the
# whole value once; reading a field replays the writes since. A field replaced at most
# steps (the page on screen) snapshots more often, so that reading it replays few pages.
SNAPSHOT_EVERY = 100
CURRENT_SNAPSHOT_EVERY = 10


class Edit(TypedDict):
    """The change to a list: keep its first ``keep`` items, then append ``then``."""

    keep: int
    then: list[Any]


def is_edit(write: Any) -> bool:
    return isinstance(write, dict) and write.keys() == {"keep", "then"}


def appended(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """A log's reducer: every write's items at the end."""
    out = list(value)
    for items in writes:
        out.extend(items)
    return out


def revised(value: Any, writes: Sequence[Any]) -> Any:
    """A record's reducer: each write replaces the value, an Edit changes a list's tail."""
    for write in writes:
        if is_edit(write) and isinstance(value, list):
            value = value[: write["keep"]] + list(write["then"])
        else:
            value = write
    return value


def log() -> DeltaChannel:
    return DeltaChannel(appended, snapshot_frequency=SNAPSHOT_EVERY)


def record() -> DeltaChannel:
    return DeltaChannel(revised, snapshot_frequency=SNAPSHOT_EVERY)


def current() -> DeltaChannel:
    """A record replaced at most steps (the observation, the env snapshot, a screen)."""
    return DeltaChannel(revised, snapshot_frequency=CURRENT_SNAPSHOT_EVERY)


def edit(old: Sequence[Any], new: Sequence[Any]) -> Edit:
    """The write that turns list ``old`` into ``new``: their common start is kept."""
    keep = 0
    for before, after in zip(old, new):
        if before is not after and before != after:
            break
        keep += 1
    return Edit(keep=keep, then=list(new[keep:]))


def length(write: Any) -> int:
    """The length of a list after a write to it (for reading node updates as they stream)."""
    if is_edit(write):
        return write["keep"] + len(write["then"])
    return len(write) if isinstance(write, list) else 0


def added(write: Any) -> list[Any]:
    """The items a list write adds (for reading node updates as they stream)."""
    if is_edit(write):
        return list(write["then"])
    return list(write) if isinstance(write, list) else []


def reducers(schema: type) -> dict[str, Callable[[Any, Any], Any]]:
    """How each field of state ``schema`` that has a reducer folds one write into its value, as
    LangGraph's channel folds it: a field of this module by its reducer over that one write, a
    field annotated with a binary operator (``Annotated[Usage, add_usage]``) by the operator.
    Fields without one are replaced by a write. For a node that reads the state its own update
    leads to (graphs.edges.add_routed_node)."""
    found: dict[str, Callable[[Any, Any], Any]] = {}
    for name, hint in get_type_hints(schema, include_extras=True).items():
        for meta in hint.__metadata__ if get_origin(hint) is Annotated else ():
            if isinstance(meta, DeltaChannel):
                found[name] = _folding(meta.reducer)
            elif callable(meta):
                found[name] = meta
    return found


def _folding(reducer: Callable[[Any, Sequence[Any]], Any]) -> Callable[[Any, Any], Any]:
    return lambda value, write: reducer([] if value is None else value, [write])


class WholeListWritten(IntrospectError, ValueError):
    """A node wrote a list record whole, repeating items it held, instead of ``edit(old, new)``."""


def edited_lists(schema: type) -> frozenset[str]:
    """The fields of state ``schema`` that nodes write with ``edit``: the lists kept as records."""
    return frozenset(
        name
        for name, hint in get_type_hints(schema, include_extras=True).items()
        if get_origin(hint) is Annotated
        and get_origin(get_args(hint)[0]) is list
        and any(isinstance(meta, DeltaChannel) and meta.reducer is revised for meta in hint.__metadata__)
    )


def check_edits(node: str, state: Mapping[str, Any], update: Mapping[str, Any], lists: frozenset[str]) -> None:
    """Refuse ``update`` when it writes one of ``lists`` as a whole list that starts with items
    the list holds in ``state``: the checkpoint would store them again at this step, where
    ``edit`` stores only the change. A new list (a reset, a first item) may be written whole."""
    for name in lists & update.keys():
        write = update[name]
        if isinstance(write, list) and edit(state.get(name) or [], write)["keep"]:
            raise WholeListWritten(f"node {node} writes {name} whole: write edit(old, new), only the change")
