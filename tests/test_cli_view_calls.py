"""``introspect view`` shows the model calls of each step (collapsed: the messages sent, the
reply, tokens, seconds, retries), from the thread's checkpoints, or from its recording for a
thread checkpointed before the call log; ``view --compare A B`` puts two runs of one task side
by side, step by step. The pages are opened in Chromium with every network request refused."""

from __future__ import annotations

import asyncio
import html
import json
import shutil

import pytest

from introspect.checkpoint import open_checkpointer
from introspect.runner import thread_metadata
from tests.nodes.test_checkpoint_format import CALLS_WRITTEN, FILE, THREAD
from tests.support.cli import run_cli as cli
from tests.support.laser_demo import write_demo_script
from tests.support.pages import opened


def run_laser(capsys, db: str, thread: str, script: str, *extra: str) -> int:
    code, _, _ = cli(
        capsys,
        "run",
        "laser",
        "--task",
        "synthetic-0",
        "--model",
        script,
        "--thread",
        thread,
        "--checkpoint",
        db,
        *extra,
    )
    return code


EXPAND = """() => {
    const calls = document.querySelector('section.step details.calls');
    const first = calls.querySelector('details.call');
    const message = first.querySelector('.message pre');
    const before = {open: calls.open, visible: message.checkVisibility()};
    calls.querySelector('summary').click();
    first.querySelector('summary').click();
    return {
        sections: document.querySelectorAll('section.step details.calls').length,
        anyOpen: [...document.querySelectorAll('details.calls, details.call')].filter(d => d.open).length,
        before,
        after: {open: calls.open && first.open, visible: message.checkVisibility()},
        summary: calls.querySelector('summary').innerText,
        call: first.querySelector('summary').innerText,
        message: message.innerText,
        reply: first.querySelector('.message.reply').innerText,
    };
}"""


@pytest.mark.browser
def test_each_step_shows_its_model_calls_collapsed_and_they_expand(capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert run_laser(capsys, db, "calls", write_demo_script(tmp_path / "script.jsonl")) == 0
    code, _, err = cli(capsys, "view", "calls", "--out", str(tmp_path / "views"), "--checkpoint", db)
    assert code == 0, err
    got = asyncio.run(opened(tmp_path / "views" / "calls.html", EXPAND))
    seen = got["seen"]
    assert got["asked"] == []
    assert seen["sections"] >= 5 and seen["anyOpen"] == 2  # all collapsed but the two clicked open
    assert seen["before"] == {"open": False, "visible": False} and seen["after"] == {"open": True, "visible": True}
    assert seen["summary"].startswith("model calls: ") and " tokens · " in seen["summary"]
    assert seen["call"].startswith("call 1 · search · scripted:") and "+" in seen["call"].split("tokens")[0]
    assert "WebShop" in seen["message"] or "shop" in seen["message"].lower()  # the prompt's text
    assert seen["reply"].startswith("reply")


def test_a_thread_from_before_the_call_log_views_with_its_recording(capsys, tmp_path):
    """The pinned thread (tests/nodes/test_checkpoint_format.py) has no call log: its page says
    its calls were not recorded; with a recording of the same run, they are shown from it."""
    db = tmp_path / "old.sqlite"
    shutil.copy(FILE, db)
    url = f"sqlite:///{db}"
    code, _, err = cli(capsys, "view", THREAD, "--out", str(tmp_path / "views"), "--checkpoint", url)
    assert code == 0, err
    text = (tmp_path / "views" / f"{THREAD}.html").read_text()
    assert "were not recorded" in text and "<details class='call'>" not in text

    recording = tmp_path / "recording.jsonl"
    other = f"sqlite:///{tmp_path / 'new.sqlite'}"
    assert (
        run_laser(capsys, other, "recorded", write_demo_script(tmp_path / "s.jsonl"), "--record", str(recording)) == 0
    )
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    code, _, err = cli(
        capsys, "view", THREAD, "--out", str(tmp_path / "views"), "--checkpoint", url, "--recording", str(recording)
    )
    assert code == 0, err
    text = (tmp_path / "views" / f"{THREAD}.html").read_text()
    assert text.count("<details class='call'>") == CALLS_WRITTEN and "were not recorded" not in text
    for line in lines[:CALLS_WRITTEN]:
        assert html.escape(line["request"]["messages"][-1]["content"][:60]) in text


def test_a_recorded_run_names_its_recording_for_the_viewer(capsys, tmp_path):
    db, recording = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "rec.jsonl"
    assert run_laser(capsys, db, "t", write_demo_script(tmp_path / "s.jsonl"), "--record", str(recording)) == 0

    async def named() -> str:
        async with open_checkpointer(db) as saver:
            return (await thread_metadata(saver, "t"))["introspect_recording"]

    assert asyncio.run(named()) == str(recording.resolve())


ALIGNED = """() => [...document.querySelectorAll('main > .pair')].map(row =>
    [...row.querySelectorAll(':scope > .side')].map(side => {
        const h = side.querySelector('section.step h2');
        return h ? h.innerText.split(' (')[0] : side.innerText.trim();
    }))"""


@pytest.mark.browser
def test_compare_puts_two_runs_of_one_task_side_by_side(capsys, tmp_path):
    """A whole run against a run whose model gave up after six calls with other settings: each
    row holds step i of both, the shorter run's rows end with a dash."""
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert run_laser(capsys, db, "whole", write_demo_script(tmp_path / "whole.jsonl")) == 0
    short = write_demo_script(tmp_path / "short.jsonl", 6)
    assert run_laser(capsys, db, "short", short, "--set", "backup=false") == 1  # the script ran out
    code, out, err = cli(
        capsys, "view", "--compare", "whole", "short", "--out", str(tmp_path / "v"), "--checkpoint", db
    )
    assert code == 0, err
    page_file = tmp_path / "v" / "compare-whole-vs-short.html"
    assert out.strip() == f"wrote {page_file}"
    assert "settings backup=false" in page_file.read_text()
    got = asyncio.run(opened(page_file, ALIGNED))
    assert got["asked"] == []
    rows = [[" ".join(cell.split()) for cell in row] for row in got["seen"]]
    whole = [r[0] for r in rows if r[0].startswith("Step")]
    shorter = [r[1] for r in rows if r[1].startswith("Step")]
    assert len(whole) == 8 and 0 < len(shorter) < len(whole)
    assert all(a == b for a, b in rows[: len(shorter)])  # step i beside step i
    assert all(r[1] == "-" for r in rows[len(shorter) : len(whole)])


def test_compare_takes_results_files_and_refuses_two_tasks(capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    script = write_demo_script(tmp_path / "s.jsonl")
    for name, extra in (("a", []), ("b", ["--set", "backup=false"])):
        code, _, err = cli(
            capsys,
            *("eval", "laser", "--tasks", "synthetic-0", "--results", str(tmp_path / f"{name}.jsonl")),
            *("--model", script, "--checkpoint", db, *extra),
        )
        assert code == 0, err
    views = tmp_path / "v"
    code, out, err = cli(
        capsys,
        "view",
        "--compare",
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "b.jsonl"),
        "--out",
        str(views),
        "--checkpoint",
        db,
    )
    assert code == 0, err
    threads = [
        json.loads(line)["thread_id"] for name in "ab" for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()
    ]
    text = (views / f"compare-{threads[0]}-vs-{threads[1]}.html").read_text()
    assert all(f"thread {t}" in text for t in threads)

    assert run_laser(capsys, db, "other", write_demo_script(tmp_path / "one.jsonl", 1), "--task", "synthetic-1") == 1
    shutil.rmtree(views)
    code, _, err = cli(capsys, "view", "--compare", threads[0], "other", "--out", str(views), "--checkpoint", db)
    assert code == 2 and "two runs of one task" in err and len(err.strip().splitlines()) == 1
    assert not views.exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--compare", "a", "b", "t"], "not both"),
        ([], "view takes a THREAD_ID"),
        (["--compare", "a.jsonl", "b"], "no results file a.jsonl"),
        (["t", "--recording", "missing.jsonl"], "no recording missing.jsonl"),
        (["t", "--task", "1"], "--task picks the row"),
    ],
)
def test_bad_view_options_are_one_line(capsys, tmp_path, args, message):
    code, _, err = cli(
        capsys, "view", *args, "--out", str(tmp_path / "v"), "--checkpoint", f"sqlite:///{tmp_path / 'db'}"
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "v").exists()
