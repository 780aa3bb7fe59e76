"""A real ``langgraph dev`` server for tests: started as the README says (offline flags, a free
port, this checkout first on the path), answering the LangGraph API with every graph of
langgraph.json, stopped at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict) -> object:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def served_here(folder: Path) -> Path:
    """The checkout's langgraph.json, written into ``folder`` with absolute paths: ``langgraph
    dev`` keeps its state in the folder it runs in, and reads graph paths from there too."""
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {name: str(ROOT / path) for name, path in config["graphs"].items()}
    written = folder / "langgraph.json"
    written.write_text(json.dumps(config), encoding="utf-8")
    return written


@contextmanager
def langgraph_dev(folder: Path, **env_extra: str) -> Iterator[tuple[str, Path]]:
    """Serve the graphs with ``langgraph dev``; yields its URL and log file (in ``folder``, where
    the server also keeps its state: servers started at once, or by earlier runs, share nothing)."""
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists():
        pytest.skip("langgraph-cli is not installed (pip install -e '.[studio]')")
    port = free_port()
    log = folder / "server.log"
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "1",
        **env_extra,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [
                str(cli),
                "dev",
                "--no-browser",
                "--no-reload",
                "--port",
                str(port),
                "--config",
                str(served_here(folder)),
            ],
            cwd=folder,  # its state (.langgraph_api) is this server's own, not shared with others
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                post(f"{url}/assistants/search", {"limit": 1})
                break
            except OSError:
                assert server.poll() is None, log.read_text(errors="replace")[-3000:]
                time.sleep(1)
        else:
            pytest.fail("langgraph dev did not answer")
        yield url, log
    finally:
        server.terminate()
        server.wait(timeout=20)
