"""A small OpenAI-compatible chat server for client-path tests and benchmarks.

It answers ``POST /v1/chat/completions`` from a queue of scripted replies; a reply can
instead be an injected failure (an HTTP status such as 429 or 500 with its headers, e.g.
Retry-After; a delay longer than the client's timeout; a connection dropped without an
answer). ``Faults`` injects such failures at random (seeded) in front of the scripted
replies. Every request body and its headers are recorded for assertions. ``models``, when
set, is the list ``GET /v1/models`` gives (a provider's served models).

Like OpenAI's API, it refuses (400) a conversation in which an assistant message's tool
calls are not each answered by a tool message: a client that would fail there fails here.

Concurrent runs each need their own replies: ``conversations`` maps a marker (text that
appears in every request of one run, such as a task's instruction) to that run's replies,
taken in order; a request naming no marker takes from the shared queue. With ``keyed`` the
reply is a function of the request's content instead of its arrival: a request asked again
word for word (a run continued after a crash asks what its checkpoint lacks) gets the reply it
got the first time, with the same tool-call ids, and its tokens are counted from its text, so
a continued run that sends anything different shows in its rows. ``hold_at(n)`` lets a test
act at a point of the run: from the n-th request on no reply goes out until ``release()``, so
the test can see every call in flight held (``held``), kill the client or a worker, and then
let the held replies go; a reply whose client is gone by then is not sent and counted in
``abandoned`` (the calls in flight at a kill: no client can keep those). ``latency`` is
added to every reply, as a model's time to answer. ``rate_limit`` (requests per second) makes
it a rate-limited provider: a request beyond that many in the last second is refused with a
429 and a Retry-After of when a place frees up (``RateLimit``), before it takes a reply. Served from its own process
(``python -m tests.support.openai_stub CONVERSATIONS.json --latency 1``, which prints the
base URL), its threads do not compete with the client's event loop for the interpreter.
"""

from __future__ import annotations

import hashlib
import json
import random
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "args"} or {"name", "arguments": raw}
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"retry-after": "1"}
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    error: str = ""  # the error message of a failure (default "injected <status>")
    prompt_tokens: int = 11
    completion_tokens: int = 7


FAULT_KINDS = ("429", "500", "503", "timeout", "drop")
CLOSE_ARRIVES = 0.5  # seconds a released reply waits for a dead client's close (a live one sends nothing)


def content_key(body: dict[str, Any]) -> str:
    """A request's identity by content: its messages, tools and sampling settings."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@dataclass
class Faults:
    """Failures injected at random in front of the scripted replies: each request fails with
    probability ``rate`` (one of ``kinds``, drawn from ``random.Random(seed)``), but never more
    than ``in_a_row`` times running, so a client allowed that many retries always gets its
    answer. HTTP errors carry ``retry-after-ms: 10``; an injected timeout sleeps ``timeout_s``
    (set the client's timeout below it); a dropped connection closes without a word."""

    rate: float = 0.3
    seed: int = 0
    kinds: tuple[str, ...] = FAULT_KINDS
    in_a_row: int = 4
    timeout_s: float = 1.5
    injected: list[str] = field(default_factory=list)  # the faults sent, in order
    _streak: int = 0

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def draw(self) -> Reply | None:
        """The failure for the next request, or None to answer it."""
        if self._streak >= self.in_a_row or self._random.random() >= self.rate:
            self._streak = 0
            return None
        self._streak += 1
        kind = self._random.choice(self.kinds)
        self.injected.append(kind)
        if kind == "timeout":
            return Reply(delay=self.timeout_s, drop=True)
        if kind == "drop":
            return Reply(drop=True)
        return Reply(status=int(kind), headers={"retry-after-ms": "10"})


@dataclass
class RateLimit:
    """At most ``per_second`` requests answered in any second; the others get a 429 saying
    (``retry-after-ms``) when the oldest answered one leaves the window."""

    per_second: float
    answered: list[float] = field(default_factory=list)  # monotonic times of answered requests, last second
    refused: int = 0

    def check(self, now: float) -> Reply | None:
        """The 429 for a request at ``now``, or None (it is answered and counted)."""
        self.answered = [t for t in self.answered if t > now - 1.0]
        if len(self.answered) < self.per_second:
            self.answered.append(now)
            return None
        self.refused += 1
        wait_ms = max(1, int((self.answered[0] + 1.0 - now) * 1000))
        return Reply(status=429, headers={"retry-after-ms": str(wait_ms)}, error="rate limit reached")


def unanswered_tool_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of assistant tool calls that no tool message answers (OpenAI refuses those)."""
    missing: list[str] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        answered = set()
        for later in messages[i + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        missing += [c["id"] for c in message["tool_calls"] if c.get("id") not in answered]
    return missing


class OpenAIStub:
    def __init__(
        self,
        faults: Faults | None = None,
        latency: float = 0.0,
        keep_alive: bool = False,
        rate_limit: float | None = None,
        keyed: bool = False,
    ) -> None:
        self.replies: list[Reply] = []
        self.keyed = keyed
        self.answers: dict[str, Reply] = {}  # keyed: the reply given to each request's content
        self.abandoned = 0  # requests whose client was gone when their reply was due
        self.held = 0  # requests waiting for release()
        self._hold_at: int | None = None
        self._released = threading.Event()
        self._released.set()
        self.rate = RateLimit(rate_limit) if rate_limit else None
        self.conversations: dict[str, list[Reply]] = {}
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.faults = faults
        self.models: tuple[str, ...] | None = None  # what GET /v1/models lists (None: no list, 404)
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"  # 1.1 keeps connections, as real servers

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without TCP_NODELAY a kept-alive
                # connection waits for the client's delayed ACK (40 ms) between them.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    if stub._hold_at is not None and len(stub.requests) >= stub._hold_at:
                        stub._released.clear()
                        stub._hold_at = None
                    missing = unanswered_tool_calls(body.get("messages", []))
                    injected = stub.faults.draw() if stub.faults and not missing else None
                    limited = stub.rate.check(time.monotonic()) if stub.rate and not missing and not injected else None
                    reply = limited or injected or (stub._next(body) if not missing else Reply(status=500))
                if missing:
                    self._send(
                        400,
                        {
                            "error": {
                                "message": "An assistant message with 'tool_calls' must be followed by "
                                f"tool messages responding to each 'tool_call_id': {missing}",
                                "type": "invalid_request_error",
                            }
                        },
                    )
                    return
                if (reply.delay or stub.latency) and not limited:  # a provider refuses at once
                    time.sleep(reply.delay + stub.latency)
                held = not stub._released.is_set()
                if held:
                    with stub._lock:
                        stub.held += 1
                    stub._released.wait()
                    with stub._lock:
                        stub.held -= 1
                # A held reply is let go just after a fault killed some clients: their close
                # reaches this socket through the kernel's loopback queue, late on a busy machine.
                if self._client_gone(wait=CLOSE_ARRIVES if held else 0.0):
                    with stub._lock:
                        stub.abandoned += 1
                    return
                if reply.drop:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass  # the client already gave up (an injected timeout)
                    return
                if reply.status != 200:
                    payload = {"error": {"message": reply.error or f"injected {reply.status}", "type": "server_error"}}
                    self._send(reply.status, payload, reply.headers)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
                reply_id = content_key(body)[:12] if stub.keyed else str(len(stub.requests))
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": f"call_{reply_id}_{i}",
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": c["arguments"] if "arguments" in c else json.dumps(c.get("args", {})),
                            },
                        }
                        for i, c in enumerate(reply.tool_calls)
                    ]
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    },
                )

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                """The model list (``GET /v1/models``) when ``models`` is set; else none (404), as
                a server without a list answers."""
                if stub.models is None or self.path.rstrip("/") != "/v1/models":
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                listed = [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in stub.models]
                self._send(200, {"object": "list", "data": listed})

            def _client_gone(self, wait: float = 0.0) -> bool:
                """Whether the client closed the connection (it sends nothing while it waits),
                waiting up to ``wait`` seconds for the close to arrive."""
                try:
                    readable, _, _ = select.select([self.connection], [], [], wait)
                    return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (an injected timeout)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next(self, body: dict[str, Any]) -> Reply:
        """The reply to a request: its conversation's next one, else the shared queue's; with
        ``keyed``, the one this content got before, if it was asked before."""
        key = content_key(body)
        if self.keyed and key in self.answers:
            return self.answers[key]
        reply = self._queued(body)
        if self.keyed:
            tokens = {"prompt_tokens": len(json.dumps(body.get("messages", []))) // 4}
            reply = self.answers[key] = Reply(**{**reply.__dict__, **tokens})
        return reply

    def _queued(self, body: dict[str, Any]) -> Reply:
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        for marker, replies in self.conversations.items():
            if marker in text:
                return replies.pop(0) if replies else Reply(status=500)
        return self.replies.pop(0) if self.replies else Reply(status=500)

    def hold_at(self, request: int) -> None:
        """From the ``request``-th request on (1-based), hold every reply until ``release()``."""
        with self._lock:
            self._hold_at = request

    def release(self) -> None:
        self._released.set()

    @property
    def answered(self) -> int:
        """Requests the stub received, less those abandoned by a client that was gone."""
        return len(self.requests) - self.abandoned

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(argv: list[str] | None = None) -> None:
    """Serve conversations from a JSON file ({marker: [reply fields, ...]}) until killed."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("conversations")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rate-limit", type=float, help="requests per second answered; 429 beyond")
    args = parser.parse_args(argv)
    with open(args.conversations, encoding="utf-8") as handle:
        conversations = json.load(handle)
    stub = OpenAIStub(latency=args.latency, keep_alive=True, rate_limit=args.rate_limit)
    stub.conversations = {marker: [Reply(**r) for r in replies] for marker, replies in conversations.items()}
    print(stub.base_url, flush=True)
    stub.server.serve_forever()


if __name__ == "__main__":
    serve()
