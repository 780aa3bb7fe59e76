"""Serve the project's local websites (envs/sites/*) on a free localhost port.

Browser tasks need a site that runs offline and always starts in the same state. A site is a
stdlib request handler; ``SiteServer`` runs it in a daemon thread of the current process, so a
test, the WebArena env or the CLI can start it in milliseconds and never leaves a process behind.

    from envs.sites.serve import shared_site
    url = shared_site("shop").url          # e.g. http://127.0.0.1:38211 (started once per process)

    python -m envs.sites.serve shop --port 7770   # serve until Ctrl-C

Processes that should share one site (an evaluation over several workers, a run and its
resume, a test that reads the site's records) point ``INTROSPECT_SITE_<NAME>`` (e.g.
``INTROSPECT_SITE_SHOP=http://127.0.0.1:7770``) at a server started once; ``site_url``
returns it instead of starting one in the process.

A site keeps *records* of what visitors submitted (the shop: contact messages, account
edits; never passwords) in ``SiteServer.records``, and with ``--records FILE`` also as JSON
lines in FILE: what a real site would have stored, for tests that count side effects.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# site name -> "module:HandlerClass"
SITES: dict[str, str] = {"shop": "envs.sites.shop.app:ShopHandler"}


def handler_for(site: str) -> type[BaseHTTPRequestHandler]:
    try:
        target = SITES[site]
    except KeyError:
        raise ValueError(f"unknown site {site!r}; choose one of: {', '.join(sorted(SITES))}") from None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


class _RecordingServer(ThreadingHTTPServer):
    """The HTTP server with ``record``, the site's handler's way to the records (``self.server.record``)."""

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        record: Callable[[dict[str, Any]], None],
    ) -> None:
        super().__init__(address, handler)
        self.record = record


class SiteServer:
    """One site on 127.0.0.1; ``port=0`` picks a free port. Use as a context manager or start/stop."""

    def __init__(self, site: str, *, host: str = "127.0.0.1", port: int = 0, records: Path | None = None) -> None:
        self.site = site
        self.records: list[dict[str, Any]] = []
        self._records_file = records
        self._lock = threading.Lock()
        self._server = _RecordingServer((host, port), handler_for(site), self.record)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    def record(self, entry: dict[str, Any]) -> None:
        """Keep what a visitor submitted (called by the site's handler)."""
        with self._lock:
            self.records.append(entry)
            if self._records_file is not None:
                with self._records_file.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's; typeshed's type also allows AF_UNIX's bytes
        return f"http://{host}:{port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> SiteServer:
        if not self.running:
            self._thread = threading.Thread(target=self._server.serve_forever, name=f"site-{self.site}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self.running:
            self._server.shutdown()
            assert self._thread is not None
            self._thread.join()
        self._server.server_close()
        self._thread = None

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (the CLI)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_SHARED: dict[str, SiteServer] = {}
_LOCK = threading.Lock()


def shared_site(site: str) -> SiteServer:
    """The process-wide server of ``site``, started on first use (envs and tests reuse it)."""
    with _LOCK:
        server = _SHARED.get(site)
        if server is None or not server.running:
            server = _SHARED[site] = SiteServer(site).start()
        return server


def site_url(site: str) -> str:
    """The base URL of local site ``site``: ``$INTROSPECT_SITE_<SITE>`` when set (a server
    shared by several processes), else this process' own server, started on first use."""
    given = os.environ.get(f"INTROSPECT_SITE_{site.upper()}", "").strip().rstrip("/")
    return given or shared_site(site).url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve one of the project's local websites.")
    parser.add_argument("site", choices=sorted(SITES))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--records", type=Path, help="append what visitors submit to this file (JSON lines)")
    args = parser.parse_args(argv)
    server = SiteServer(args.site, host=args.host, port=args.port, records=args.records)
    print(f"serving {args.site} at {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
