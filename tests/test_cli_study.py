"""``introspect study``: a study file checked before anything runs, run into one folder,
repeated on distinct threads, continued, refused when changed, and kept to its budgets
(against the local OpenAI-compatible stub serving a priced model name)."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import time
from pathlib import Path

import pytest

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.evaluate import eval_thread_id, read_rows
from introspect.runner import outcome_of
from nodes.laser.context import LaserContext
from tests.support.cli import ROOT, child_env, output, run_main, spawn
from tests.support.laser_demo import DEMO, REPLIES, demo_replies, write_demo_script
from tests.support.openai_stub import OpenAIStub, Reply

TASK = DEMO["task_id"]
PRICED = "openai:gpt-4o-mini"  # genai-prices knows it; the stub serves it


def write_study(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def study(tmp_path: Path, model: str, extra: str = "", run: str = "") -> Path:
    return write_study(
        tmp_path / "study.toml",
        f'name = "s"\nmodel = "{model}"\n{extra}\n[[runs]]\nmethod = "laser"\nenv = "webshop"\n'
        f'tasks = "{TASK}"\n{run}\n',
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('[[runs]]\nmethod = "laser"\nsetings = {}\n', "runs[1]: unknown key 'setings'"),
        ('[[runs]]\nmethod = "nope"\n', "unknown method 'nope'"),
        ('[[runs]]\nmethod = "laser"\nenv = "alfworld"\n', "laser runs on webshop, webarena, not 'alfworld'"),
        ('[[runs]]\nmethod = "laser"\nsettings = {max_actons = 3}\n', "laser has no setting 'max_actons'"),
        ('[[runs]]\nmethod = "laser"\nsettings = {max_actions = 0}\n', "max_actions"),
        ('[[runs]]\nmethod = "laser"\ntasks = "nope-7"\n', "nope-7"),
        ('[[runs]]\nmethod = "laser"\nrepeats = 0\n', "repeats must be a whole number >= 1"),
        ('[[grid]]\nmethods = ["laser"]\nenvs = ["webshop"]\nmodels = ["x"]\n', "malformed model spec 'x'"),
        ("", "nothing to run"),
        ('workers = 2\n[[runs]]\nmethod = "laser"\nrepeats = 2\n', "repeats run here only"),
        ('concurrency = "auto"\nworkers = 2\n[[runs]]\nmethod = "laser"\n', 'concurrency = "auto" paces'),
        ('concurrency = "many"\n[[runs]]\nmethod = "laser"\n', "concurrency"),
        (f'[[runs]]\nmethod = "laser"\nmodel = "{PRICED}"\nworkers = 2\nmax_cost_usd = 1\n', "budgets are kept"),
        ('[[runs]]\nmethod = "laser"\nmax_cost_usd = 1\n', "has no known price, so a dollar budget cannot be kept"),
        ('[[runs]]\nmethod = "laser"\ntask_max_cost_usd = 1\n', "limit it by max_tokens_total or max_seconds"),
        ('max_tokens_total = 1.5\n[[runs]]\nmethod = "laser"\n', "max_tokens_total must be a whole number of tokens"),
        ('[[runs]]\nmethod = "laser"\ntask_max_seconds = -1\n', "task_max_seconds must be a positive number"),
        (f'max_cost_usd = nan\n[[runs]]\nmethod = "laser"\nmodel = "{PRICED}"\n', "max_cost_usd must be a positive"),
        (f'[[runs]]\nmethod = "laser"\nmodel = "{PRICED}"\ntask_max_cost_usd = nan\n', "task_max_cost_usd must be"),
        ('checkpoint = 5\n[[runs]]\nmethod = "laser"\n', "checkpoint"),
        ('[[grid]]\nmethods = ["laser"]\nenvs = ["webshop", "nosuch"]\n', "grid[1]: unknown env 'nosuch'"),
        (
            'checkpoint = "postgresql://nobody:pw@127.0.0.1:1/db"\n[[runs]]\nmethod = "laser"\n',
            "cannot use Postgres checkpointer postgresql://nobody:***@127.0.0.1:1/db",
        ),
        ('server = "not a url"\n[[runs]]\nmethod = "laser"\n', "cannot use the LangGraph server at not a url"),
    ],
)
def test_a_study_that_cannot_run_is_refused_in_one_line_before_anything_is_written(tmp_path, monkeypatch, body, said):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a priced model's key, never used: nothing runs
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = write_study(tmp_path / "bad.toml", f'name = "bad"\nmodel = "{model}"\n{body}')
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="bad") == 2
    _, err = output(tmp_path, "bad")
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_grid_expands_into_runs_with_unique_labels_and_leaves_out_cells_that_do_not_run(tmp_path):
    from introspect.study.spec import parse

    model = write_demo_script(tmp_path / "demo.jsonl")
    text = (
        f'name = "g"\nmodel = "{model}"\n[[grid]]\nmethods = ["laser", "structured_reflection"]\n'
        'envs = ["webshop", "miniwob"]\ntasks = "0:1"\nsettings = {max_actions = [3, 4]}\n'
    )
    runs = parse(text, "g.toml").runs
    assert [r.label for r in runs] == [
        "laser-webshop-max_actions=3",
        "laser-webshop-max_actions=4",
        "structured_reflection-webshop-max_actions=3",
        "structured_reflection-webshop-max_actions=4",
        "structured_reflection-miniwob-max_actions=3",
        "structured_reflection-miniwob-max_actions=4",
    ]
    assert [r.context.max_actions for r in runs] == [3, 4] * 3  # type: ignore[attr-defined]


def test_repeats_run_on_distinct_threads_and_a_second_run_continues(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = study(tmp_path, model, "repeats = 2")
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="first") == 0
    rows = {k: read_rows(out / "results" / f"laser-webshop.r{k}.jsonl") for k in (1, 2)}
    context = LaserContext(model=model, env="webshop")
    plain = eval_thread_id(method_named("laser"), context, TASK)
    assert [r["thread_id"] for r in rows[1]] == [plain]  # repeat 1 keeps eval's thread id
    assert [r["thread_id"] for r in rows[2]] == [f"{plain}-r2"]
    assert [(r["repeat"], r["label"], r["success"]) for k in (1, 2) for r in rows[k]] == [
        (1, "laser-webshop", True),
        (2, "laser-webshop", True),
    ]
    assert (out / "spec.toml").read_text() == spec.read_text()
    assert (out / "report" / "report.md").is_file()
    assert (out / "views" / "laser-webshop.r2" / "index.html").is_file()
    index = (out / "report" / "index.html").read_text()
    assert "../views/laser-webshop.r2/" in index  # the report's index links the runs' pages
    # export finds the study's own checkpoints: one chat line per model call of both repeats
    assert (
        run_main(["export", str(out), "--format", "chat", "--out", str(tmp_path / "c.jsonl")], logs=tmp_path, name="x")
        == 0
    )
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == sum(r["model_calls"] for k in (1, 2) for r in rows[k])
    records = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    # the repeats run at once: both begin before either ends
    assert [r["event"] for r in records] == ["session", "plan", "run", "run", "ran", "ran", "finished"]
    began = [r for r in records if r["event"] == "run"]  # each repeat's journal entry says what produced it
    assert all(r["provenance"]["code"] == rows[1][0]["provenance"]["code"] for r in began)
    assert {"commit", "packages", "prompts", "python", "version"} <= set(began[0]["provenance"])

    # again: nothing is run twice (the rows stay one per task and repeat)
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="again") == 0
    assert [len(read_rows(out / "results" / f"laser-webshop.r{k}.jsonl")) for k in (1, 2)] == [1, 1]
    assert run_main(["study", "status", str(out)], logs=tmp_path, name="status") == 0
    said, _ = output(tmp_path, "status")
    assert "laser-webshop r2: 1/1 finished, 0 errored, 0 not run" in said

    shutil.rmtree(out / "report")
    shutil.rmtree(out / "views")
    assert run_main(["study", "report", str(out)], logs=tmp_path, name="report") == 0
    assert (out / "report" / "report.md").is_file() and (out / "views" / "laser-webshop.r1" / "index.html").is_file()
    for action in ("status", "report"):  # a folder that holds no study
        assert run_main(["study", action, str(tmp_path)], logs=tmp_path, name=f"no-{action}") == 2
        assert "is not a study folder" in output(tmp_path, f"no-{action}")[1]


def test_a_run_with_workers_runs_its_tasks_in_worker_processes(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = study(tmp_path, model, "workers = 2\nconcurrency = 1")
    spec.write_text(spec.read_text().replace(f'tasks = "{TASK}"', f'tasks = "{TASK},3,{TASK}"'))
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="workers") == 0
    rows = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert sorted(r["task_id"] for r in rows) == sorted([TASK, "3"])  # a task named twice runs once
    assert all(r["label"] == "laser-webshop" and r["repeat"] == 1 for r in rows)
    assert next(r for r in rows if r["task_id"] == TASK)["success"]


def test_a_changed_run_is_refused_and_an_added_run_is_welcome(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = study(tmp_path, model)
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="first") == 0
    study(tmp_path, model, run="settings = {max_actions = 9}")
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="changed") == 2
    _, err = output(tmp_path, "changed")
    assert "run 'laser-webshop' changed its settings" in err
    study(tmp_path, model, run=f'\n[[runs]]\nmethod = "laser"\nlabel = "more"\ntasks = "{TASK}"\n')
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="added") == 0
    assert len(read_rows(out / "results" / "more.r1.jsonl")) == 1


def test_a_dry_run_needs_no_key_bounds_then_expects_from_earlier_rows_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    priced = study(tmp_path, PRICED, "max_cost_usd = 5.0")  # a priced model without its key
    out = tmp_path / "out"
    assert run_main(["study", "run", str(priced), "--out", str(out), "--dry-run"], logs=tmp_path, name="nokey") == 0
    said, _ = output(tmp_path, "nokey")
    bound = method_named("laser").bound(LaserContext(model=PRICED, env="webshop"))
    assert bound is not None and f"1 task runs; at most {bound.calls} model calls" in said
    assert "no expectation yet" in said and "the study's max_cost_usd ($5.0000) cannot be set against run 1" in said
    # a real run needs the key
    assert run_main(["study", "run", str(priced), "--out", str(out)], logs=tmp_path, name="key") == 2
    assert "no OpenAI key" in output(tmp_path, "key")[1] and not out.exists()

    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = study(tmp_path, model)
    assert run_main(["study", "run", str(spec), "--out", str(out), "--dry-run"], logs=tmp_path, name="dry") == 0
    said, _ = output(tmp_path, "dry")
    assert f"laser-webshop: laser on webshop, {model}, x1: {TASK}" in said and not out.exists()
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="ran") == 0
    assert "no expectation yet" in output(tmp_path, "ran")[0]  # a real run prints the estimate first
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    spec2 = study(tmp_path, model, "repeats = 3\nmax_tokens_total = 1000000")  # two repeats to go
    assert run_main(["study", "run", str(spec2), "--out", str(out), "--dry-run"], logs=tmp_path, name="dry2") == 0
    said, _ = output(tmp_path, "dry2")
    tokens = 2 * (row["input_tokens"] + row["output_tokens"])
    assert f"2 task runs; at most {2 * bound.calls} model calls" in said
    assert f"expected ~{2 * row['model_calls']} model calls, ~{2 * row['input_tokens']} in" in said
    assert "from 1 earlier rows of this configuration" in said
    assert f"the study's max_tokens_total (1000000 tokens) holds: {tokens} tokens expected in all" in said
    spec3 = study(tmp_path, model, f"repeats = 3\nmax_tokens_total = {tokens // 2}")
    assert run_main(["study", "run", str(spec3), "--out", str(out), "--dry-run"], logs=tmp_path, name="dry3") == 0
    assert "stops it during run 1 of 1 (laser-webshop), as expected" in output(tmp_path, "dry3")[0]
    assert not (out / "results" / "laser-webshop.r2.jsonl").exists()


def test_progress_failed_tasks_reasons_and_reused_rows_are_shown(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    short = write_demo_script(tmp_path / "short.jsonl", 2)  # runs out after two replies: its run errors
    second = f'\n[[runs]]\nmethod = "laser"\nlabel = "short"\nmodel = "{short}"\ntasks = "{TASK}"\n'
    spec = study(tmp_path, model, run=second)
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="first") == 1
    _, err = output(tmp_path, "first")
    assert "study s: 100%" in err and "calls=" in err and "tokens=" in err  # unpriced: tokens, not dollars
    (bad,) = read_rows(out / "results" / "short.r1.jsonl")
    assert f"  error  task {TASK}: {bad['error']}" in err and bad["error"]
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="again") == 1
    said, _ = output(tmp_path, "again")
    assert "reused 1 finished rows of earlier sessions; 1 task runs to do" in said


def test_token_and_second_budgets_limit_an_unpriced_model(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    out = tmp_path / "out"
    spec = study(tmp_path, model, "task_max_tokens_total = 1000")
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="task") == 3
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert row["error"].startswith("BudgetReached: task") and "(task_max_tokens_total)" in row["error"]
    spent = int(row["error"].split(" spent ")[1].split(" tokens")[0])
    assert spent >= 1000 and row["model_calls"] < len(REPLIES)  # refused at the call after the budget was spent
    assert "stopped: task_max_tokens_total (1 tasks) reached" in output(tmp_path, "task")[1]

    more = write_demo_script(tmp_path / "more.jsonl")  # a second run at once: the study's budget stops both
    second = f'\n[[runs]]\nmethod = "laser"\nlabel = "more"\nmodel = "{more}"\ntasks = "{TASK}"\n'
    spec = study(tmp_path, model, "max_tokens_total = 1500", run=second)
    out = tmp_path / "out2"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="study") == 3
    _, err = output(tmp_path, "study")
    assert "stopped: the study's max_tokens_total (1500 tokens) reached" in err and "Traceback" not in err
    for label in ("laser-webshop", "more"):
        assert read_rows(out / "results" / f"{label}.r1.jsonl") == []  # stopped in flight: no row

    spec = study(tmp_path, model, "task_max_seconds = 0.000001")
    out = tmp_path / "out3"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="seconds") == 3
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert "of its 1e-06 s budget (task_max_seconds)" in row["error"]  # refused at its second call
    assert float(row["error"].split(" spent ")[1].split(" s ")[0]) > 0.000001 and row["model_calls"] < len(REPLIES)


EXPENSIVE = 100_000  # prompt tokens per reply: $0.015 a call at gpt-4o-mini's list price


def expensive(replies: list[Reply]) -> list[Reply]:
    for reply in replies:
        reply.prompt_tokens = EXPENSIVE
    return replies


def calls_checkpointed(out: Path, model: str) -> int:
    """Model calls the task's thread holds in its last checkpoint."""

    async def count() -> int:
        async with open_checkpointer(f"sqlite:///{out / 'checkpoints.sqlite'}", existing=True) as saver:
            method = method_named("laser")
            thread = eval_thread_id(method, LaserContext(model=model, env="webshop"), TASK)
            return int(((await outcome_of(method, thread, saver)).state.get("usage") or {}).get("model_calls", 0))

    return asyncio.run(count())


def test_the_study_budget_stops_cleanly_and_a_higher_one_continues(tmp_path, monkeypatch):
    out = tmp_path / "out"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        stub.replies.extend(expensive(demo_replies()))
        spec = study(tmp_path, PRICED, "max_cost_usd = 0.05")
        assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="stopped") == 3
        _, err = output(tmp_path, "stopped")
        assert "stopped: the study's max_cost_usd ($0.0500) reached; the study has spent $0.0600" in err
        assert f"raise the budget in {spec} and run `introspect study run {spec} --out {out}`" in err
        assert len(stub.requests) == 4  # 0.015 x 4 >= 0.05: no call after the budget was reached
        assert read_rows(out / "results" / "laser-webshop.r1.jsonl") == []  # the task in flight wrote no row
        made = calls_checkpointed(out, PRICED)
        assert 0 < made < 4  # checkpointed at its last finished step: the step in flight runs again

        # the four answered calls were journaled (nodes.runtime.journal): the step run again takes theirs from
        # the journal, and the stub is asked only from the fifth call on, each call paid once
        stub.replies[:] = expensive(demo_replies()[4:])
        study(tmp_path, PRICED, "max_cost_usd = 1.0")  # a budget may change between sessions
        assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="more") == 0
        assert len(stub.requests) == len(REPLIES)  # no call asked twice across the stop
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert row["success"] and row["model_calls"] == len(REPLIES) and not row["error"]
    events = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events if e["event"] in ("stopped", "finished")] == ["stopped", "finished"]


def test_a_task_budget_stops_that_task_before_its_next_call(tmp_path, monkeypatch):
    out = tmp_path / "out"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        stub.replies.extend(expensive(demo_replies()))
        spec = study(tmp_path, PRICED, "task_max_cost_usd = 0.04")
        assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="task") == 3
        assert len(stub.requests) == 3  # the fourth call would pass the task's budget
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert row["error"].startswith("BudgetReached: task") and "task_max_cost_usd" in row["error"]
    _, err = output(tmp_path, "task")
    assert "stopped: task_max_cost_usd (1 tasks) reached" in err


SLOW = ("miniwob", "webarena", "alfworld")  # left out of CI's slice: Chromium, and ALFWorld's games to load


def matrix_slice(path: Path) -> tuple[Path, list[tuple[str, int]]]:
    """studies/matrix.toml's WebShop and HotpotQA cells, at ``path``; with each run's label and
    task count (the slice of the matrix CI runs, killed and continued; the benchmark
    benchmarks/study_overhead.py runs it whole)."""
    from introspect.study.spec import parse

    text = (ROOT / "studies" / "matrix.toml").read_text(encoding="utf-8")
    head, *blocks = text.split("[[runs]]")
    kept = [b for b in blocks if not any(f'env = "{env}"' in b for env in SLOW)]
    path.write_text(head + "".join("[[runs]]" + b for b in kept), encoding="utf-8")
    return path, [(run.label, len(run.tasks)) for run in parse(path.read_text(), str(path)).runs]


def test_the_shipped_matrix_covers_every_cell_offline():
    import tomllib

    from graphs import matrix

    runs = tomllib.loads((ROOT / "studies" / "matrix.toml").read_text())["runs"]
    assert sorted((r["method"], r["env"]) for r in runs) == sorted((m.name, env) for m, env, _ in matrix())
    assert all(r.get("model", "scripted:").startswith(("scripted:", "replay:")) for r in runs)  # no key needed


def test_the_matrix_study_continues_after_a_kill_with_complete_rows_a_report_and_views(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the study's model paths are relative to the checkout's root
    spec, runs = matrix_slice(tmp_path / "slice.toml")
    out = tmp_path / "out"
    child = spawn(["study", "run", str(spec), "--out", str(out)], cwd=ROOT, env=child_env(), logs=tmp_path, name="k")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None and not events_of(out, "run"):
            time.sleep(0.05)
        time.sleep(2)  # into the first run, LASER's demo: its replayed replies take 4.8 s
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    # killed in LASER's demo (its task cannot end in under 4.8 s; the other runs, at once, may have ended)
    assert "laser-webshop-demo" not in {e["label"] for e in events_of(out, "ran")}
    assert read_rows(out / "results" / "laser-webshop-demo.r1.jsonl") == []

    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="continued") == 0
    for label, tasks in runs:
        rows = read_rows(out / "results" / f"{label}.r1.jsonl")
        assert len(rows) == tasks and len({r["task_id"] for r in rows}) == tasks, label  # each task once
        assert all(not r["error"] and r["label"] == label and r["stop_reason"] for r in rows), label
        assert (out / "views" / f"{label}.r1" / "index.html").is_file()
    (demo,) = read_rows(out / "results" / "laser-webshop-demo.r1.jsonl")
    assert demo["success"] and demo["model_calls"] == len(REPLIES)  # resumed, every replayed request as recorded
    assert "laser-webshop-demo" in (out / "report" / "report.md").read_text()
    assert len(events_of(out, "session")) == 2 and events_of(out, "finished")
    for label in ("devils_advocate-webshop", "devils_advocate-hotpotqa"):  # their equal-cost arms ran too
        arms = read_rows(out / "results" / f"{label}.baseline.r1.jsonl")
        assert sorted(r["task_id"] for r in arms) == sorted(
            r["task_id"] for r in read_rows(out / "results" / f"{label}.r1.jsonl")
        )
        assert all(not r["error"] and 0 < r["baseline"]["spent"] <= r["baseline"]["target"] for r in arms), label
    assert "Introspection against equal-cost retrying" in (out / "report" / "report.md").read_text()


def events_of(folder: Path, kind: str) -> list[dict]:
    from introspect.study import journal

    return [e for e in journal.events(folder) if e["event"] == kind]


def test_a_signal_drains_the_study_and_the_same_command_continues_it(tmp_path):
    """SIGTERM mid-study: the step under way finishes and is checkpointed, no row is written for
    the unfinished task, exit 143 with the command that continues; the continued study ends as
    one never stopped (the demo's calls, each made once)."""
    from tests.graphs.laser_scripts import paging_script

    spec = write_study(
        tmp_path / "slow.toml",
        f'name = "slow"\nmodel = "{paging_script(tmp_path / "s.jsonl", delay=0.4)}"\n[[runs]]\nmethod = "laser"\n'
        'env = "webshop"\ntasks = "synthetic-600,synthetic-601,synthetic-602"\nconcurrency = 1\n'
        "settings = {max_actions = 2, backup = false}\n",
    )
    out = tmp_path / "out"
    child = spawn(["study", "run", str(spec), "--out", str(out)], cwd=ROOT, env=child_env(), logs=tmp_path, name="s")
    results = out / "results" / "laser-webshop.r1.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_text().strip()):  # the first task has its row
        assert child.poll() is None and time.monotonic() < deadline, output(tmp_path, "s")
        time.sleep(0.05)
    time.sleep(0.5)  # inside the second task
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=120) == 128 + signal.SIGTERM
    _, err = output(tmp_path, "s")
    assert "stopped by SIGTERM" in err and f"introspect study run {spec} --out {out}" in err
    assert len(read_rows(results)) == 1  # the task under way was drained at a step boundary: no row
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="again") == 0
    rows = read_rows(results)
    assert sorted(r["task_id"] for r in rows) == ["synthetic-600", "synthetic-601", "synthetic-602"]
    assert all(r["model_calls"] == 4 and not r["error"] for r in rows)


def test_a_study_paces_its_tasks_with_concurrency_auto(tmp_path):
    model = write_demo_script(tmp_path / "demo.jsonl")
    spec = study(tmp_path, model, 'concurrency = "auto"')
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="auto") == 0
    (row,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    assert row["success"] and row["model_calls"] == len(REPLIES) and not row["error"]
