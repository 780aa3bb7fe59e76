"""What a step runs on the event loop rather than in a worker thread: the routers of every
graph and the scripted model (each thread hop is a switch and, while the loop is busy, a
wait for the interpreter lock). What goes to a thread is env work and one-off work: a script
read, the model built."""

from __future__ import annotations

import asyncio
import functools

from langgraph.checkpoint.memory import InMemorySaver

from graphs import compiled, method_named, studio_graphs
from introspect.runner import drive
from nodes.laser.context import LaserContext
from nodes.runtime.scripted import ScriptedChatModel
from tests.support.laser_demo import DEMO, write_demo_script


def test_every_router_is_a_coroutine_function():
    for method, attribute in studio_graphs().values():
        graph = compiled(method, attribute)
        for source, branches in graph.builder.branches.items():
            for name, branch in branches.items():
                assert branch.path.func is None and asyncio.iscoroutinefunction(branch.path.afunc), (source, name)


def _thread_work(monkeypatch) -> list[str]:
    """Records what the running loop sends to worker threads (the names of the functions)."""
    loop = asyncio.get_running_loop()
    sent: list[str] = []
    original = loop.run_in_executor

    def recording(executor, func, *args):
        target = func.args[0] if isinstance(func, functools.partial) and func.args else func  # asyncio.to_thread's
        sent.append(getattr(target, "__qualname__", repr(target)))
        return original(executor, func, *args)

    monkeypatch.setattr(loop, "run_in_executor", recording)
    return sent


async def test_a_run_sends_only_env_work_to_worker_threads(tmp_path, monkeypatch):
    sent = _thread_work(monkeypatch)
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    outcome = await drive(method_named("laser"), context, "loop-work", InMemorySaver(), {"task_id": DEMO["task_id"]})
    assert outcome.state["success"]
    assert sent.count("ScriptedChatModel.load") == 1  # the script file, read once (a file read blocks)
    assert sent.count("model_for") == 1  # the model, built once (a first build imports its client library)
    allowed = ("WebShopEnv.", "env_class", "ScriptedChatModel.load", "model_for")
    assert all(name.startswith(allowed) for name in sent), sent


async def test_a_scripted_reply_needs_no_thread(monkeypatch):
    sent = _thread_work(monkeypatch)
    reply = await ScriptedChatModel(replies=[{"content": "hello"}]).ainvoke("hi")
    assert reply.content == "hello" and sent == []


async def test_a_scripted_delay_lets_the_loop_run_other_work():
    model = ScriptedChatModel(replies=[{"content": "hello", "delay": 0.3}])
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    reply = await model.ainvoke("hi")
    task.cancel()
    assert reply.content == "hello" and ticks >= 10
