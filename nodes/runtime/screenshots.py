"""Screenshots of a run's pages, for people reading its trajectory (the agent never sees them).

A command asked to keep them (``--screenshots``) sets ``SCREENSHOTS`` to a folder beside its
checkpoint database; after every environment step of a browser env (``envs.base.Screenshots``)
the page is captured to ``FOLDER/<session>/<NNNN>.png``, NNNN being the step's index in the
trajectory. The PNGs stay out of graph state (state holds JSON only, and checkpoints would
grow by a picture per step); the trajectory viewer finds them by thread and index. A capture
that fails is skipped: a missing picture must not end a run.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from pathlib import Path

from envs.base import Env, Screenshots

SCREENSHOTS: ContextVar[Path | None] = ContextVar("introspect_screenshots", default=None)


def screenshot_path(folder: Path, session: str, index: int) -> Path:
    """Where step ``index`` (0-based, in the trajectory) of ``session`` keeps its picture."""
    return folder / session.replace("/", "_") / f"{index:04d}.png"


async def capture(env: Env, session: str, index: int) -> None:
    """Keep a picture of ``env``'s page after step ``index``, when the command asked for them."""
    folder = SCREENSHOTS.get()
    if folder is None or not isinstance(env, Screenshots):
        return
    try:
        picture = await env.screenshot()
    except Exception:  # noqa: BLE001 - a picture for people; the run goes on without it
        return
    path = screenshot_path(folder, session, index)
    await asyncio.to_thread(_write, path, picture)


def _write(path: Path, picture: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(picture)
