"""A small OpenAI-compatible chat server for client-path tests and benchmarks.

It answers ``POST /v1/chat/completions`` from a queue of scripted replies; a reply can
instead be an injected failure (an HTTP status such as 429 or 500 with its headers, e.g.
Retry-After; a delay longer than the client's timeout; a connection dropped without an
answer). Every request body and its headers are recorded for assertions.

Concurrent runs each need their own replies: ``conversations`` maps a marker (text that
appears in every request of one run, such as a task's instruction) to that run's replies,
taken in order; a request naming no marker takes from the shared queue. ``latency`` is
added to every reply, as a model's time to answer. Served from its own process
(``python -m tests.support.openai_stub CONVERSATIONS.json --latency 1``, which prints the
base URL), its threads do not compete with the client's event loop for the interpreter.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"retry-after": "1"}
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    prompt_tokens: int = 11
    completion_tokens: int = 7


class OpenAIStub:
    def __init__(self, latency: float = 0.0, keep_alive: bool = False) -> None:
        self.replies: list[Reply] = []
        self.conversations: dict[str, list[Reply]] = {}
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
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
                    reply = stub._next(body)
                if reply.delay or stub.latency:
                    time.sleep(reply.delay + stub.latency)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.status != 200:
                    payload = {"error": {"message": f"injected {reply.status}", "type": "server_error"}}
                    self._send(reply.status, payload, reply.headers)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {"id": f"call_{i}", "type": "function",
                         "function": {"name": c["name"], "arguments": json.dumps(c.get("args", {}))}}
                        for i, c in enumerate(reply.tool_calls)
                    ]
                self._send(200, {
                    "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "stub"),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                    "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                              "total_tokens": reply.prompt_tokens + reply.completion_tokens},
                })

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
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next(self, body: dict[str, Any]) -> Reply:
        """The reply to a request: its conversation's next one, else the shared queue's."""
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        for marker, replies in self.conversations.items():
            if marker in text:
                return replies.pop(0) if replies else Reply(status=500)
        return self.replies.pop(0) if self.replies else Reply(status=500)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "OpenAIStub":
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
    args = parser.parse_args(argv)
    with open(args.conversations, encoding="utf-8") as handle:
        conversations = json.load(handle)
    stub = OpenAIStub(latency=args.latency, keep_alive=True)
    stub.conversations = {marker: [Reply(**r) for r in replies] for marker, replies in conversations.items()}
    print(stub.base_url, flush=True)
    stub.server.serve_forever()


if __name__ == "__main__":
    serve()
