"""One 12-task evaluation against the OpenAI-compatible stub, interrupted by a fault at a seeded
point and continued by running the same command again (tests/test_cli_fault_injection.py).

The stub answers by request content (``keyed``): each task's conversation has its own replies,
found by the task's instruction, and a request asked again word for word gets the reply it got
before, so a continued run that asks nothing twice ends with the rows of an uninterrupted one.

The fault lands at a call boundary drawn from a seeded generator: from the n-th request on the
stub holds every reply (``OpenAIStub.hold_at``) until each running task waits on one, then the
fault (a SIGKILL, a worker's death, a server stopped) strikes and the held replies are let go.
Every reply answered before that point has reached its client and been journaled, since a task
asks its next question only after it has handled the last answer; the held ones are the calls in
flight at the fault: a reply whose client is dead by then is not sent (``abandoned``), and the
run continued asks those again. So the stub's count of answered requests must equal the
uninterrupted run's, and what it received, that count plus the calls in flight at the fault."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs import make_env
from introspect.evaluate import read_rows
from tests.graphs.laser_scripts import PAGING, paging_eval
from tests.support.openai_stub import OpenAIStub, Reply, content_key

TASKS = [f"synthetic-{i}" for i in range(600, 612)]
MODEL = "openai:gpt-4o-mini"
LATENCY = 0.2  # seconds a reply takes, as a model's would
# What a row must repeat whichever way its task was interrupted: what the task did (steps, stop
# reason) and scored, and what it paid (calls, tokens: the stub counts tokens from each request's
# text, so a continued run that sent anything different differs here). Not compared: the thread
# (a server names its own), the seconds, the provenance (which names the run's code version).
COMPARED = (
    "task_id",
    "success",
    "reward",
    "steps",
    "stop_reason",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "error",
)


def eval_args(results: Path, *more: str, model: str = MODEL) -> list[str]:
    """The evaluation (each task: search, next page, out of steps); a model of its own gives an
    evaluation threads of its own on a server that ran another."""
    return paging_eval(TASKS, model, results, *more)


# The browser's evaluation: Structured Reflection on MiniWoB++'s click-button, one trial a task,
# each reply clicking element 5 (the right button on some seeds; a wrong one, a text or nothing
# clickable on others): a plan, one action, a score, in Chromium.
BROWSER_TASKS = [f"click-button/{i}" for i in range(12)]
BROWSER_REPLY = "click id=5"


def browser_eval_args(results: Path, *more: str) -> list[str]:
    return [
        "eval",
        "structured_reflection",
        "--env",
        "miniwob",
        "--tasks",
        ",".join(BROWSER_TASKS),
        "--model",
        MODEL,
        "--set",
        "max_trials=1",
        "--results",
        str(results),
        *more,
    ]


def browser_stub() -> OpenAIStub:
    """The stub giving every request of the browser's evaluation the same reply."""
    served = OpenAIStub(latency=LATENCY, keep_alive=True, keyed=True)
    served.replies = [Reply(content=BROWSER_REPLY) for _ in BROWSER_TASKS]
    return served


def instructions() -> list[str]:
    """Each task's instruction: the text that names its conversation in every request."""

    async def read() -> list[str]:
        env = make_env("webshop")
        found = []
        for task in TASKS:
            obs = await env.reset(task)
            found.append(str(obs.info["goal"]))
        await env.close()
        return found

    return asyncio.run(read())


def stub(markers: list[str]) -> OpenAIStub:
    """The stub (not started) with each task's replies, answering by content."""
    served = OpenAIStub(latency=LATENCY, keep_alive=True, keyed=True)
    restock(served, markers)
    return served


def restock(served: OpenAIStub, markers: list[str]) -> None:
    """Give ``served`` each task's replies afresh and forget what it was asked (a stub that
    outlives one evaluation: the server's workers are told its address once)."""
    served.conversations = {
        marker: [Reply(content=r.get("content", ""), tool_calls=r.get("tool_calls", [])) for r in PAGING]
        for marker in markers
    }
    served.answers.clear()
    served.requests.clear()
    served.headers.clear()
    served.abandoned = 0


def compared(results: Path) -> dict[str, tuple[Any, ...]]:
    """Each task's latest row, as the fields compared."""
    return {row["task_id"]: tuple(row.get(k) for k in COMPARED) for row in read_rows(results)}


def asked_twice(served: OpenAIStub) -> list[str]:
    """Each request the stub received more than once: when (its arrivals, 1-based), how far into
    its conversation (messages) and its last message's start. What a failed count names."""
    arrivals: dict[str, list[int]] = {}
    for number, body in enumerate(served.requests, 1):
        arrivals.setdefault(content_key(body), []).append(number)
    twice = []
    for numbers in (n for n in arrivals.values() if len(n) > 1):
        messages = served.requests[numbers[0] - 1].get("messages", [])
        last = " ".join(str(messages[-1].get("content", "")).split())[:100] if messages else ""
        twice.append(f"requests {numbers}: {len(messages)} messages, the last {last!r}")
    return twice


def fault_point(seed: int, calls: int, later: int) -> int:
    """The request (1-based) at which the fault strikes: after at least one answered call, and
    with at least ``later`` calls still to come after it (enough to keep every slot asking), so
    that it lands mid-run."""
    return random.Random(seed).randint(2, calls - later)


@dataclass
class Fault:
    """What happened at the fault point."""

    at: int  # the request the replies were held from
    in_flight: int  # requests held when the fault struck


def strike(served: OpenAIStub, at: int, in_flight: int, fault: Callable[[], None], timeout: float = 240) -> Fault:
    """Hold replies from request ``at`` until ``in_flight`` requests wait, run ``fault``, let them go."""
    served.hold_at(at)
    deadline = time.monotonic() + timeout
    while served.held < in_flight:
        assert time.monotonic() < deadline, f"{served.held} of {in_flight} requests held after {timeout} s"
        time.sleep(0.05)
    held = served.held
    try:
        fault()
    finally:
        served.release()
    return Fault(at, held)
