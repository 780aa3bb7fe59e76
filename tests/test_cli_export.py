"""``introspect export``: a study's (or a results file's) runs as JSONL for training: ``chat``, one
line per model call as made in OpenAI's fine-tuning format; ``steps``, one line per env step with
the method's introspection; filtered by success, method and env; no key in what is written;
bad input is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run_cli as cli
from tests.support.laser_demo import REPLIES, write_demo_script
from tests.support.scenarios import SCENARIOS

SECRET = ("SHOP_API_KEY", "decorative pillows")  # a "key" whose value is in the LASER goal and prompts


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A study folder: LASER on two WebShop goals (one bought, one not) and AutoPlan on an
    ALFWorld game, run with scripted models and the secret set; its checkpoint URL."""
    folder = tmp_path_factory.mktemp("study")
    (folder / "spec.toml").write_text('name = "export"\n')
    db = f"sqlite:///{folder / 'runs.sqlite'}"
    autoplan = SCENARIOS["autoplan"]
    (folder / "plan.txt").write_text(autoplan.context["plan"])
    runs = [
        ("laser.r1", ["laser", "--tasks", "synthetic-0,synthetic-1", "--model", write_demo_script(folder / "l.jsonl")]),
        (
            "autoplan.r1",
            [
                *("autoplan", "--env", autoplan.env, "--tasks", autoplan.graph_input["task_id"]),
                *("--plan", str(folder / "plan.txt"), "--model", autoplan.write_script(folder / "a.jsonl")),
            ],
        ),
    ]
    os.environ[SECRET[0]] = SECRET[1]
    try:
        for name, args in runs:
            code = _main(["eval", *args, "--results", str(folder / "results" / f"{name}.jsonl"), "--checkpoint", db])
            assert code == 0
    finally:
        del os.environ[SECRET[0]]
    return folder, db


def _main(args: list[str]) -> int:
    from introspect.cli import main

    return main(args)


def rows(folder: Path) -> list[dict]:
    return [
        json.loads(line) for file in sorted(folder.glob("results/*.jsonl")) for line in file.read_text().splitlines()
    ]


def export(capsys, monkeypatch, study, *args: str) -> tuple[list[dict], str]:
    folder, db = study
    monkeypatch.setenv(*SECRET)
    out = folder / "out.jsonl"
    out.unlink(missing_ok=True)
    code, printed, err = cli(capsys, "export", str(folder), "--out", str(out), "--checkpoint", db, *args)
    assert code == 0, err
    text = out.read_text()
    assert SECRET[1] not in text  # the secret was in LASER's goal and prompts
    return [json.loads(line) for line in text.splitlines()], printed


def test_chat_has_every_model_call_as_made_in_openai_form(capsys, monkeypatch, study):
    lines, printed = export(capsys, monkeypatch, study, "--format", "chat")
    made = rows(study[0])
    total = sum(r["model_calls"] for r in made)
    assert len(lines) == total == 24 + 2 * len(REPLIES)  # AutoPlan's 24 calls, then LASER's demo twice
    assert printed.strip() == f"wrote {total} model calls of 3 runs to {study[0] / 'out.jsonl'}"
    for line in lines:
        roles = [m["role"] for m in line["messages"]]
        assert set(roles) <= {"system", "user", "assistant", "tool"} and roles[-1] == "assistant" and "user" in roles
        # each assistant turn trains once: as its call's reply, never again as a later call's history
        assert "weight" not in line["messages"][-1]
        assert all(m.get("weight") == 0 for m in line["messages"][:-1] if m["role"] == "assistant")
    history = [m for line in lines for m in line["messages"][:-1] if m["role"] == "assistant"]
    assert history, "some call sends earlier turns (AutoPlan's, LASER's)"
    laser = lines[24 : 24 + len(REPLIES)]  # after AutoPlan's 24 calls (results files in name order), synthetic-0's
    assert "***" in json.dumps(laser[0])  # its goal, in the first prompt: redacted
    for line, reply in zip(laser, REPLIES, strict=True):
        answer = line["messages"][-1]
        assert answer["content"] == reply["content"].replace(SECRET[1], "***")
        calls = answer.get("tool_calls", [])
        assert [c["function"]["name"] for c in calls] == [c["name"] for c in reply.get("tool_calls", [])]
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [
            c["args"] for c in reply.get("tool_calls", [])
        ]
        assert all(c["type"] == "function" for c in calls)
    assert all(
        line["tools"] and line["tools"][0]["type"] == "function"
        for line in laser
        if "tool_calls" in line["messages"][-1]
    )


def test_chat_per_run_makes_a_chat_that_goes_on_one_line_and_trains_each_reply_once(capsys, monkeypatch, study):
    lines, printed = export(capsys, monkeypatch, study, "--format", "chat", "--per", "run")
    total = sum(r["model_calls"] for r in rows(study[0]))
    assert printed.startswith(f"wrote {len(lines)} conversations of 3 runs") and len(lines) < total
    trained = [m for line in lines for m in line["messages"] if m["role"] == "assistant" and m.get("weight") != 0]
    assert len(trained) == total  # every call's reply trains, and only once
    assert all("weight" not in line["messages"][-1] for line in lines)


def test_steps_have_observation_action_reward_and_the_methods_introspection(capsys, monkeypatch, study):
    lines, _ = export(capsys, monkeypatch, study, "--format", "steps")
    made = rows(study[0])
    assert len(lines) == sum(r["steps"] for r in made) == 24
    by_thread: dict[str, list[dict]] = {}
    for line in lines:
        by_thread.setdefault(line["thread_id"], []).append(line)
    assert set(by_thread) == {r["thread_id"] for r in made}
    for row in made:
        steps = by_thread[row["thread_id"]]
        assert [s["step"] for s in steps] == list(range(1, row["steps"] + 1))
        assert all(s["success"] == row["success"] and s["method"] == row["method"] for s in steps)
        for before, after in zip(steps, steps[1:]):
            assert after["observation"] == before["next_observation"] and before["observation"]  # the chain of pages
        assert steps[-1]["reward"] == row["reward"]
    laser = [line for line in lines if line["method"] == "laser"]
    assert {s["introspection"]["laser_state"] for s in laser} == {"results", "item"}  # the state a step led to
    assert all("***" in s["goal"] for s in laser if s["task_id"] == "synthetic-0")
    autoplan = [line for line in lines if line["method"] == "autoplan"]
    plan = SCENARIOS["autoplan"].context["plan"]
    assert autoplan and all(s["introspection"]["plan"] == plan and s["introspection"]["thought"] for s in autoplan)
    assert all(s["introspection"]["free_form_action"] and s["action"] for s in autoplan)


@pytest.mark.parametrize(
    "args,kept",
    [
        (["--success-only"], lambda r: r["success"]),
        (["--method", "autoplan"], lambda r: r["method"] == "autoplan"),
        (["--env", "webshop"], lambda r: r["env"] == "webshop"),
        (["--method", "laser", "--success-only"], lambda r: r["method"] == "laser" and r["success"]),
    ],
)
def test_filters_keep_only_the_runs_asked_for(capsys, monkeypatch, study, args, kept):
    lines, _ = export(capsys, monkeypatch, study, "--format", "steps", *args)
    wanted = [r for r in rows(study[0]) if kept(r)]
    assert 0 < len(wanted) < 3
    assert {line["thread_id"] for line in lines} == {r["thread_id"] for r in wanted}
    assert len(lines) == sum(r["steps"] for r in wanted)


def test_a_results_file_exports_beside_where_it_runs(capsys, monkeypatch, study, tmp_path):
    folder, db = study
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(
        capsys, "export", str(folder / "results" / "laser.r1.jsonl"), "--format", "chat", "--checkpoint", db
    )
    assert code == 0, err
    assert len((tmp_path / "laser.r1.chat.jsonl").read_text().splitlines()) == 2 * len(REPLIES)


@pytest.mark.parametrize(
    "args,message",
    [
        (["missing.jsonl", "--format", "chat"], "no results file or study folder missing.jsonl"),
        (["{empty}", "--format", "chat"], "not a study (no spec.toml)"),
        (["{study}", "--format", "xml"], "invalid choice: 'xml'"),
        (["{study}", "--format", "chat", "--method", "nope"], "nope"),
        (["{study}", "--format", "chat", "--env", "nowhere"], "no rows of"),
        (["{study}", "--format", "chat", "--out", "{empty}"], "is a directory"),
        (["{study}", "--format", "steps", "--checkpoint", "sqlite:///{empty}/other.sqlite"], "none of the 3 rows"),
    ],
)
def test_bad_export_input_is_one_line_and_writes_nothing(capsys, study, tmp_path, args, message):
    folder, db = study
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    filled = [a.format(study=folder, empty=tmp_path / "empty") for a in args]
    extra = [] if "--out" in filled else ["--out", str(out)]
    extra += [] if "--checkpoint" in filled else ["--checkpoint", db]
    try:
        code, _, err = cli(capsys, "export", *filled, *extra)
    except SystemExit as exit:  # argparse's own refusal
        code, err = int(str(exit.code)), capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert out.read_text() == "kept\n" and not [p for p in tmp_path.rglob("*") if p.name not in ("empty", "out.jsonl")]
