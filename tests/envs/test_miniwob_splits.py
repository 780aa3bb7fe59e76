"""MiniWoB splits with seed ranges (no browser): validation and test seeds can differ."""

from __future__ import annotations

import pytest

from envs.base import EnvError
from envs.miniwob import MiniWoBEnv
from envs.miniwob.tasks import PAPER_43, split_ids


def seeds_of(ids: list[str], task: str) -> list[int]:
    return [int(t.split("/")[1]) for t in ids if t.split("/")[0] == task]


def test_start_stop_range_gives_those_seeds_of_every_task() -> None:
    ids = MiniWoBEnv().task_ids("paper-43@3:7")
    assert len(ids) == 43 * 4
    assert {t.split("/")[0] for t in ids} == set(PAPER_43)
    assert all(seeds_of(ids, task) == [3, 4, 5, 6] for task in PAPER_43)
    assert ids[:4] == ["click-dialog/3", "click-dialog/4", "click-dialog/5", "click-dialog/6"]


def test_validation_and_test_ranges_are_disjoint_and_n_means_zero_to_n() -> None:
    validation, test = set(split_ids("paper-43@0:2")), set(split_ids("paper-43@2:10"))
    assert not validation & test and len(validation | test) == 43 * 10
    assert split_ids("paper-43@0:5") == split_ids("paper-43@5")
    assert split_ids("click-test@10:12") == ["click-test/10", "click-test/11"]
    assert len(split_ids("1-screen-1-step@100:101")) == 10


@pytest.mark.parametrize(
    "split",
    [
        "paper-43@5:2",
        "paper-43@3:3",
        "paper-43@0",
        "paper-43@",
        "paper-43@-1:4",
        "paper-43@1:",
        "paper-43@:4",
        "paper-43@a:b",
        "paper-43@1:2:3",
        "paper-43@1.5",
        "paper-43@\u00b2",
    ],
)
def test_bad_ranges_are_one_line_env_errors(split: str) -> None:
    with pytest.raises(EnvError, match="bad seed range") as info:
        split_ids(split)
    assert "\n" not in str(info.value) and "START:STOP" in str(info.value)
