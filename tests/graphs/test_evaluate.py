"""The evaluation harness: rows belong to one configuration (method, env, model, settings
fingerprint), finished threads are reported rather than re-run, graphs are not recompiled
per task, and errors are kept apart from the agent's failures."""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

import graphs.laser
from graphs import method_named
from introspect.evaluate import evaluate, fingerprint, read_rows, results_name
from nodes.laser.context import LaserContext
from nodes.runtime import llm
from tests.support.laser_demo import DEMO, REPLIES, demo_replies, write_demo_script
from tests.support.openai_stub import OpenAIStub, Reply

TASK = DEMO["task_id"]
OTHER = "3"


def calls_of(spec: str) -> int:
    """Replies a scripted model has given in this process (every temperature it was built with)."""
    return sum(len(model.calls) for key, model in llm._MODELS.items() if key[0] == spec)


async def test_another_model_or_other_settings_is_another_evaluation(tmp_path):
    results = tmp_path / "results.jsonl"
    saver = InMemorySaver()
    first = LaserContext(model=write_demo_script(tmp_path / "a.jsonl"), env="webshop")
    summary = await evaluate(method_named("laser"), first, [TASK], results, saver)
    assert summary.tasks == 1 and summary.success_rate == 1.0

    second = LaserContext(model=write_demo_script(tmp_path / "b.jsonl"), env="webshop")
    summary = await evaluate(method_named("laser"), second, [TASK], results, saver)
    assert calls_of(second.model) == len(REPLIES)  # the task ran again with the other model
    assert summary.tasks == 1 and summary.model_calls == len(REPLIES)  # the summary covers only its own rows

    changed = LaserContext(model=second.model, env="webshop", max_actions=14)
    assert fingerprint(method_named("laser"), changed) != fingerprint(method_named("laser"), second)
    await evaluate(method_named("laser"), changed, [TASK], results, saver)
    assert calls_of(second.model) == 2 * len(REPLIES)

    patient = LaserContext(model=second.model, env="webshop", timeout=5.0, retries=1)  # cannot change outcomes
    assert fingerprint(method_named("laser"), patient) == fingerprint(method_named("laser"), second)
    await evaluate(method_named("laser"), patient, [TASK], results, saver)
    assert calls_of(second.model) == 2 * len(REPLIES)

    rows = read_rows(results)
    assert all(r["cost_usd"] is None for r in rows)  # a scripted model has no price: unpriced, not $0
    assert summary.cost_usd is None and "cost          unpriced" in summary.lines()
    assert [r["model"] for r in rows] == [first.model, second.model, second.model]
    assert rows[2]["settings"] == {"max_actions": 14} and rows[1]["settings"] == {}
    assert len({r["fingerprint"] for r in rows}) == 3 and len({r["thread_id"] for r in rows}) == 3


def test_default_results_file_names_the_model():
    context = LaserContext(model="openai:gpt-4o-mini", env="webshop")
    assert results_name(method_named("laser"), context) == Path("results/laser-webshop-openai_gpt-4o-mini.jsonl")
    local = LaserContext(model="openai:Qwen/Qwen2.5-7B-Instruct", env="webshop")
    assert results_name(method_named("laser"), local).name == "laser-webshop-openai_Qwen_Qwen2.5-7B-Instruct.jsonl"
    replayed = LaserContext(model="replay:runs/gpt.JSONL", env="webshop")
    assert results_name(method_named("laser"), replayed).name == "laser-webshop-replay_runs_gpt.jsonl"


async def test_a_finished_thread_is_reported_not_run_again(tmp_path):
    results = tmp_path / "results.jsonl"
    saver = InMemorySaver()
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    await evaluate(method_named("laser"), context, [TASK], results, saver)
    (first,) = read_rows(results)
    results.unlink()  # the row is lost; the finished thread is still checkpointed

    summary = await evaluate(method_named("laser"), context, [TASK], results, saver)
    (again,) = read_rows(results)
    assert calls_of(context.model) == len(REPLIES)  # the model was not asked again
    assert again["from_checkpoint"] is True and not again["error"]
    for key in ("success", "reward", "steps", "model_calls", "input_tokens", "thread_id", "transitions"):
        assert again[key] == first[key], key
    assert summary.success_rate == 1.0 and summary.model_calls == len(REPLIES)


async def test_graphs_are_compiled_once_not_per_task(tmp_path, monkeypatch):
    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled per run")

    monkeypatch.setattr(graphs.laser, "build_graph", no_compiling)
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    summary = await evaluate(method_named("laser"), context, [TASK], tmp_path / "r.jsonl", InMemorySaver())
    assert summary.success_rate == 1.0 and not summary.errors


async def test_errors_are_not_failures(tmp_path, monkeypatch):
    """The first task is bought; the server refuses the second task's second request."""
    results = tmp_path / "results.jsonl"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        stub.replies.extend([*demo_replies(), demo_replies()[0], Reply(status=400)])
        context = LaserContext(model="openai:gpt-4o-mini", env="webshop")
        summary = await evaluate(method_named("laser"), context, [TASK, OTHER], results, InMemorySaver(), concurrency=1)
    assert summary.tasks == 2 and summary.ran == 1
    assert summary.success_rate == 1.0  # over the task that ran to an outcome
    assert [task for task, _ in summary.errors] == [OTHER]
    assert "400" in summary.errors[0][1]
    error_row = next(r for r in read_rows(results) if r["task_id"] == OTHER)
    assert error_row["success"] is False and error_row["model_calls"] == 1  # the call it did make counts
    assert any(line.startswith(f"error         task {OTHER}: ") for line in summary.lines())
    assert "(of the 1 that ran)" in summary.lines()[1]
    assert json.loads(results.read_text().splitlines()[0])["fingerprint"] == fingerprint(method_named("laser"), context)
