"""``introspect report`` on real results: ``introspect eval`` runs every method on its paper's
env (LASER on WebShop, Structured Reflection on MiniWoB++ in Chromium, Devil's Advocate on
the local shop, AutoPlan on ALFWorld games and HotpotQA questions) with the shipped demo
scripts on two or three tasks each, so the files hold successes, failures and errors (a
script that runs out on a task it was not written for); ``introspect train`` writes an
AutoPlan plan record. The report's figures are checked against what the test computes from
the rows themselves. Bad input is refused in one line before anything is written."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import output, run_main
from tests.support.report import row_of, table

DEMOS = Path(__file__).resolve().parents[1] / "introspect" / "demos"
HEAT_GAME = json.loads((DEMOS / "autoplan.json").read_text())["task_id"]
PICK_GAME = "json_2.1.1/valid_unseen/pick_and_place_simple-Pencil-None-Shelf-308/trial_T20190908_122024_052056"
QUESTIONS = "5a8b57f25542995d1e6f1371,5a8e3ea95542995a26add48d"  # gold "yes", then a place
ENVS = ("webshop", "miniwob", "webarena", "alfworld", "hotpotqa")  # the envs the files ran on


def script(name: str) -> str:
    return f"scripted:{DEMOS / f'{name}.jsonl'}"


def lines(path: Path, replies: list[str]) -> str:
    path.write_text("".join(json.dumps({"content": r}) + "\n" for r in replies), encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Path]:
    """Results files of `introspect eval` for every method, and a plan record of `train`."""
    folder = tmp_path_factory.mktemp("results")
    logs = folder / "logs"
    plan = folder / "plan.txt"
    plan.write_text(json.loads((DEMOS / "autoplan.json").read_text())["context"]["plan"])
    qa = lines(folder / "qa.jsonl", ["Both are American.", "finish with yes", "finish[yes]"])
    training = lines(
        folder / "train.jsonl",
        [
            "Both are American.",
            "finish with yes",
            "finish[yes]",
            "Summary.",
            "New Task Plan:\n1. Search each entity.\n2. Answer with finish[answer].",
        ],
    )
    runs = {
        "laser": ["laser", "--tasks", "synthetic-0,synthetic-1,synthetic-2", "--model", script("laser")],
        "laser_capped": [
            "laser",
            "--tasks",
            "synthetic-0,synthetic-1,synthetic-2",
            "--model",
            script("laser"),
            "--set",
            "max_actions=4",
        ],
        "sr": [
            "sr",
            "--tasks",
            "click-button/1,click-button/2,click-test/0",
            "--model",
            script("structured_reflection"),
        ],
        "da": ["da", "--env", "webarena", "--tasks", "shop-14,shop-0", "--model", script("devils_advocate")],
        "alfworld": [
            "autoplan",
            "--env",
            "alfworld",
            "--tasks",
            f"{HEAT_GAME},{PICK_GAME}",
            "--plan",
            str(plan),
            "--model",
            script("autoplan"),
        ],
        "hotpotqa": ["autoplan", "--env", "hotpotqa", "--tasks", QUESTIONS, "--model", qa, "--set", "judge=off"],
    }
    out = {}
    for name, args in runs.items():
        out[name] = folder / f"{name}.jsonl"
        code = run_main(["eval", *args, "--results", str(out[name]), "--checkpoint", "memory"], logs=logs, name=name)
        assert code in (0, 1), output(logs, name)  # 1: a task errored (its script ran out)
    out["plans"] = folder / "plans.json"
    code = run_main(
        [
            "train",
            "autoplan",
            "--env",
            "hotpotqa",
            "--split",
            "train[:2]",
            "--batch",
            "2",
            "--iterations",
            "1",
            "--set",
            "max_actions=1",
            "--set",
            "judge=off",
            "--plan-out",
            str(out["plans"]),
            "--model",
            training,
            "--checkpoint",
            "memory",
        ],
        logs=logs,
        name="train",
    )
    assert code == 0, output(logs, "train")
    return out


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ran(path: Path) -> list[dict[str, Any]]:
    return [r for r in rows_of(path) if not r["error"]]


def pct(values: list[float]) -> str:
    return f"{100 * sum(values) / len(values):.1f}"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


@pytest.mark.slow
@pytest.mark.browser
def test_report_on_every_method_s_paper_env(results, tmp_path):
    files = [results[n] for n in ("laser", "laser_capped", "sr", "da", "alfworld", "hotpotqa")]
    md, plots, logs = tmp_path / "report.md", tmp_path / "plots", tmp_path / "logs"
    code = run_main(
        ["report", *map(str, files), "--training", str(results["plans"]), "--markdown", str(md), "--plots", str(plots)],
        logs=logs,
        name="report",
    )
    out, err = output(logs, "report")
    assert code == 0 and err == "", err
    assert "Devil's Advocate: Table 1" in out and "LASER: Table 1" in out  # the terminal shows the tables too
    text = md.read_text()

    # every report: each configuration, its model and settings, tasks, errors, tokens, cost, time
    configs = table(text, "Configurations")
    assert [r[0] for r in configs] == [
        "#1 laser webshop",
        "#2 laser webshop",
        "#3 structured_reflection miniwob",
        "#4 devils_advocate webarena",
        "#5 autoplan alfworld",
        "#6 autoplan hotpotqa",
    ]
    assert row_of(configs, "#2 laser webshop")[1:3] == ["scripted:laser.jsonl", "max_actions=4"]
    for number, path in enumerate(files, 1):
        rows, done = rows_of(path), ran(path)
        shown = next(r for r in table(text, "Runs") if r[0].startswith(f"#{number} "))
        assert shown[1:5] == [
            str(len(rows)),
            str(len(done)),
            str(len(rows) - len(done)),
            pct([float(r["success"]) for r in done]),
        ]
        assert shown[8] == f"{sum(r['input_tokens'] for r in rows)} / {sum(r['output_tokens'] for r in rows)}"
        assert shown[9] == "unpriced"  # scripted models have no price: never $0
        assert shown[10] == f"{sum(r['seconds'] for r in rows):.1f}"
    failures = table(text, "Failures and errors")
    assert row_of(failures, "#1 laser webshop", "failure", "bought")[3] == "2"
    sr_error = next(r for r in rows_of(results["sr"]) if r["error"])
    assert row_of(failures, "#3 structured_reflection miniwob", "error")[2:4] == [sr_error["error"], "1"]

    # side by side: the capped LASER against the first, on the three shared tasks
    laser_a = {r["task_id"]: r["success"] for r in ran(results["laser"])}
    laser_b = {r["task_id"]: r["success"] for r in ran(results["laser_capped"])}
    diff = sum(laser_b[t] - laser_a[t] for t in laser_a) / len(laser_a)
    compared = row_of(table(text, "Side by side on webshop (against #1 laser webshop)"), "#2 laser webshop")
    assert compared[4] == "3" and compared[5].startswith(f"{100 * diff:+.1f} [")

    # Structured Reflection: completion at T=1, 3, 5 per task, from each row's trials
    sr_rows = ran(results["sr"])
    per_task = table(text, "Structured Reflection: completion rate (%) per task, #3 structured_reflection miniwob")
    for name in {r["task_id"].split("/")[0] for r in sr_rows}:
        seeds = [r for r in sr_rows if r["task_id"].startswith(name + "/")]
        expected = [pct([float(r["success"] and r["trials"] <= t) for r in seeds]) for t in (1, 3, 5)]
        assert row_of(per_task, "1-screen-1-step", name)[2:] == [str(len(seeds)), *expected]
    assert row_of(per_task, "1-screen-1-step", "click-button")[3:] == ["0.0", "100.0", "100.0"]  # reflected once

    # Devil's Advocate: Table 1 from the rows' episode fields
    da_rows = ran(results["da"])
    from envs.webarena.tasks import config

    assert all(r["intent_template_id"] == config(r["task_id"])["intent_template_id"] for r in rows_of(results["da"]))
    shown = row_of(table(text, "Devil's Advocate: Table 1"), "#4 devils_advocate webarena")
    assert shown[1:] == [
        str(len(da_rows)),
        pct([float(r["success"]) for r in da_rows]),
        *(
            f"{sum(r[k] for r in da_rows) / len(da_rows):.2f}"
            for k in ("actions_first_episode", "actions_last_episode", "plan_revisions", "backtracks")
        ),
    ]
    assert len(row_of(table(text, "Devil's Advocate: success rate (%) by episode"), "#4 devils_advocate webarena")) == 8

    # LASER: reward on the 0-100 scale, transitions per episode
    for number, name in ((1, "laser"), (2, "laser_capped")):
        laser_rows = ran(results[name])
        shown = row_of(table(text, "LASER: Table 1"), f"#{number} laser webshop")
        assert shown[2:5] == [
            pct([float(r["success"]) for r in laser_rows]),
            pct([r["reward"] for r in laser_rows]),
            f"{sum(r['transitions'] for r in laser_rows) / len(laser_rows):.1f}",
        ]

    # AutoPlan: the heat game succeeded, the pick game errored (left out); HotpotQA EM and F1
    assert row_of(table(text, "AutoPlan: ALFWorld success rate (%) per task type (Table 3a)"), "#5 autoplan alfworld")[
        1:
    ] == ["-", "-", "-", "100.0 (1)", "-", "-", "100.0 (1)"]
    qa_rows = ran(results["hotpotqa"])
    assert row_of(table(text, "AutoPlan: HotpotQA (Table 3b)"), "#6 autoplan hotpotqa")[1:5] == [
        "2",
        "2",
        pct([r["evaluation"]["em"] for r in qa_rows]),
        pct([r["evaluation"]["f1"] for r in qa_rows]),
    ]
    record = json.loads(results["plans"].read_text())
    jobs = record["history"][0]["jobs"]
    assert table(text, "AutoPlan training: plans.json") == [
        ["1", str(len(jobs)), str(sum(j["success"] for j in jobs)), pct([float(j["success"]) for j in jobs])]
    ]

    # the figures, linked from the Markdown
    names = ["sr_trials_miniwob", "da_episodes_webarena", "laser_transitions_webshop", "autoplan_training"]
    names += [f"{kind}_{env}" for kind in ("comparison", "cost_success") for env in ENVS]  # one env each
    assert sorted(p.stem for p in plots.iterdir()) == sorted(names)
    for name in names:
        width, height = png_size(plots / f"{name}.png")
        assert width > 400 and height > 150
        assert f"![{name}](plots/{name}.png)" in text


@pytest.mark.parametrize(
    "content,args,message",
    [
        (None, [], "results file not found: "),
        ("", [], " holds no results"),
        ("hello\nworld\n", [], " is not JSONL: line 1 is not JSON"),
        ('{"content": "a scripted reply"}\n', [], "line 1 is not a results row of `introspect eval`"),
        ("ok", ["--plots", "{file}"], " is a file, not a folder"),
        ("ok", ["--out", "{file}"], "--out {file} is a file, not a folder"),
        ("ok", ["--training", "{missing}"], "training record not found"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_is_written(tmp_path, content, args, message):
    path = tmp_path / "r.jsonl"
    good = json.dumps({"task_id": "1", "method": "laser", "env": "webshop", "model": "m", "success": True}) + "\n"
    if content is not None:
        path.write_text(good if content == "ok" else content)
    (tmp_path / "a-file").write_text("x")
    args = [a.format(file=tmp_path / "a-file", missing=tmp_path / "nope.json") for a in args]
    message = message.format(file=tmp_path / "a-file")
    md = tmp_path / "out" / "report.md"
    code = run_main(["report", str(path), "--markdown", str(md), *args], logs=tmp_path / "logs", name="report")
    out, err = output(tmp_path / "logs", "report")
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()
