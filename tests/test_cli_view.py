"""``introspect view``: a real run's page, opened in Chromium with every network request
refused (the page must stand alone), shows its steps, the Devil's Advocate backtrack and
the screenshots the run kept (``--screenshots``); a results file gets an index page; a
scripted run of every method gets its steps and the method's own structures; an AutoPlan
training thread gets its iterations (batch, experiences, SIR reflections, plans)."""

from __future__ import annotations

import asyncio
import html
import json

import pytest

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.cli import main
from introspect.runner import outcome_of
from tests.support.cli import run_cli
from tests.support.laser_demo import write_demo_script
from tests.support.pages import opened
from tests.support.scenarios import SCENARIOS

SEEN = """() => ({
    steps: [...document.querySelectorAll('section.step h2')].map(h => h.innerText),
    actions: [...document.querySelectorAll('section.step .action')].map(a => a.innerText),
    backtracks: [...document.querySelectorAll('.mark.backtrack')].map(m => m.innerText),
    shots: [...document.querySelectorAll('img.shot')].map(i => [i.naturalWidth, i.naturalHeight]),
    stack: [...document.querySelectorAll('summary')].filter(s => s.innerText.startsWith('stack')).length,
})"""


async def rendered(page_file, picture) -> dict:
    """What a person sees in the page: counted in the DOM of Chromium's rendering."""
    shown = await opened(page_file, SEEN, picture)
    return {**shown["seen"], "asked": shown["asked"]}


@pytest.mark.browser
def test_a_devils_advocate_run_page_shows_its_steps_backtrack_and_screenshots(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert main(["demo", "devils_advocate", "--checkpoint", db, "--screenshots"]) == 0
    pictures = sorted((tmp_path / "screenshots").glob("*/*.png"))
    assert len(pictures) == 3  # one per executed step, beside the checkpoint database
    thread = pictures[0].parent.name
    assert main(["view", thread, "--out", str(tmp_path / "views"), "--checkpoint", db]) == 0
    page_file = tmp_path / "views" / f"{thread}.html"

    seen = asyncio.run(rendered(page_file, tmp_path / "page.png"))
    assert seen["asked"] == []  # nothing outside the file
    assert [" ".join(s.split()) for s in seen["steps"]] == [
        "Step 1 (execute) reward 0.00",
        "Step 2 (execute) reward 0.00",
        "Step 3 (complete) reward 1.00",
    ]
    assert seen["actions"][:2] == ["click [36]", "click [44]"]
    [backtrack] = seen["backtracks"]
    assert "backtrack (episode 1): back to http://127.0.0.1:" in backtrack and "to try click [39]" in backtrack
    assert len(seen["shots"]) == 3 and all(w > 100 and h > 100 for w, h in seen["shots"])  # decoded pictures
    assert seen["stack"] == 3
    assert (tmp_path / "page.png").stat().st_size > 10_000


def test_a_results_file_gets_an_index_linking_each_run(capsys, tmp_path):
    db, results = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "results.jsonl"
    code, _, err = run_cli(
        capsys,
        "eval",
        "laser",
        "--tasks",
        "synthetic-0,synthetic-1",
        "--results",
        str(results),
        "--model",
        write_demo_script(tmp_path / "script.jsonl"),
        "--checkpoint",
        db,
    )
    assert code == 0, err
    code, _, err = run_cli(capsys, "view", str(results), "--out", str(tmp_path / "views"), "--checkpoint", db)
    assert code == 0, err
    index = (tmp_path / "views" / "index.html").read_text()
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        page = tmp_path / "views" / f"{row['thread_id']}.html"
        assert f"href='{page.name}'>{row['task_id']}</a>" in index
        text = page.read_text()
        assert "state path" in text and "search -&gt; results -&gt; item" in text  # LASER's own structure
        assert text.count("<section class='step'") == row["steps"]


@pytest.mark.parametrize(
    "target,message",
    [
        ("nope", "no checkpointed thread 'nope'"),
        ("missing.jsonl", "no results file missing.jsonl"),
    ],
)
def test_bad_view_input_is_one_line(capsys, tmp_path, target, message):
    code, _, err = run_cli(
        capsys,
        "view",
        target,
        "--checkpoint",
        f"sqlite:///{tmp_path / 'runs.sqlite'}",
        "--out",
        str(tmp_path / "views"),
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "views").exists()


async def final_state(db: str, method: str, thread: str) -> dict:
    async with open_checkpointer(db) as saver:
        return (await outcome_of(method_named(method), thread, saver)).state


# what each method's section shows of this run, besides its structures' titles
OWN = {
    "laser": lambda text: "search -&gt; results -&gt; item" in text,
    "structured_reflection": lambda text: "<div class='mark trial'><pre>trial 1 ended no change" in text,
    "devils_advocate": lambda text: text.count("<div class='mark backtrack'>") == 1,
    "autoplan": lambda text: html.escape(SCENARIOS["autoplan"].context["plan"].splitlines()[0], quote=True) in text,
}


@pytest.mark.parametrize(
    "method",
    [
        "laser",
        "autoplan",
        pytest.param("structured_reflection", marks=pytest.mark.browser),
        pytest.param("devils_advocate", marks=pytest.mark.browser),
    ],
)
def test_a_scripted_run_of_each_method_gets_its_steps_and_structures(capsys, tmp_path, method):
    scenario = SCENARIOS[method]
    db, thread = f"sqlite:///{tmp_path / 'runs.sqlite'}", f"view-{method}"
    plan = []
    if "plan" in scenario.context:
        (tmp_path / "plan.txt").write_text(scenario.context["plan"])
        plan = ["--plan", str(tmp_path / "plan.txt")]
    model = scenario.write_script(tmp_path / "script.jsonl")
    task = ["--env", scenario.env, "--task", scenario.graph_input["task_id"], "--model", model, *plan]
    code, _, err = run_cli(capsys, "run", method, *task, "--thread", thread, "--checkpoint", db)
    assert code == 0, err
    state = asyncio.run(final_state(db, method, thread))
    scenario.check(state)

    code, out, err = run_cli(capsys, "view", thread, "--out", str(tmp_path / "views"), "--checkpoint", db)
    assert code == 0 and out.strip() == f"wrote {tmp_path / 'views' / thread}.html", err
    text = (tmp_path / "views" / f"{thread}.html").read_text()
    steps = state["trajectory"]
    assert text.count("<section class='step'") == len(steps) > 1
    shown = [html.unescape(a[: a.index("</span>")]) for a in text.split("<span class='action'>")[1:]]
    assert shown == [s["action"] for s in steps]
    for title, _ in method_named(method).view.structures([state]):  # the method's section on every step
        assert text.count(f"<summary>{html.escape(title)}</summary>") == len(steps), title
    assert OWN[method](text)


TRAINING = [
    "Both are American.",
    "finish with yes",
    "finish[yes]",
    "Summary one.",
    "New Task Plan:\n1. Search each entity.\n2. Answer with finish[answer].",
    "I should search first.",
    "search the first entity",
    "search[Ed Wood]",
    "Summary two.",
    "Flaw: answered before searching.",
    "Revision: search before answering.",
    "New Task Plan:\n1. Search every entity named.\n2. Compare, then finish[answer].",
]


def train(capsys, tmp_path, thread: str, replies: list[str]) -> tuple[int, str]:
    """``introspect train autoplan`` on two HotpotQA training questions, two iterations."""
    script = tmp_path / f"{thread}.jsonl"
    script.write_text("".join(json.dumps({"content": r}) + "\n" for r in replies))
    code, _, err = run_cli(
        capsys,
        *("train", "autoplan", "--env", "hotpotqa", "--split", "train[:2]", "--batch", "2", "--iterations", "2"),
        *(
            "--set",
            "max_actions=1",
            "--set",
            "judge=off",
            "--env-option",
            "backend=local",  # offline: the shipped questions' own paragraphs
            "--plan-out",
            str(tmp_path / f"{thread}.json"),
            "--thread",
            thread,
        ),
        *("--model", f"scripted:{script}", "--checkpoint", f"sqlite:///{tmp_path / 'runs.sqlite'}"),
    )
    return code, err


def view(capsys, tmp_path, thread: str) -> list[str]:
    """The thread's page, cut at its iterations (the header first)."""
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    code, _, err = run_cli(capsys, "view", thread, "--out", str(tmp_path / "views"), "--checkpoint", db)
    assert code == 0, err
    return (tmp_path / "views" / f"{thread}.html").read_text().split("<section class='iteration'")


def test_a_training_thread_page_shows_each_iteration(capsys, tmp_path):
    code, err = train(capsys, tmp_path, "train-1", TRAINING)
    assert code == 0, err
    record = json.loads((tmp_path / "train-1.json").read_text())  # what the run itself wrote
    header, *iterations = view(capsys, tmp_path, "train-1")
    assert "AutoPlan training on hotpotqa" in header and "2 of 2 iterations done" in header
    assert len(iterations) == len(record["history"]) == 2
    for part, done in zip(iterations, record["history"], strict=True):
        tasks = [job["task_id"] for job in done["jobs"]]
        assert f"<p class='batch'>batch of 2: {', '.join(tasks)}</p>" in part
        before, after = part.split("<div class='plan before'>")[1], part.split("<div class='plan after'>")[1]
        assert (html.escape(done["plan"]) in before) if done["plan"] else ("without a plan" in before)
        assert f"<pre>{html.escape(done['new_plan'])}</pre>" in after
        for job in done["jobs"]:
            assert f"interaction of {job['task_id']}" in part
            reflected = [job["task_id"], job["summary"], job["flaw"], job["revision"]]
            assert "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in reflected) + "</tr>" in part
            assert f"<td>{job['task_id']}</td><td>{job['success']}</td>" in part
    assert "<td>Summary two.</td><td>Flaw: answered before searching.</td>" in iterations[1]  # SIR with a plan
    # the experiences' interactions, as the original code's chat: it ends before the last observation
    assert "[assistant] Both are American.\n\n[user] Action:\n\n[assistant] finish[yes]</pre>" in iterations[0]
    assert iterations[1].count("<td>max_actions</td>") == 2


def test_a_stopped_training_thread_shows_what_it_got_to(capsys, tmp_path):
    code, err = train(capsys, tmp_path, "train-2", TRAINING[:-1])  # no reply for the last plan update
    assert code == 1 and "resume train-2" in err
    header, first, second = view(capsys, tmp_path, "train-2")
    assert "1 of 2 iterations done" in header
    assert "2. Answer with finish[answer].</pre>" in first.split("<div class='plan after'>")[1]
    assert "Flaw: answered before searching." in second
    assert "not updated: the run stopped before the plan update" in second.split("<div class='plan after'>")[1]
