"""Form submissions a task's pages send, written to disk as they happen, so that a step run
again after a crash does not submit a second time.

A graph step that submits a form (a click on Send) and is killed before its checkpoint is
saved runs again when the thread resumes: the env is restored to the page before the click
and the click is made again. On a real site that would be a second message, order or post.
So every submission (a top-frame navigation that is not a GET: the browser's own form posts)
made during a graph step is journaled under the step's identity, which LangGraph keeps when
it re-runs a step (its task id): first the request (method, URL and a digest of the body,
never the body: it may hold a password), on disk before it is sent, then the site's answer.
When the step runs again, the same submission gets the journaled answer and the site is not
asked. If the process died between sending and keeping the answer (a window of one round
trip), nobody knows whether the site took it: it is not sent again (at most once), and the
page says so. Requests outside a graph step (a test stepping the env itself) are not
journaled.

Journals live in ``journal/<thread>/`` of introspect's home (``envs.datasets.home``), one file
per submission, and are removed when the run finishes.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Request, Route

from envs.datasets import home

SAFE = ("GET", "HEAD", "OPTIONS")
LOST = (
    "<!DOCTYPE html><html><head><title>Submission interrupted</title></head><body>"
    "<h1>Submission interrupted</h1><p>This form was sent just before the run was interrupted; the "
    "site's answer was lost. It is not sent again: check on the site whether it arrived.</p></body></html>"
)


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()


def _write(path: Path, entry: dict[str, Any]) -> None:
    """Write ``entry`` whole and on disk before returning (a crash leaves the old file or the new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".tmp")
    with scratch.open("w", encoding="utf-8") as fh:
        json.dump(entry, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(scratch, path)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Journal:
    """The submissions of one env's pages; ``at_step`` names the graph step under way."""

    def __init__(self) -> None:
        # the task's allowlist (set with each browser context): a refused URL is left to its filter
        self.refused: Callable[[str], str | None] = lambda url: None
        self._folder: Path | None = None
        self._step = ""
        self._sent = 0  # submissions so far in this step

    @staticmethod
    def folder_of(thread_id: str) -> Path:
        return home() / "journal" / _digest(thread_id)[:24]

    def at_step(self, thread_id: str, step_id: str) -> None:
        """Submissions from now on belong to graph step ``step_id`` of the thread (a step may
        take several actions: they count on)."""
        if (self._folder, self._step) != (self.folder_of(thread_id), step_id):
            self._folder, self._step, self._sent = self.folder_of(thread_id), step_id, 0

    async def finish(self) -> None:
        """The run is over: its journal is no longer needed."""
        if self._folder is not None:
            await asyncio.to_thread(shutil.rmtree, self._folder, True)
            self._folder = None

    async def route(self, route: Route, request: Request) -> None:
        """A context route handler: journal submissions, let everything else through."""
        if (
            self._folder is None
            or request.method in SAFE
            or not request.is_navigation_request()
            or self.refused(request.url)
        ):
            await route.fallback()
            return
        path = self._folder / f"{_digest(self._step)[:24]}-{self._sent}.json"
        self._sent += 1
        sent = {"method": request.method, "url": request.url, "body": _digest(request.post_data_buffer or b"")}
        entry = await asyncio.to_thread(_read, path)
        if entry is not None and entry.get("request") == sent:
            answer = entry.get("response")
            if answer is None:
                await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=LOST)
            else:
                await route.fulfill(
                    status=answer["status"], headers=answer["headers"], body=base64.b64decode(answer["body"])
                )
            return
        await asyncio.to_thread(_write, path, {"request": sent})
        response = await route.fetch(max_redirects=0)  # a redirect is the browser's to follow
        body = await response.body()
        answer = {"status": response.status, "headers": response.headers, "body": base64.b64encode(body).decode()}
        await asyncio.to_thread(_write, path, {"request": sent, "response": answer})
        await route.fulfill(response=response, body=body)
