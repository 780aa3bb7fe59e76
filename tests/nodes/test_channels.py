"""The reducers of fields stored as per-step writes: edits rebuild the list they describe,
and replaying writes in any batching gives the same value (what DeltaChannel requires); a
node that writes a list record whole, repeating what it holds, is refused."""

from __future__ import annotations

import random
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from graphs.edges import add_nodes
from nodes.runtime.channels import (
    WholeListWritten,
    added,
    appended,
    current,
    edit,
    edited_lists,
    length,
    log,
    record,
    revised,
)


def test_an_edit_is_only_the_change_and_rebuilds_the_new_list():
    old = [{"a": 1}, {"b": 2}, {"c": 3}]
    cases = {
        "push": [*old, {"d": 4}, {"e": 5}],
        "pop": old[:-1],
        "replace last": [*old[:-1], {"c": 30}],
        "reset": [],
        "same": list(old),
    }
    kept = {"push": 3, "pop": 2, "replace last": 2, "reset": 0, "same": 3}
    for name, new in cases.items():
        change = edit(old, new)
        assert change["keep"] == kept[name], name
        assert change["then"] == new[kept[name] :], name
        assert revised(old, [change]) == new, name


def test_a_whole_value_replaces_and_an_edit_needs_a_list():
    assert revised([1, 2], [[7]]) == [7]  # what Studio's state editor sends
    assert revised({"replay": []}, [{"replay": [1]}]) == {"replay": [1]}  # a record that is not a list
    assert revised([1, 2], [{"keep": 1, "then": [5]}, {"keep": 2, "then": []}]) == [1, 5]


def test_replaying_in_any_batches_gives_the_same_value():
    rng = random.Random(3)
    for _ in range(200):
        value: list[int] = []
        writes = []
        for _ in range(rng.randint(1, 12)):
            new = value[: rng.randint(0, len(value))] + [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]
            writes.append(edit(value, new) if rng.random() < 0.8 else new)
            value = new
        cut = rng.randint(0, len(writes))
        assert revised(revised([], writes[:cut]), writes[cut:]) == revised([], writes) == value
        logs = [[rng.randint(0, 9)] * rng.randint(0, 2) for _ in range(5)]
        assert appended(appended([0], logs[:cut]), logs[cut:]) == appended([0], logs)


def test_the_reducers_leave_the_value_they_read_as_it_was():
    value = [1, 2, 3]
    revised(value, [edit(value, [1, 9])])
    appended(value, [[4]])
    assert value == [1, 2, 3]


def test_streamed_updates_read_as_the_items_they_add():
    assert added(edit([1, 2], [1, 2, 3])) == [3]
    assert added([4, 5]) == [4, 5] and added(None) == []
    assert length(edit([1, 2], [1, 2, 3])) == 3 and length([1]) == 1


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], record()]
    log: Annotated[list[str], log()]
    seen: Annotated[dict[str, str], record()]
    screen: Annotated[list[str], current()]
    count: int


def test_the_lists_written_with_edit_are_the_list_records():
    assert edited_lists(Notes) == {"notes", "screen"}


def notes_graph(write):
    """One node, ``note``, that writes ``notes`` as ``write(old, new)`` after a first note."""

    async def note(state: Notes) -> dict[str, Any]:
        old = state.get("notes") or []
        return {"notes": write(old, [*old, f"note {len(old)}"])}

    builder = StateGraph(Notes)
    add_nodes(builder, {"note": note})
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    return builder.compile()


async def test_a_node_writing_a_list_record_whole_is_refused():
    with pytest.raises(WholeListWritten, match="node note writes notes whole: write edit"):
        await notes_graph(lambda old, new: new).ainvoke({"notes": ["note 0"]})


async def test_an_edit_a_reset_and_a_first_list_are_written():
    assert (await notes_graph(edit).ainvoke({"notes": ["note 0"]}))["notes"] == ["note 0", "note 1"]
    assert (await notes_graph(lambda old, new: []).ainvoke({"notes": ["note 0"]}))["notes"] == []
    assert (await notes_graph(lambda old, new: new).ainvoke({}))["notes"] == ["note 0"]
    assert (await notes_graph(lambda old, new: ["other"]).ainvoke({"notes": ["note 0"]}))["notes"] == ["other"]
