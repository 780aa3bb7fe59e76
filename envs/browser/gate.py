"""Where a task's browser may go: ``UrlPolicy`` (the allowlist) and ``Gate``, the small HTTP proxy
of a task's browser context that connects only to the policy's origins.

Why a proxy and not only Playwright's request routing: routing sees what Chromium reports as a
request of a page, and that is not everything a page can make Chromium send. Measured on
Chromium 156 with Playwright 1.65: WebSockets (from the page and from workers), everything a
SharedWorker fetches, the TCP connection Chromium opens ahead of a navigation it is about to
refuse, and TURN-over-TCP all reached a server on another local port while ``context.route``
was aborting every request it saw. A context whose proxy is this gate sends all of its HTTP,
HTTPS, WebSocket and proxied WebRTC traffic here, whatever part of Chromium makes it (page,
iframe, dedicated, shared or service worker, prefetch, beacon), so the allowlist holds at the
one place all of it passes through. Playwright proxies loopback addresses too (it adds
``<-loopback>`` to the bypass list), so a local port is no way around it; UDP (STUN, QUIC for
WebTransport) never goes through a proxy and is switched off by Chromium flags instead
(``CHROMIUM_ARGS`` in envs/browser/launch.py).

The gate answers a refused destination with ``403`` and never opens a connection to it; it
forwards an allowed one byte for byte (``CONNECT`` tunnels for HTTPS and WebSockets, plain
``http://`` requests rewritten to the origin form with ``Connection: close`` so that every
connection carries requests for one destination only). Each refusal is reported to
``on_refused`` (the session's ``blocked`` list).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_HEAD_LIMIT = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_HOP_HEADERS = {"proxy-connection", "connection", "keep-alive", "proxy-authorization"}


def host_port(origin: str) -> tuple[str, int] | None:
    """``("127.0.0.1", 7770)`` for ``http://127.0.0.1:7770``; None for a non-network URL."""
    parts = urllib.parse.urlsplit(origin)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return parts.hostname.lower(), port


def _origin(url: str) -> str:
    """``scheme://host[:port]`` in the form Chromium writes URLs: lower case, no default port."""
    parts = urllib.parse.urlsplit(url)
    scheme, hp = parts.scheme.lower(), host_port(url)
    if hp is None:
        return f"{scheme}://{parts.netloc}".lower()
    host = f"[{hp[0]}]" if ":" in hp[0] else hp[0]
    return f"{scheme}://{host}" + ("" if hp[1] == _DEFAULT_PORTS[scheme] else f":{hp[1]}")


@functools.cache
def _has_symlinks(root: str) -> bool:
    return any(
        os.path.islink(os.path.join(folder, name)) for folder, dirs, files in os.walk(root) for name in dirs + files
    )


@dataclass(frozen=True)
class UrlPolicy:
    """The URLs one task may load: http(s) origins and local directories served over file://.

    ``origins`` are like ``"http://localhost:7770"``; ``file_roots`` are absolute directories whose
    files (and only those) may be loaded. about:, data: and blob: URLs of an allowed origin are
    always allowed, since pages create them themselves.
    """

    origins: tuple[str, ...] = ()
    file_roots: tuple[str, ...] = ()
    _roots: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "origins", tuple(_origin(o) for o in self.origins))
        roots = tuple(os.path.realpath(r) for r in self.file_roots)
        object.__setattr__(self, "_roots", roots)

    def allows(self, url: str) -> bool:
        """Whether a page of this task may load ``url``."""
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if scheme in ("about", "data"):
            return True
        if scheme == "blob":
            return self.allows(url[len("blob:") :])
        if scheme == "file":
            path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
            if "\0" in path:  # no file is named with a NUL (and realpath would raise on it)
                return False
            path = os.path.realpath(path)
            return any(path == r or path.startswith(r.rstrip("/") + "/") for r in self._roots)
        if scheme in ("http", "https", "ws", "wss"):
            return _origin(url) in self.origins
        return False

    def routed(self) -> re.Pattern[str]:
        """The URLs the context's route filter must see: every URL except those of an allowed
        origin and those under a file root that holds no symbolic link (where the URL's path is
        the file read). Chromium loads those without a round trip to Python for each; the gate
        still holds every network origin."""
        prefixes = [origin + "/" for origin in self.origins]
        prefixes += [Path(root).as_uri().rstrip("/") + "/" for root in self._roots if not _has_symlinks(root)]
        if not prefixes:
            return re.compile(".*")
        return re.compile("^(?!" + "|".join(re.escape(p) for p in prefixes) + ")")

    def refusal(self, url: str) -> str | None:
        """Feedback for the agent when ``url`` is not allowed, else None."""
        if self.allows(url):
            return None
        allowed = ", ".join([*self.origins, *(f"file://{r}/" for r in self._roots)]) or "nothing"
        return f"navigation to {url} is not allowed for this task (allowed: {allowed})"


class Gate:
    """A proxy on 127.0.0.1 (an ephemeral port) for one browser context; ``await close()`` ends it."""

    def __init__(self, origins: tuple[str, ...], on_refused: Callable[[str], None]) -> None:
        self.allowed = {hp for hp in (host_port(o) for o in origins) if hp is not None}
        self.on_refused = on_refused
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    async def start(cls, origins: tuple[str, ...], on_refused: Callable[[str], None]) -> Gate:
        gate = cls(origins, on_refused)
        gate._server = await asyncio.start_server(gate._serve, "127.0.0.1", 0)
        return gate

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._relay(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # close() ends the connections it cancels; asyncio's server would log a cancel
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > _HEAD_LIMIT:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = (lines[0].split(" ") + ["", "", ""])[:3]
        if method.upper() == "CONNECT":
            host, _, port = target.rpartition(":")
            destination = (host.strip("[]").lower(), int(port))
            shown = target
            forward = b""
        else:
            parts = urllib.parse.urlsplit(target)
            hp = host_port(target)
            if hp is None:
                await _answer(writer, "400 Bad Request")
                return
            destination, shown = hp, target
            path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
            headers = [h for h in lines[1:] if h and h.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
            forward = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""]).encode(
                "latin-1"
            )
        if destination not in self.allowed:
            self.on_refused(shown)
            await _answer(writer, "403 Forbidden", f"{shown} is outside this task's allowed sites; nothing was sent")
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*destination)
        except OSError as exc:
            await _answer(writer, "502 Bad Gateway", f"{shown} could not be reached: {exc.strerror or exc}")
            return
        try:
            if forward:
                up_writer.write(forward)
            else:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


async def _answer(writer: asyncio.StreamWriter, status: str, body: str = "") -> None:
    """A response from the gate itself; a page that reaches it (a redirect off the allowlist,
    which Playwright's routing does not see) shows ``body``, so the agent reads why."""
    data = body.encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(data)}\r\n"
    writer.write(head.encode() + b"Connection: close\r\n\r\n" + data)
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy until ``source`` ends, then end ``sink``'s sending side."""
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if sink.can_write_eof():
                sink.write_eof()
