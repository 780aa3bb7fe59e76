"""``introspect ablate``: a finished run is forked before each introspective intervention it made
(the method declares them, ``Method.interventions``), the fork runs to its end with that
intervention switched off, and a row records the outcome with and without it. The runs are
scripted: LASER's backup buys the goal item once the transitions run out; without it the run
stops unbought."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.runner import graph_for
from tests.graphs.laser_scripts import buy_call, call, goal_with_options, think, tour_script
from tests.graphs.test_laser_backup import wander
from tests.support.cli import run_cli


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


def backup_script(goal: dict, ids: list[str]) -> list[dict]:
    """13 transitions, the 13th opening the goal item; the backup then picks it and buys it with
    the goal's options. Replies to spare let a fork without the backup run to its own end."""
    backup = [
        think("the goal item is the best"),
        call("select_item", item_id=goal["asin"]),
        {"content": ", ".join(goal["goal_options"])},
        think("choose its options"),
        buy_call(goal),
    ]
    return wander(goal, ids, end_on_goal=True) + backup + [think("nothing more to do")] * 12


async def nodes_of(db: str, thread: str) -> list[str]:
    """The nodes a thread ran, in order."""
    async with open_checkpointer(db, existing=True) as saver:
        graph = graph_for(method_named("laser"), saver)
        history = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread}})][::-1]
    return [",".join(s.next) for s in history if s.next]


def test_a_run_without_its_backup_is_forked_and_recorded(capsys, tmp_path, shop_goal, write_script):
    task_id, goal, ids = shop_goal
    db, results = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "results.jsonl"
    model = write_script(backup_script(goal, ids))
    code, _, err = run_cli(
        capsys, "eval", "laser", "--tasks", task_id, "--model", model, "--set", "backup_check=each_transition",
        "--results", str(results), "--checkpoint", db, "--concurrency", "1",
    )  # fmt: skip
    assert code == 0, err
    [original] = [json.loads(line) for line in results.read_text().splitlines()]
    assert original["success"] is True and original["backup_used"] is True

    out_file = tmp_path / "ablations.jsonl"
    views = tmp_path / "views"
    code, out, err = run_cli(
        capsys, "ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--intervention", "backup",
        "--views", str(views),
    )  # fmt: skip
    assert code == 0, err
    [page] = views.glob("compare-*.html")
    assert f"view: {page}" in out
    html = page.read_text()  # the fork beside its original, the first step where they differ marked
    assert "First difference: <a href='#difference'>step 14</a> (run B has no step 14)" in html
    assert "settings backup=false, backup_check" in html
    [row] = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert (row["thread_id"], row["intervention"], row["count"], row["off"]) == (
        original["thread_id"], "backup", 1, {"backup": False},
    )  # fmt: skip
    assert row["error"] == "" and row["with"]["success"] is True and row["with"]["reward"] == original["reward"]
    assert row["without"]["success"] is False and row["without"]["reward"] < original["reward"]
    assert "without backup #1: success true -> false" in out

    # the run's own page lists its fork (without what, at which step, its outcome) and links it;
    # the fork's page, written beside it, says what it is an ablation of and from where
    from introspect.view import page_name

    code, out, err = run_cli(capsys, "view", original["thread_id"], "--checkpoint", db, "--out", str(tmp_path / "v"))
    assert code == 0, err
    html = (tmp_path / "v" / page_name(original["thread_id"])).read_text()
    [listed] = re.findall(r"<section class='step ablations'>.*?</section>", html)
    cells = re.findall(r"<td>(.*?)</td>", listed)
    assert cells[:4] == [
        "backup #1",
        "backup=false",
        str(row["step"]),
        f"success=False reward={row['without']['reward']:.3f}",
    ]
    assert f"<a class='fork' href='{page_name(row['fork'])}'>{row['fork']}</a>" in listed
    fork_page = (tmp_path / "v" / page_name(row["fork"])).read_text()
    assert (
        f"Ablation of <a href='{page_name(original['thread_id'])}'>{original['thread_id']}</a>: without backup #1 "
        f"(backup=false), forked before step {row['step']} at checkpoint {row['checkpoint']}"
    ) in fork_page
    assert "class='step ablations'" not in fork_page and "Ablation of" not in html

    ran = asyncio.run(nodes_of(db, original["thread_id"]))
    forked = asyncio.run(nodes_of(db, row["fork"]))
    assert "backup" in ran and "backup" not in forked
    shared = ran.index("backup") - 1  # the fork starts before the step that led to the backup
    assert forked[:shared] == ran[:shared] and forked != ran

    # the report: LASER's table, the backup earned the run its success
    code, out, err = run_cli(
        capsys, "report", str(results), "--ablations", str(out_file), "--markdown", str(tmp_path / "r.md")
    )
    assert code == 0, err
    report = (tmp_path / "r.md").read_text()
    assert "LASER: what each intervention earned" in report
    [line] = [line for line in report.splitlines() if line.startswith("| webshop | backup |")]
    assert [c.strip() for c in line.split("|")[3:7]] == ["1", "1.0", "100.0", "0.0"]
    code, _, err = run_cli(capsys, "report", str(results), "--ablations", str(results))
    assert code == 2 and "is not a row of `introspect ablate`" in err and len(err.strip().splitlines()) == 1

    # run again: the ablation is there, nothing runs twice
    code, out, err = run_cli(
        capsys, "ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--intervention", "backup"
    )
    assert code == 0 and "ablations written: 0  already there: 1  errors: 0" in out
    assert len(out_file.read_text().splitlines()) == 1


def test_a_study_is_ablated_into_its_folder_and_its_report_shows_the_table(capsys, tmp_path, shop_goal, write_script):
    task_id, goal, ids = shop_goal
    model = write_script(backup_script(goal, ids))
    spec = tmp_path / "study.toml"
    spec.write_text(
        f'name = "s"\nmodel = "{model}"\n[[runs]]\nmethod = "laser"\nenv = "webshop"\ntasks = "{task_id}"\n'
        'settings = {backup_check = "each_transition"}\n',
        encoding="utf-8",
    )
    folder = tmp_path / "study"
    code, _, err = run_cli(capsys, "study", "run", str(spec), "--out", str(folder))
    assert code == 0, err
    code, out, err = run_cli(capsys, "ablate", str(folder), "--intervention", "backup")  # its own checkpoints
    assert code == 0, err
    [row] = [json.loads(line) for line in (folder / "ablations.jsonl").read_text().splitlines()]
    assert row["label"] and row["repeat"] == 1 and row["without"]["success"] is False
    code, _, err = run_cli(capsys, "study", "report", str(folder))
    assert code == 0, err
    assert "LASER: what each intervention earned" in (folder / "report" / "report.md").read_text()


def test_a_fork_that_failed_continues_from_its_checkpoint_the_next_time(capsys, tmp_path, shop_goal, write_script):
    """The script runs out in the fork (an error row); given more replies, the same command
    continues that fork where it stopped and writes its row."""
    from nodes.runtime.llm import clear_models

    task_id, goal, ids = shop_goal
    db, results = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "results.jsonl"
    replies = backup_script(goal, ids)[:-12]  # nothing to spare
    model = write_script(replies, name="script.jsonl")
    code, _, err = run_cli(
        capsys, "eval", "laser", "--tasks", task_id, "--model", model, "--set", "backup_check=each_transition",
        "--results", str(results), "--checkpoint", db,
    )  # fmt: skip
    assert code == 0, err
    out_file = tmp_path / "ablations.jsonl"
    ablate = ["ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--intervention", "backup"]
    code, out, err = run_cli(capsys, *ablate)
    assert code == 1, err  # a fork that ended in an error, as eval's tasks
    [failed] = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert "has 31 replies; call 32 asked for more" in failed["error"] and "without backup #1: error: " in out
    stopped = asyncio.run(checkpoint_ids(db, failed["fork"]))

    write_script(replies + [think("nothing more to do")] * 12, name="script.jsonl")
    clear_models()
    code, out, err = run_cli(capsys, *ablate)
    assert code == 0 and "ablations written: 1  already there: 0  errors: 0" in out, err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 2 and rows[1]["error"] == "" and rows[1]["without"]["success"] is False
    assert rows[1]["fork"] == failed["fork"]
    finished = asyncio.run(checkpoint_ids(db, failed["fork"]))
    assert finished[: len(stopped)] == stopped and len(finished) > len(stopped)  # continued, not forked again


async def checkpoint_ids(db: str, thread: str) -> list[str]:
    async with open_checkpointer(db, existing=True) as saver:
        graph = graph_for(method_named("laser"), saver)
        history = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread}})][::-1]
    return [s.config["configurable"]["checkpoint_id"] for s in history]


def evaluated_tour(capsys, tmp_path, shop_goal, write_script) -> tuple[str, Path]:
    """LASER's tour of the shop (back twice, then it buys), evaluated on a SQLite checkpointer:
    the checkpoint URL and the results file."""
    task_id, goal, ids = shop_goal
    db, results = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "results.jsonl"
    model = write_script(tour_script(goal, ids) + [think("nothing more to do")] * 12)
    code, _, err = run_cli(
        capsys, "eval", "laser", "--tasks", task_id, "--model", model, "--results", str(results), "--checkpoint", db,
    )  # fmt: skip
    assert code == 0, err
    return db, results


def test_each_backtrack_of_a_run_is_ablated_without_the_functions_that_go_back(
    capsys, tmp_path, shop_goal, write_script
):
    """The tour goes back twice (Prev, then Back_to_Search) before it buys; each fork starts
    before the state that chose to go back, and that state is not offered the way back."""
    db, results = evaluated_tour(capsys, tmp_path, shop_goal, write_script)
    [original] = [json.loads(line) for line in results.read_text().splitlines()]
    assert original["success"] is True

    out_file = tmp_path / "ablations.jsonl"
    code, out, err = run_cli(capsys, "ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--each")
    assert code == 0, err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert sorted((r["intervention"], r["count"], r["fired"]) for r in rows) == [
        ("backtrack", 1, 2),
        ("backtrack", 2, 2),
    ]
    ran = asyncio.run(nodes_of(db, original["thread_id"]))
    assert ran.count("search") == 2 and "results" in ran[ran.index("item") :]  # Prev, then Back_to_Search
    for row in rows:
        assert row["error"] == "" and row["off"] == {"backtracking": False}
        forked = asyncio.run(nodes_of(db, row["fork"]))
        assert forked != ran
        if row["count"] == 1:  # from the first item it cannot go back to the results (Prev)
            assert "results" not in forked[forked.index("item") :]
        else:  # from the second results page it cannot go back to search (Back_to_Search)
            assert forked.count("search") == 1 and "results" in forked[forked.index("item") :]
    first = next(r for r in rows if r["count"] == 1)
    assert first["without"]["success"] is False  # the tour's script cannot buy without going back


async def final_state(db: str, thread: str) -> dict:
    async with open_checkpointer(db, existing=True) as saver:
        graph = graph_for(method_named("laser"), saver)
        return (await graph.aget_state({"configurable": {"thread_id": thread}})).values


ROW = {"task_id": "1", "env": "webshop", "model": "m", "success": True, "thread_id": "t"}


@pytest.mark.parametrize(
    "content,message,more",
    [
        ('{"a": 1}\n', "is not a results row of `introspect eval`", []),
        ("not json\n", "is not JSONL: line 1 is not JSON", []),
        (json.dumps({**ROW, "method": "nosuch"}) + "\n", "unknown method 'nosuch'", []),
        (
            json.dumps({**ROW, "method": "laser"}) + "\n",
            "declares the intervention 'bakup': they declare",
            ["--intervention", "bakup"],
        ),
        (
            '{"task_id": "1", "method": "laser", "env": "webshop", "model": "m", "success": true}\n',
            "names no thread_id",
            [],
        ),
    ],
)
def test_a_file_that_is_not_results_is_refused_in_one_line(capsys, tmp_path, content, message, more):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    out_file = tmp_path / "ablations.jsonl"
    code, out, err = run_cli(capsys, "ablate", str(bad), "--out", str(out_file), *more)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out_file.exists() and out == ""


def test_a_replayed_run_is_ablated_on_the_model_named_by_model_and_refused_without_it(
    capsys, tmp_path, shop_goal, write_script
):
    """A recording answers only the requests it holds: a run replayed from one is refused (one
    line naming --model, exit 2, nothing written) unless --model names the model the forks run
    on, which the rows' provenance then records."""
    task_id, goal, ids = shop_goal
    script = write_script(backup_script(goal, ids))
    recording = tmp_path / "run.rec.jsonl"
    common = ["eval", "laser", "--tasks", task_id, "--set", "backup_check=each_transition"]
    code, _, err = run_cli(
        capsys, *common, "--model", script, "--record", str(recording),
        "--results", str(tmp_path / "recorded.jsonl"), "--checkpoint", f"sqlite:///{tmp_path / 'recorded.sqlite'}",
    )  # fmt: skip
    assert code == 0, err
    db, results = f"sqlite:///{tmp_path / 'replayed.sqlite'}", tmp_path / "replayed.jsonl"
    code, _, err = run_cli(
        capsys, *common, "--model", f"replay:{recording}", "--results", str(results), "--checkpoint", db
    )
    assert code == 0, err
    [original] = [json.loads(line) for line in results.read_text().splitlines()]
    assert original["model"] == f"replay:{recording}" and original["success"] is True

    out_file = tmp_path / "ablations.jsonl"
    ablate = ["ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--intervention", "backup"]
    code, out, err = run_cli(capsys, *ablate)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"was made with replay:{recording}, a recording" in err and "--model SPEC" in err
    assert not out_file.exists()
    assert asyncio.run(nodes_of(db, f"{original['thread_id']}-ablate-backup-1")) == []  # no fork was made

    code, out, err = run_cli(capsys, *ablate, "--model", script)
    assert code == 0, err
    [row] = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert row["error"] == "" and row["with"]["success"] is True and row["without"]["success"] is False
    assert row["model"] == f"replay:{recording}"  # the run's
    assert row["provenance"]["model"] == script  # the fork's


def test_a_model_named_by_model_that_cannot_be_built_is_refused_before_anything_runs(capsys, tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({**ROW, "method": "laser"}) + "\n")
    out_file = tmp_path / "ablations.jsonl"
    missing = tmp_path / "missing.jsonl"
    code, out, err = run_cli(capsys, "ablate", str(results), "--out", str(out_file), "--model", f"scripted:{missing}")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and str(missing) in err
    assert not out_file.exists()


def test_a_spent_budget_skips_the_forks_left_and_the_same_command_continues_them(
    capsys, tmp_path, shop_goal, write_script
):
    """As a study's budget: once the forks have spent --max-tokens-total, the fork in flight
    stops at its checkpoint and the one waiting never starts; the summary counts both as skipped
    for the budget (exit 3, no row). Run again with room, the stopped fork continues and each
    row says what its fork spent (its usage beyond the checkpoint it started from)."""
    db, results = evaluated_tour(capsys, tmp_path, shop_goal, write_script)
    out_file = tmp_path / "ablations.jsonl"
    ablate = ["ablate", str(results), "--checkpoint", db, "--out", str(out_file), "--each", "--concurrency", "1"]
    code, out, err = run_cli(capsys, *ablate, "--max-tokens-total", "1")
    assert code == 3, err
    assert "skipped for the budget: 2 forks (the ablation's max_tokens_total (1 tokens) reached)" in out
    assert "ablations written: 0" in out and not out_file.exists()
    thread = json.loads(results.read_text().splitlines()[0])["thread_id"]
    started = [f for f in (f"{thread}-ablate-backtrack-{n}" for n in (1, 2)) if asyncio.run(nodes_of(db, f))]
    assert len(started) == 1  # the fork in flight keeps its checkpoints; the other was never forked
    stopped = asyncio.run(checkpoint_ids(db, started[0]))

    code, out, err = run_cli(capsys, *ablate, "--max-tokens-total", "1000000")
    assert code == 0 and "ablations written: 2" in out and "skipped for the budget" not in out, err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    continued = asyncio.run(checkpoint_ids(db, started[0]))
    assert continued[: len(stopped)] == stopped and len(continued) > len(stopped)
    for row in rows:
        tokens = row["without"]["input_tokens"] + row["without"]["output_tokens"]
        assert 0 < row["spent"]["tokens"] < tokens  # the shared prefix is not the ablation's spending

    # what the rows already written spent counts against the budget: with one row's spending as
    # the whole budget, the other fork is skipped before it runs
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    spent = str(int(rows[0]["spent"]["tokens"]))
    code, out, err = run_cli(capsys, *ablate[:-2], "--out", str(more), "--max-tokens-total", spent)
    assert code == 3 and "ablations written: 0  already there: 1" in out, err
    assert f"skipped for the budget: 1 forks (the ablation's max_tokens_total ({spent} tokens) reached)" in out


def test_a_dollar_budget_on_an_unpriced_model_is_refused_in_one_line(capsys, tmp_path, write_script):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({**ROW, "method": "laser", "model": "scripted:x.jsonl"}) + "\n")
    out_file = tmp_path / "ablations.jsonl"
    code, out, err = run_cli(capsys, "ablate", str(results), "--out", str(out_file), "--max-cost-usd", "1")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the model scripted:x.jsonl has no known price, so --max-cost-usd cannot be kept" in err
    assert not out_file.exists()
