"""Runs found by themselves: ``view``, ``view --compare``, ``report`` and ``export`` given a study
folder, one of its results files or a thread id find the checkpoints that hold the runs (no
``--checkpoint``), from any folder; the home introspect keeps them in is one per user, not the
current folder; ``demo`` keeps its run where ``view`` finds it; the compare page marks and links
the step where two runs first part."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from envs.datasets import home
from introspect.evaluate import read_rows
from introspect.trajectory import Card, Trajectory
from introspect.view import first_difference
from tests.support.cli import output, run_main
from tests.support.laser_demo import DEMO, write_demo_script
from tests.support.pages import opened

TASK = DEMO["task_id"]


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A home of its own (by the variable) and a current folder that is neither it nor the study's."""
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("INTROSPECT_CHECKPOINT", raising=False)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_home_is_one_per_user_whatever_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("INTROSPECT_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for folder in (tmp_path, tmp_path / "a"):
        folder.mkdir(exist_ok=True)
        monkeypatch.chdir(folder)
        assert home() == tmp_path / "data" / "introspect"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert home() == tmp_path / "user" / ".local" / "share" / "introspect"
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "mine"))
    assert home() == tmp_path / "mine"


def test_a_demo_is_viewed_from_another_folder_and_home_is_a_flag(tmp_path, monkeypatch):
    """``demo`` keeps its checkpoints in the home (not in memory); ``view THREAD`` finds them from
    any folder; ``--home`` names the home for one command."""
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "unused"))
    mine = tmp_path / "mine"
    for folder in (tmp_path / "a", tmp_path / "b"):
        folder.mkdir()
    monkeypatch.chdir(tmp_path / "a")
    assert run_main(["--home", str(mine), "demo", "laser"], logs=tmp_path, name="demo") == 0
    said, _ = output(tmp_path, "demo")
    thread = next(line.split()[-1] for line in said.splitlines() if line.startswith("thread: "))
    assert f"introspect view {thread}" in said
    assert (mine / "checkpoints.sqlite").is_file() and list((tmp_path / "a").iterdir()) == []
    monkeypatch.chdir(tmp_path / "b")
    views = tmp_path / "views"
    assert run_main(["--home", str(mine), "view", thread, "--out", str(views)], logs=tmp_path, name="view") == 0
    assert "<section class='step'" in (views / f"{thread}.html").read_text()


def _study(tmp_path: Path) -> Path:
    """Two LASER runs of one task into the home's ``studies/f``; the second stops after two
    actions. Returns the study folder."""
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = tmp_path / "f.toml"
    spec.write_text(
        f'name = "f"\nmodel = "{model}"\n[[runs]]\nmethod = "laser"\nlabel = "whole"\ntasks = "{TASK}"\n'
        f'[[runs]]\nmethod = "laser"\nlabel = "short"\ntasks = "{TASK}"\nsettings = {{max_actions = 2}}\n',
        encoding="utf-8",
    )
    assert run_main(["study", "run", str(spec)], logs=tmp_path, name="study") == 0
    return home() / "studies" / "f"


COMPARED = """() => ({
    difference: document.querySelector('.difference').innerText,
    link: document.querySelector('.difference a').getAttribute('href'),
    marked: [...document.querySelectorAll('.pair.differs')].map(p => p.id),
    rows: document.querySelectorAll('main > .pair').length,
})"""


@pytest.mark.browser
def test_a_study_is_found_from_its_folder_its_results_files_and_its_thread_ids(tmp_path, elsewhere):
    study = _study(tmp_path)
    whole, short = study / "results" / "whole.r1.jsonl", study / "results" / "short.r1.jsonl"
    [row] = read_rows(whole)
    views = tmp_path / "views"

    # the compare page from two results files, no --checkpoint
    code = run_main(["view", "--compare", str(whole), str(short), "--out", str(views)], logs=tmp_path, name="cmp")
    assert code == 0, output(tmp_path, "cmp")[1]
    [page] = views.glob("compare-*.html")
    seen = asyncio.run(opened(page, COMPARED, tmp_path / "compare.png"))
    assert seen["asked"] == []
    assert seen["seen"]["difference"] == "First difference: step 3 (run B has no step 3)"
    assert seen["seen"]["link"] == "#difference" and seen["seen"]["marked"] == ["difference"]
    assert seen["seen"]["rows"] == row["steps"]

    # a thread id of the study, from a folder that knows nothing of it
    assert run_main(["view", row["thread_id"], "--out", str(views)], logs=tmp_path, name="thread") == 0
    assert row["task_id"] in (views / f"{row['thread_id']}.html").read_text()
    # the study folder: one index of both runs
    assert run_main(["view", str(study), "--out", str(tmp_path / "all")], logs=tmp_path, name="study-view") == 0
    index = (tmp_path / "all" / "index.html").read_text()
    assert index.count("<a href=") == 2 and "<td>short</td>" in index and "<td>whole</td>" in index
    # export and report from a results file and from the folder
    out = tmp_path / "steps.jsonl"
    assert run_main(["export", str(short), "--format", "steps", "--out", str(out)], logs=tmp_path, name="x") == 0
    assert len(out.read_text().splitlines()) == 2
    assert run_main(["report", str(study), "--markdown", str(tmp_path / "r.md")], logs=tmp_path, name="r") == 0
    assert "whole" in (tmp_path / "r.md").read_text() and "short" in (tmp_path / "r.md").read_text()


def test_a_results_file_none_of_whose_threads_is_found_is_refused(tmp_path, elsewhere):
    """Not an index of no pages and exit 0: one line that says where it looked, nothing written."""
    study = _study(tmp_path)
    moved = tmp_path / "moved.jsonl"
    moved.write_text((study / "results" / "whole.r1.jsonl").read_text())
    views = tmp_path / "views"
    assert run_main(["view", str(moved), "--out", str(views)], logs=tmp_path, name="none") == 2
    _, err = output(tmp_path, "none")
    assert "none of the 1 rows of" in err and "--checkpoint" in err and len(err.strip().splitlines()) == 1
    assert not views.exists()


def _card(index: int, page: str, action: str, reply: str) -> Card:
    call = {"content": reply, "tool_calls": []}
    return Card("step", step={"action": action}, index=index, observed=page, calls=[call])  # type: ignore[list-item]


def _run(*steps: tuple[str, str, str]) -> Trajectory:
    from graphs import method_named

    method = method_named("laser")
    cards = [_card(i, *s) for i, s in enumerate(steps)]
    return Trajectory("t", method, method.context(), {}, [Card("backtrack", text="between"), *cards])


SAME = [("p0 http://127.0.0.1:39999/x", "a0", "r0"), ("p1", "a1", "r1")]


@pytest.mark.parametrize(
    ("b", "said"),
    [
        (SAME, None),
        ([SAME[0], ("p1", "other", "r1")], (2, "the action")),
        ([SAME[0], ("p1", "other", "r-other")], (2, "the reply and the action")),
        ([SAME[0], ("page two", "a1", "r1")], (2, "the page")),
        ([("p0 http://127.0.0.1:39999/y", "a0", "r0")], (1, "the page")),
        ([SAME[0]], (2, "run B has no step 2")),
        ([("p0 http://127.0.0.1:4011/x", "a0", "r0"), SAME[1]], None),  # the local site on another port
    ],
)
def test_the_first_difference_is_the_step_and_what_differs_there(b, said):
    found = first_difference(_run(*SAME), _run(*b))
    assert (found.step, found.what) == said if said else found is None


def test_an_unknown_thread_is_looked_for_in_the_home_and_its_studies(tmp_path, elsewhere):
    _study(tmp_path)
    assert run_main(["view", "no-such-thread", "--out", str(tmp_path / "v")], logs=tmp_path, name="unknown") == 2
    assert "no checkpointed thread 'no-such-thread'" in output(tmp_path, "unknown")[1]
    assert not (tmp_path / "v").exists()
