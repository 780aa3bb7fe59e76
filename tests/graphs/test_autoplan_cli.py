"""AutoPlan through the ``introspect`` command: training draws from the training split only
(ALFWorld's training games, HotpotQA's training questions), a pool smaller than the batch is
said in one line and the record keeps the real batch size; and ``eval`` on HotpotQA with the
model judge writes EM, F1 and the judge's verdict in its results row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs import make_env
from envs.hotpotqa.questions import FULL_TRAIN, SHIPPED_SPLIT
from nodes.runtime.llm import model_for
from tests.envs.test_hotpotqa import install_hotpotqa, question
from tests.support.cli import run_cli
from tests.support.openai_stub import Reply

CAVEAT = f"distractor corpus: not comparable with the paper; {SHIPPED_SPLIT}"


def script(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps({"content": line}) + "\n" for line in lines))
    return f"scripted:{path}"


@pytest.mark.slow
def test_train_on_a_task_type_uses_the_training_games_and_reports_a_small_pool(capsys, tmp_path):
    # one step, then the thought the original code asks at the step cap, the reflection, the update
    spec = script(
        tmp_path, "Look around.", "look", "look", "Nothing yet.", "Summary.", "Flaw.", "1. find the object\n2. heat it"
    )
    out_file = tmp_path / "heat.json"
    code, out, err = run_cli(
        capsys,
        "train",
        "autoplan",
        "--task-type",
        "heat",
        "--batch",
        "4",
        "--iterations",
        "1",
        "--set",
        "max_actions=1",
        "--set",
        "reflect_model=run",
        "--set",
        "after_look=continue",  # the script looks, then reflects
        "--model",
        spec,
        "--plan-out",
        str(out_file),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    training = make_env("alfworld").task_ids("valid_train:heat")
    assert len(training) == 2
    assert (
        "note: the training pool has only 2 tasks, fewer than --batch 4: every batch is the whole pool"
        in out.splitlines()
    )
    record = json.loads(out_file.read_text())
    assert record["task_ids"] == training  # never a valid_unseen (evaluation) game
    assert record["batch_size"] == 2 and record["batch_size_requested"] == 4 and record["pool_size"] == 2
    assert [h["batch_size"] for h in record["history"]] == [2]
    assert sorted(j["task_id"] for j in record["history"][0]["jobs"]) == training


def test_train_refuses_an_evaluation_split(capsys, tmp_path):
    spec = script(tmp_path, "x")
    for env, split in (("hotpotqa", "dev[:4]"), ("hotpotqa", "test"), ("alfworld", "valid_unseen")):
        code, out, err = run_cli(
            capsys,
            "train",
            "autoplan",
            "--env",
            env,
            "--split",
            split,
            "--model",
            spec,
            "--plan-out",
            str(tmp_path / "p.json"),
            "--checkpoint",
            "memory",
            "--set",
            "judge=off",
        )
        assert code == 2 and err.count("\n") == 1 and "trains on a training split" in err, (env, split, err)
    assert not (tmp_path / "p.json").exists()


def test_hotpotqa_training_draws_from_its_training_questions(capsys, tmp_path):
    spec = script(tmp_path, "Answer.", "finish yes", "finish[yes]", "Summary.", "1. search each entity")
    out_file = tmp_path / "qa.json"
    code, out, err = run_cli(
        capsys,
        "train",
        "autoplan",
        "--env",
        "hotpotqa",
        "--batch",
        "2",
        "--iterations",
        "1",
        "--set",
        "max_actions=1",
        "--set",
        "judge=off",
        "--model",
        spec,
        "--plan-out",
        str(out_file),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    env = make_env("hotpotqa")
    record = json.loads(out_file.read_text())
    assert record["task_ids"] == env.task_ids("train")
    assert not set(record["task_ids"]) & set(env.task_ids("test"))
    assert "note:" not in out and record["batch_size"] == 2


def test_hotpotqa_training_draws_the_papers_50_hard_questions_from_the_installed_train_file(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "home"))
    train = [question(f"t{i}", ("hard", "medium", "easy")[i % 3]) for i in range(180)]
    folder = install_hotpotqa(tmp_path / "home", [question(f"d{i}") for i in range(30)], train)
    spec = script(tmp_path, "Answer.", "finish yes", "finish[yes]", "Summary.", "1. search each entity")
    out_file = tmp_path / "qa.json"
    code, out, err = run_cli(
        capsys,
        *("train", "autoplan", "--env", "hotpotqa", "--batch", "1", "--iterations", "1"),
        *("--set", "max_actions=1", "--set", "judge=off", "--model", spec),
        *("--plan-out", str(out_file), "--checkpoint", "memory"),
    )
    assert code == 0, err
    record = json.loads(out_file.read_text())
    drawn = make_env("hotpotqa", train_questions=str(folder / FULL_TRAIN)).task_ids("train")  # the seeded draw
    hard = {q["_id"] for q in train if q["level"] == "hard"}
    assert record["task_ids"] == drawn and len(drawn) == 50 and set(drawn) <= hard
    first = "\n".join(str(m.content) for m in model_for(spec, 0.0, 512).calls[0]["messages"])
    assert f"Question: Question {drawn[0]}?" in first  # the batch's question is the drawn training one


def test_eval_with_the_hotpotqa_judge_writes_em_f1_and_the_verdict(capsys, tmp_path):
    # thought, free-form action, formalized command, then the judge (the run's own model)
    spec = script(tmp_path, "Both were American.", "finish with American", "finish[American]", "Yes.")
    results = tmp_path / "results.jsonl"
    code, out, err = run_cli(
        capsys,
        "eval",
        "autoplan",
        "--env",
        "hotpotqa",
        "--env-option",
        "judge=run",
        "--env-option",
        "backend=local",
        "--tasks",
        "5a8b57f25542995d1e6f1371",
        "--model",
        spec,
        "--results",
        str(results),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    row = json.loads(results.read_text())
    assert row["evaluation"] == {
        "answer": "American",
        "gold": "yes",
        "em": 0.0,
        "f1": 0.0,
        "judge": True,
        "success": True,
        "judged_by": spec,
        "corpus": "distractor",
        "comparable": False,
        "caveat": CAVEAT,
    }
    assert row["caveat"] == CAVEAT
    assert row["success"] is True and row["reward"] == 0.0  # judged correct; EM stays the reward
    assert row["model_calls"] == 4  # the judge's call is the run's cost
    assert "success rate  100.0%" in out


def test_autoplan_on_hotpotqa_judges_with_the_originals_gpt4_by_default(capsys, tmp_path, openai_stub):
    # the run's model is a script; the judge is the original's, openai:gpt-4-0314, here the local stub
    spec = script(tmp_path, "Both were American.", "finish with American", "finish[American]")
    openai_stub.replies.append(Reply("yes"))
    results = tmp_path / "results.jsonl"
    code, out, err = run_cli(
        capsys,
        "eval",
        "autoplan",
        "--env",
        "hotpotqa",
        "--env-option",
        "backend=local",
        "--tasks",
        "5a8b57f25542995d1e6f1371",
        "--model",
        spec,
        "--results",
        str(results),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    [asked] = openai_stub.requests
    assert asked["model"] == "gpt-4-0314" and asked["temperature"] == 0.0
    assert 'My Prediction: "American"' in asked["messages"][0]["content"]
    row = json.loads(results.read_text())
    assert row["evaluation"]["judge"] is True and row["evaluation"]["judged_by"] == "openai:gpt-4-0314"
    assert (row["evaluation"]["em"], row["evaluation"]["f1"]) == (0.0, 0.0)  # EM and F1 beside the verdict
    assert row["success"] is True and row["caveat"] == CAVEAT


def test_a_run_whose_default_judge_has_no_key_fails_before_it_starts(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = script(tmp_path, "Both were American.", "finish with American", "finish[American]")
    results = tmp_path / "results.jsonl"
    args = ["eval", "autoplan", "--env", "hotpotqa", "--tasks", "0:1", "--model", spec, "--results", str(results)]
    code, out, err = run_cli(capsys, *args, "--checkpoint", "memory")
    assert code == 2 and err.count("\n") == 1 and not results.exists()
    assert "the judge model openai:gpt-4-0314: no OpenAI key" in err and "judge=off" in err
    code, out, err = run_cli(capsys, *args, "--checkpoint", "memory", "--set", "judge=off")
    assert code == 0, err
    row = json.loads(results.read_text())
    assert row["evaluation"]["judge"] is None and "judged_by" not in row["evaluation"]  # exact match only, asked


def test_a_row_stopped_by_the_methods_own_step_cap_still_carries_the_corpus_caveat(capsys, tmp_path):
    spec = script(tmp_path, "Search first.", "search Ed Wood", "search[Ed Wood]")
    results = tmp_path / "results.jsonl"
    code, out, err = run_cli(
        capsys,
        *("eval", "autoplan", "--env", "hotpotqa", "--tasks", "0:1", "--model", spec, "--results", str(results)),
        *("--set", "max_actions=1", "--set", "judge=off", "--checkpoint", "memory", "--env-option", "backend=local"),
    )
    assert code == 0, err
    row = json.loads(results.read_text())
    assert "evaluation" not in row and row["success"] is False  # the env never ended the episode
    assert row["caveat"] == CAVEAT  # from the env's snapshot
