"""Test helper: crash the shared Chromium the way a real crash would."""

from __future__ import annotations

import asyncio
import os
import signal

from envs import browser


async def kill_chromium(connected) -> None:
    """SIGKILL every Chromium process and wait until ``connected`` (a Playwright Browser) sees it."""
    for pid in browser.browser_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # a child that died with its parent
            pass
    for _ in range(100):
        if not connected.is_connected():
            return
        await asyncio.sleep(0.05)
