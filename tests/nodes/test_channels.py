"""The reducers of fields stored as per-step writes: edits rebuild the list they describe,
and replaying writes in any batching gives the same value (what DeltaChannel requires)."""

from __future__ import annotations

import random

from nodes.channels import added, appended, edit, length, revised


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
