"""``introspect eval --server`` on a real deployment (tests.support.deployment): two
``introspect serve`` workers on one Postgres and one Redis. Each test compares the rows with a
local evaluation of the same tasks: both workers take runs from the shared queue; the runs of a
worker killed with SIGKILL are taken up by the other and continued from their checkpoints (one
chain of checkpoints per thread, each model call made once); a whole deployment stopped and
started again mid-evaluation is continued by running the same command again."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from introspect.evaluate import read_rows
from tests.graphs.laser_scripts import ROW_FIELDS, paging_eval, paging_script
from tests.support.cli import ROOT, child_env, ended, output, run_main, spawn
from tests.support.deployment import Deployment, deployment, need_deployment, redis_server
from tests.support.studio import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def tasks(first: int, count: int = 12) -> list[str]:
    return [f"synthetic-{i}" for i in range(first, first + count)]


def eval_args(spec: str, ids: list[str], results: Path, *more: str) -> list[str]:
    return paging_eval(ids, spec, results, *more)


def same(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.get(k) for k in ROW_FIELDS) for r in rows)


def local_rows(spec: str, ids: list[str], folder: Path) -> list[dict[str, Any]]:
    results = folder / "local.jsonl"
    args = eval_args(spec, ids, results, "--checkpoint", "memory", "--concurrency", "6")
    assert run_main(args, logs=folder, name="local") == 0
    return read_rows(results)


def histories(url: str, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each row's thread history on the server, oldest checkpoint first."""
    from langgraph_sdk import get_client

    async def read() -> dict[str, list[dict[str, Any]]]:
        client = get_client(url=url)
        found = {}
        for row in rows:
            found[row["task_id"]] = list(reversed(await client.threads.get_history(row["thread_id"], limit=200)))
        return found

    return asyncio.run(read())


def one_chain(history: list[dict[str, Any]]) -> bool:
    """The thread ran once from its input: one input checkpoint, then consecutive steps."""
    steps = [c["metadata"].get("step") for c in history]
    sources = [c["metadata"].get("source") for c in history]
    return sources.count("input") == 1 and steps == list(range(-1, len(steps) - 1))


@pytest.fixture(scope="module")
def deployed(tmp_path_factory) -> Any:
    with deployment(tmp_path_factory.mktemp("deployment"), workers=2, jobs=3) as running:
        yield running


@pytest.fixture
def served(deployed: Deployment) -> Any:
    """The module's deployment with every worker up; a test that kills workers leaves it so."""
    deployed.revive()
    yield deployed
    deployed.revive()


def wait_until(condition: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_two_workers_take_runs_from_one_queue(served: Deployment, tmp_path):
    ids = tasks(400)
    spec = paging_script(tmp_path / "s.jsonl", delay=0.3)
    results = tmp_path / "server.jsonl"
    before = [len(w.started_runs()) for w in served.workers]
    args = eval_args(spec, ids, results, "--server", served.url, "--concurrency", "12")
    assert run_main(args, logs=tmp_path, name="server") == 0
    rows = read_rows(results)
    assert same(rows) == same(local_rows(spec, ids, tmp_path))
    assert all(not r["error"] for r in rows)
    took = [len(w.started_runs()) - b for w, b in zip(served.workers, before, strict=True)]
    assert sum(took) == len(ids) and min(took) > 0, took  # the client spoke to one; both ran
    assert not served.blocking_calls()


def test_a_killed_workers_runs_are_taken_up_and_continued(served: Deployment, tmp_path):
    ids = tasks(420)
    spec = paging_script(tmp_path / "s.jsonl", delay=1.0)  # four calls a task: runs in flight for ~4 s
    results = tmp_path / "server.jsonl"
    victim = served.workers[1]
    killed: list[int] = []

    def kill_when_busy() -> None:
        wait_until(lambda: victim.in_flight() > 0, 120, "the second worker to start runs")
        time.sleep(2.5)  # past the first model calls: each of its runs has checkpoints
        killed.append(victim.in_flight())
        victim.kill(signal.SIGKILL)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    args = eval_args(spec, ids, results, "--server", served.url, "--concurrency", "12")
    code = run_main(args, logs=tmp_path, name="server")
    killer.join()
    assert code == 0 and killed and killed[0] > 0
    rows = read_rows(results)
    assert same(rows) == same(local_rows(spec, ids, tmp_path)) and all(not r["error"] for r in rows)
    chains = histories(served.url, rows)
    assert all(one_chain(h) for h in chains.values()), {t: [c["metadata"] for c in h] for t, h in chains.items()}
    taken_up = [t for t, h in chains.items() if {c["metadata"].get("run_attempt") for c in h} == {1, 2}]
    assert taken_up, "no run was continued by the surviving worker"  # begun on the victim, ended on the other


def test_a_deployment_stopped_and_started_again_is_continued(served: Deployment, tmp_path):
    ids = tasks(440)
    spec = paging_script(tmp_path / "s.jsonl", delay=1.0)
    results = tmp_path / "server.jsonl"
    args = eval_args(spec, ids, results, "--server", served.url, "--concurrency", "12")
    client = spawn(args, cwd=ROOT, env=child_env(), logs=tmp_path, name="first")
    wait_until(lambda: sum(w.in_flight() for w in served.workers) > 0, 120, "runs to start")
    time.sleep(2.5)
    served.stop(signal.SIGKILL)  # every worker at once: a crash of the whole server
    client.kill()  # and of the evaluation's own process
    client.wait(timeout=60)
    served.revive()
    assert run_main(args, logs=tmp_path, name="again") == 0
    rows = {r["task_id"]: r for r in read_rows(results)}
    final = list(rows.values())
    assert sorted(rows) == sorted(ids) and all(not r["error"] for r in final)
    assert same(final) == same(local_rows(spec, ids, tmp_path))
    assert all(one_chain(h) for h in histories(served.url, final).values())


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--redis-uri", "redis://127.0.0.1:1"], "give --database-uri URI (or set $DATABASE_URI)"),
        (["--database-uri", "mysql://h/db", "--redis-uri", "redis://h"], "--database-uri must be a postgresql://"),
        (
            ["--database-uri", "postgresql://127.0.0.1:1/db", "--redis-uri", "redis://h", "--port", "FREE"],
            "cannot use --database-uri postgresql://127.0.0.1:1/db: connection failed",
        ),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--heartbeat", "nan"], "--heartbeat at least 1 second, got nan"),
        (["--port", "99999"], "--port must be between 1 and 65535, got 99999"),
        (  # services that answer (the taken port accepts connections), a port that is taken
            [
                "--database-uri",
                "postgresql://127.0.0.1:TAKEN/db",
                "--redis-uri",
                "redis://127.0.0.1:TAKEN",
                "--port",
                "TAKEN",
            ],
            "cannot listen on 127.0.0.1:",
        ),
    ],
)
def test_serve_refuses_bad_input_in_one_line(options, says, tmp_path, monkeypatch):
    import importlib.util
    import socket

    if importlib.util.find_spec("langgraph_runtime_pg") is None:
        pytest.skip("the Postgres runtime is not installed (pip install -e '.[server]')")
    monkeypatch.delenv("DATABASE_URI", raising=False)
    monkeypatch.delenv("REDIS_URI", raising=False)
    taken = socket.create_server(("127.0.0.1", 0))  # a port another process listens on
    free = str(free_port())
    options = [o.replace("TAKEN", str(taken.getsockname()[1])).replace("FREE", free) for o in options]
    with taken:
        assert run_main(["serve", *options], logs=tmp_path, name="serve") == 2
    err = (tmp_path / "serve.err").read_text()
    assert says in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("database", "redis", "says"),
    [
        ("NOSUCH", "REDIS", 'database "introspect_nosuch" does not exist'),
        ("POSTGRES", "redis://POSTGRES_HOST", "cannot use --redis-uri redis://127.0.0.1:"),
        ("postgresql://REDIS_HOST/db", "REDIS", "cannot use --database-uri postgresql://127.0.0.1:"),
    ],
    ids=["a database that does not exist", "a Redis URI at Postgres", "a database URI at Redis"],
)
def test_serve_refuses_services_of_the_wrong_kind_in_one_line(database, redis, says, tmp_path):
    """Services that accept connections but are not what the option names: refused in one line
    and exit 2 before the server starts (a traceback and exit 3, or a hang, before), and the
    port is not taken (the server never listened)."""
    need_deployment()
    postgres = os.environ["INTROSPECT_TEST_POSTGRES"]
    with redis_server(tmp_path) as redis_uri:
        names = {
            "NOSUCH": postgres.rsplit("/", 1)[0] + "/introspect_nosuch",
            "POSTGRES_HOST": urlsplit(postgres).netloc.rsplit("@", 1)[-1],
            "POSTGRES": postgres,
            "REDIS_HOST": urlsplit(redis_uri).netloc,
            "REDIS": redis_uri,
        }
        for key, value in names.items():
            database, redis = database.replace(key, value), redis.replace(key, value)
        port = free_port()
        args = ["serve", "--database-uri", database, "--redis-uri", redis, "--port", str(port)]
        child = spawn(args, cwd=tmp_path, env=child_env(), logs=tmp_path, name="serve")
        assert ended(child, tmp_path, "serve", timeout=90) == 2
    out, err = output(tmp_path, "serve")
    assert says in err and len(err.strip().splitlines()) == 1 and not out, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["redis.log", "serve.err", "serve.out"]


TAKEOVER_HEARTBEAT = float(os.environ.get("INTROSPECT_TAKEOVER_HEARTBEAT", "2"))


@pytest.mark.timeout(1200)
def test_a_dead_workers_runs_are_taken_up_within_four_heartbeats(tmp_path):
    """How long a dead worker's runs wait (docs/checkpoints-and-scale.md): the run's heartbeat key
    lives two heartbeats and is renewed every half heartbeat, so it lapses 1.5 to 2 heartbeats
    after the death; every worker sweeps lapsed runs back into the queue every two heartbeats.
    The other worker, with a free job slot (a worker whose slots are all busy neither sweeps nor
    takes runs), starts them between 1.5 and 4 heartbeats after the death. The documented figure
    for the default heartbeat is this test with INTROSPECT_TAKEOVER_HEARTBEAT=120."""
    heartbeat = TAKEOVER_HEARTBEAT
    with deployment(tmp_path, workers=2, jobs=10, heartbeat=heartbeat) as served:
        victim, survivor = served.workers[1], served.workers[0]
        ids = tasks(460, 6)
        spec = paging_script(tmp_path / "s.jsonl", delay=1.0)
        args = eval_args(spec, ids, tmp_path / "server.jsonl", "--server", survivor.url, "--concurrency", "6")
        client = spawn(args, cwd=ROOT, env=child_env(), logs=tmp_path, name="server")
        try:
            wait_until(lambda: victim.in_flight() > 0, 120, "the second worker to start runs")
            time.sleep(1.0)
            orphans = set(victim.started_runs())
            victim.kill(signal.SIGKILL)
            died = time.monotonic()
            wait_until(lambda: orphans & set(survivor.started_runs()), 5 * heartbeat + 60, "the runs to be taken up")
            took = time.monotonic() - died
            print(f"heartbeat {heartbeat:g} s: a dead worker's runs were taken up after {took:.1f} s")
            assert 1.5 * heartbeat - 1 <= took <= 4 * heartbeat + 10, took  # +10 s: a loaded machine's lag
            assert client.wait(timeout=10 * heartbeat + 120) == 0
        finally:
            if client.poll() is None:
                client.kill()
