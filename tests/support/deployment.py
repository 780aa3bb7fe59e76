"""A real LangGraph deployment for tests, without containers: ``introspect serve`` worker
processes (the stock langgraph-api on the Postgres+Redis runtime) sharing a fresh database on
the PostgreSQL that ``.ci/setup`` starts (``INTROSPECT_TEST_POSTGRES``) and a ``redis-server``
started here on a free port. Workers can be killed and started again, as a deployment's can.

Without Postgres, redis-server or the runtime the tests skip, saying which is missing; with
``INTROSPECT_REQUIRE_SERVER=1`` (``.ci/setup`` sets it) they fail instead, so CI cannot pass by
skipping them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.studio import ROOT, free_port, post

STARTUP_SECONDS = 120  # a worker imports every graph (and the browser envs' modules) before answering
# The run heartbeat of a test deployment (``introspect serve --heartbeat``): short, so a killed
# worker's runs are taken up within seconds (1.5 to 4 heartbeats), but not so short that a live
# worker loses them: a run's heartbeat lapses once its worker has not renewed it for 1.5
# heartbeats, and another worker then runs it a second time, at once, asking the model again (the
# server takes runs up at least once: docs/checkpoints-and-scale.md). With 2 s that happened on
# a loaded CI machine, when a fresh worker's first model build held its event loop for 10 s
# (since built off the loop: nodes.runtime.llm.model_ready); 5 s leaves room for the lags a loaded
# machine still has.
HEARTBEAT = 5.0


def missing() -> str:
    """What this machine lacks for a deployment ('' when nothing)."""
    import importlib.util

    if not os.environ.get("INTROSPECT_TEST_POSTGRES"):
        return "no PostgreSQL for tests (INTROSPECT_TEST_POSTGRES; .ci/setup starts one)"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt install redis-server)"
    if importlib.util.find_spec("langgraph_runtime_pg") is None:
        return "the Postgres runtime is not installed (pip install -e '.[server]')"
    return ""


def need_deployment() -> None:
    """Skip (or, where CI requires the server, fail) when a deployment cannot be started."""
    if lack := missing():
        if os.environ.get("INTROSPECT_REQUIRE_SERVER") == "1":
            pytest.fail(f"INTROSPECT_REQUIRE_SERVER=1 but {lack}")
        pytest.skip(lack)


@dataclass
class Worker:
    """One ``introspect serve`` process; its log is JSON lines (the server's own records)."""

    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self) -> list[dict[str, Any]]:
        records = []
        for line in self.log.read_text(errors="replace").splitlines():
            with suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    records.append(record)
        return records

    def started_runs(self) -> list[str]:
        """The run ids this worker started (each attempt once)."""
        return [str(r.get("run_id")) for r in self.records() if r.get("event") == "Starting background run"]

    def in_flight(self) -> int:
        finished = {"Background run succeeded", "Background run failed"}
        ended = sum(1 for r in self.records() if r.get("event") in finished)
        return len(self.started_runs()) - ended

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a graceful stop that hangs must not hang the tests
                self.process.kill()
                self.process.wait(timeout=30)


@dataclass
class Deployment:
    database_uri: str
    redis_uri: str
    folder: Path
    jobs: int
    heartbeat: float
    workers: list[Worker] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.workers[0].url

    def start(self, worker: Worker) -> None:
        """Start ``worker`` (again) and wait until it answers."""
        env = {
            **os.environ,
            "LOG_JSON": "true",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        command = [
            sys.executable,
            "-m",
            "introspect.cli",
            "serve",
            "--database-uri",
            self.database_uri,
            "--redis-uri",
            self.redis_uri,
            "--port",
            str(worker.port),
            "--jobs",
            str(self.jobs),
            "--heartbeat",
            str(self.heartbeat),
        ]
        with worker.log.open("ab") as sink:
            worker.process = subprocess.Popen(command, cwd=self.folder, env=env, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            try:
                post(f"{worker.url}/assistants/search", {"limit": 1})
                return
            except OSError:
                if worker.process.poll() is not None:
                    pytest.fail(f"introspect serve exited: {worker.log.read_text(errors='replace')[-3000:]}")
                time.sleep(0.5)
        pytest.fail("introspect serve did not answer")

    def stop(self, sig: int = signal.SIGKILL) -> None:
        for worker in self.workers:
            worker.kill(sig)

    def revive(self) -> None:
        """Start again every worker that is not running."""
        for worker in self.workers:
            if worker.process is None or worker.process.poll() is not None:
                self.start(worker)

    def blocking_calls(self) -> str:
        """Any report of a blocking call on a worker's event loop ('' when none)."""
        text = "".join(w.log.read_text(errors="replace") for w in self.workers)
        return text[-5000:] if "BlockingError" in text or "Blocking call" in text else ""


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    port = free_port()
    with (folder / "redis.log").open("wb") as sink:
        process = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=folder,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with suppress(OSError):
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            time.sleep(0.2)
        else:
            pytest.fail("redis-server did not answer")
        yield f"redis://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty database on the test PostgreSQL; dropped afterwards."""
    import psycopg

    base = os.environ["INTROSPECT_TEST_POSTGRES"]
    name = f"introspect_deploy_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def deployment(folder: Path, workers: int = 2, jobs: int = 3, heartbeat: float = HEARTBEAT) -> Iterator[Deployment]:
    """``workers`` server processes on one fresh database and one Redis, all answering."""
    need_deployment()
    with fresh_database() as database, redis_server(folder) as redis:
        served = Deployment(database, redis, folder, jobs, heartbeat)
        served.workers = [Worker(free_port(), folder / f"worker-{i}.log") for i in range(workers)]
        try:
            for worker in served.workers:
                served.start(worker)
            yield served
        finally:
            served.stop(signal.SIGTERM)
