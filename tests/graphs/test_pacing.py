"""``--concurrency auto`` (introspect.pacing): tasks in flight rise while the model's requests
are answered and fall back when the provider refuses them (429s, timeouts), within a ceiling;
against the local OpenAI-compatible stub serving a rate limit, every task still completes."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import method_named
from introspect.cli import main
from introspect.evaluate import evaluate
from introspect.pacing import Pacer
from tests.support.entry_points import install_methods
from tests.support.openai_stub import OpenAIStub, Reply
from tests.test_fifth_method import MODULE, script


def test_the_pacer_doubles_until_refused_then_halves_once_per_burst():
    pacer = Pacer(ceiling=16, limit=1)
    for _ in range(3):
        pacer.heard("ok")
    assert pacer.allowed == 4  # slow start: one more per answer
    for _ in range(3):
        pacer.heard("429")  # a burst of refusals from requests sent before the cut
    assert pacer.allowed == 2 and pacer.cuts == 1 and pacer.refused["429"] == 3
    pacer.heard("ok")
    pacer.heard("ok")
    assert pacer.allowed == 2  # above the threshold: one more per round, not per answer
    pacer.heard("timeout")
    assert pacer.allowed == 1 and pacer.cuts == 2
    for _ in range(100):
        pacer.heard("ok")
    assert pacer.allowed <= 16
    assert pacer.trace[:2] == [("ok", 2), ("ok", 3)]


def test_the_pacer_holds_tasks_back_to_its_limit():
    async def scenario() -> list[int]:
        pacer = Pacer(ceiling=4, limit=1)
        seen: list[int] = []

        async def task() -> None:
            async with pacer:
                seen.append(pacer.in_flight)
                await asyncio.sleep(0.01)
                pacer.heard("ok")

        await asyncio.gather(*(task() for _ in range(12)))
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == 1 and max(seen) == 4 and len(seen) == 12  # starts at one, rises to the ceiling


def test_after_a_cut_the_running_tasks_take_turns_in_calling():
    async def scenario() -> list[int]:
        pacer = Pacer(ceiling=8)  # four tasks at first
        calling: list[int] = []

        async def task() -> None:
            async with pacer:
                await asyncio.sleep(0.01)  # all four are in
                pacer.heard("429")  # the provider refuses: the limit halves to two
                for _ in range(3):
                    async with pacer.calling():
                        calling.append(pacer.calls.held)
                        await asyncio.sleep(0.01)

        await asyncio.gather(*(task() for _ in range(4)))
        return calling

    calling = asyncio.run(scenario())
    assert len(calling) == 12 and max(calling) == 2  # none stopped, two calls at a time


def test_auto_concurrency_finishes_every_task_under_a_rate_limit(monkeypatch, tmp_path):
    install_methods(monkeypatch, tmp_path / "site", react=MODULE)
    method = method_named("react")
    tasks = [f"synthetic-{i}" for i in range(6)]
    context = method.context(model="openai:stub-model", env="webshop", max_actions=2, retries=10)
    with OpenAIStub(latency=0.2, rate_limit=5) as stub:
        stub.replies = [Reply(content="Thought: look.\nAction: search[pillow]")] * 24
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-stub")
        pacer = Pacer(ceiling=8, limit=1)  # from one task, to see it rise
        summary = asyncio.run(evaluate(method, context, tasks, tmp_path / "results.jsonl", InMemorySaver(), pacer))
    assert summary.tasks == 6 and summary.ran == 6 and not summary.errors
    assert stub.rate is not None and stub.rate.refused > 0
    assert pacer.refused["429"] > 0 and pacer.cuts >= 1
    limits = [limit for _, limit in pacer.trace]
    first_cut = next(i for i, (signal, _) in enumerate(pacer.trace) if signal != "ok")
    assert max(limits[:first_cut]) > 1  # it rose while requests were answered
    assert limits[first_cut] < max(limits[:first_cut])  # and fell back when refused
    assert pacer.peak > 1, pacer.line()


def test_auto_concurrency_on_the_command_line(monkeypatch, capsys, tmp_path):
    install_methods(monkeypatch, tmp_path / "site", react=MODULE)
    results = tmp_path / "results.jsonl"
    args = ["eval", "react", "--tasks", "synthetic-0", "--model", script(tmp_path), "--results", str(results)]
    assert main([*args, "--concurrency", "auto", "--max-concurrency", "3", "--checkpoint", "memory"]) == 0
    out = capsys.readouterr().out
    assert "concurrency   auto: up to 1 tasks in flight (ceiling 3); 0 requests answered" in out


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--max-concurrency", "3"], "--max-concurrency is the ceiling of --concurrency auto"),
        (["--concurrency", "many"], "expected a whole number >= 1 or auto, got 'many'"),
        (["--concurrency", "auto", "--server", "http://127.0.0.1:9"], "--concurrency auto paces by the model's"),
    ],
)
def test_bad_concurrency_options_are_one_line_exit_2(monkeypatch, capsys, tmp_path, extra, message):
    install_methods(monkeypatch, tmp_path / "site", react=MODULE)
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["eval", "react", "--tasks", "synthetic-0", "--model", script(tmp_path), *extra])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "results").exists()
