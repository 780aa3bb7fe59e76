"""A study's equal-cost baseline arm (introspect.study.baseline) and its table in the report
(introspect.report.baselines), with the OpenAI-compatible stub answering in the order asked:
first the introspective run's calls, then the arm's attempts'."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs import methods
from introspect.evaluate import read_rows
from tests.support.cli import output, run_main
from tests.support.laser_demo import DEMO, REPLIES, demo_replies
from tests.support.openai_stub import OpenAIStub, Reply

TASK = DEMO["task_id"]
MODEL = "openai:gpt-4o-mini"
GIVE_UP = 12  # calls LASER makes on WebShop when every answer is "I give up." (refused 3 steps in a row)


def give_up(tokens: int = 11) -> list[Reply]:
    return [Reply(content="I give up.", prompt_tokens=tokens) for _ in range(GIVE_UP)]


def spec(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "study.toml"
    path.write_text(
        f'name = "b"\nmodel = "{MODEL}"\n{extra}\n[[runs]]\nmethod = "laser"\nenv = "webshop"\n'
        f'tasks = "{TASK}"\nbaseline = "equal_cost"\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub() as served:
        monkeypatch.setenv("OPENAI_BASE_URL", served.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield served


def test_every_method_declares_a_base_agent_of_its_own_settings():
    for method in methods():
        assert method.base_agent is not None, method.name
        context = method.context(**dict(method.base_agent.settings))
        assert all(getattr(context, k) == v for k, v in method.base_agent.settings.items())


def test_the_arm_stops_at_the_runs_spend_and_continues_without_asking_again(tmp_path, stub):
    out = tmp_path / "out"
    # the run: the demo bought in 15 calls; the arm: one attempt that gives up (12 calls), then one
    # cut at the 16th call of the arm, whatever the stub would still answer
    stub.replies.extend([*demo_replies(), *give_up(), *demo_replies()])
    assert run_main(["study", "run", str(spec(tmp_path)), "--out", str(out)], logs=tmp_path, name="run") == 0
    assert len(stub.requests) == 2 * len(REPLIES)  # the arm asked exactly what the run asked
    (run,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    (arm,) = read_rows(out / "results" / "laser-webshop.baseline.r1.jsonl")
    assert run["success"] and run["model_calls"] == len(REPLIES)
    assert arm["label"] == "laser-webshop.baseline" and arm["settings"]["backup"] is False
    said = arm["baseline"]
    assert (said["of"], said["spend"], said["target"], said["spent"]) == ("laser-webshop", "model_calls", 15, 15)
    assert [(a["success"], a["spent"], a["cut"]) for a in said["attempts"]] == [
        (False, GIVE_UP, False),
        (False, len(REPLIES) - GIVE_UP, True),
    ]
    assert not arm["success"] and not arm["error"]
    report = (out / "report" / "report.md").read_text()
    assert "Introspection against equal-cost retrying" in report
    assert "| laser | webshop | laser-webshop | 1 | 100.0 | 0.0 | 2.0 | 15.0 / 15.0 model_calls | +100.0" in report

    assert run_main(["study", "status", str(out)], logs=tmp_path, name="status") == 0
    assert "laser-webshop.baseline r1: 1/1 finished, 0 errored, 0 not run" in output(tmp_path, "status")[0]

    # lost rows are rebuilt from the attempts' threads, without a call: the cut one is not run on
    (out / "results" / "laser-webshop.baseline.r1.jsonl").unlink()
    assert run_main(["study", "run", str(spec(tmp_path)), "--out", str(out)], logs=tmp_path, name="again") == 0
    assert len(stub.requests) == 2 * len(REPLIES)
    (again,) = read_rows(out / "results" / "laser-webshop.baseline.r1.jsonl")
    assert again["baseline"] == said and not again["success"]
    assert run_main(["study", "run", str(spec(tmp_path)), "--out", str(out)], logs=tmp_path, name="third") == 0
    assert len(read_rows(out / "results" / "laser-webshop.baseline.r1.jsonl")) == 1  # the finished row is reused


def test_the_arm_succeeds_when_any_attempt_does_at_equal_tokens(tmp_path, stub):
    out = tmp_path / "out"
    # the run gives up on costly calls; the arm's cheap attempts: one gives up, the next buys
    stub.replies.extend([*give_up(tokens=10_000), *give_up(), *demo_replies(), *give_up()])
    path = spec(tmp_path, 'baseline_spend = "tokens"')
    assert run_main(["study", "run", str(path), "--out", str(out)], logs=tmp_path, name="run") == 0
    assert len(stub.requests) == 2 * GIVE_UP + len(REPLIES)  # no attempt after the success
    (run,) = read_rows(out / "results" / "laser-webshop.r1.jsonl")
    (arm,) = read_rows(out / "results" / "laser-webshop.baseline.r1.jsonl")
    said = arm["baseline"]
    assert not run["success"] and arm["success"] and arm["reward"] == 1.0
    assert [a["success"] for a in said["attempts"]] == [False, True]
    assert said["spend"] == "tokens" and said["spent"] < said["target"]
    assert said["target"] == run["input_tokens"] + run["output_tokens"]
    assert arm["model_calls"] == GIVE_UP + len(REPLIES)
    assert "| laser | webshop | laser-webshop | 1 | 0.0 | 100.0 | 2.0 |" in (out / "report" / "report.md").read_text()
    assert "-100.0 [-100.0, -100.0]" in (out / "report" / "report.md").read_text()


@pytest.mark.parametrize(
    ("extra", "run", "said"),
    [
        ("", 'baseline = "best_of"\n', "baseline must be one of 'equal_cost', got 'best_of'"),
        ('baseline_spend = "dollars"\n', 'baseline = "equal_cost"\n', "baseline_spend must be one of"),
        (
            'baseline_spend = "cost_usd"\nmodel = "scripted:{tmp}/x.jsonl"\n',
            'baseline = "equal_cost"\n',
            'baseline_spend = "cost_usd" cannot be kept',
        ),
        ("workers = 2\n", 'baseline = "equal_cost"\n', "a baseline arm runs here only"),
    ],
)
def test_a_baseline_the_study_cannot_keep_is_refused_in_one_line(tmp_path, monkeypatch, extra, run, said):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # never used: nothing runs
    extra = extra.format(tmp=tmp_path)
    (tmp_path / "x.jsonl").write_text('{"content": "I give up."}\n', encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(
        f'name = "bad"\n{extra}{"" if "model" in extra else f"model = {MODEL!r}"}\n'
        f'[[runs]]\nmethod = "laser"\nenv = "webshop"\ntasks = "{TASK}"\n{run}',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run_main(["study", "run", str(path), "--out", str(out)], logs=tmp_path, name="bad") == 2
    _, err = output(tmp_path, "bad")
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_a_dry_run_names_the_arm_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "dry.toml"
    path.write_text(
        f'name = "dry"\nmodel = "{MODEL}"\nbaseline_spend = "tokens"\n[[runs]]\nmethod = "laser"\n'
        f'env = "webshop"\ntasks = "{TASK}"\nbaseline = "equal_cost"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run_main(["study", "run", str(path), "--out", str(out), "--dry-run"], logs=tmp_path, name="dry") == 0
    said, _ = output(tmp_path, "dry")
    assert "baseline arm: the base agent retried until it has spent what the run spent on each task in tokens" in said
    assert not out.exists()
