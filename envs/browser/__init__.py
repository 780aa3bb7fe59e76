"""The shared browser core of the browser environments (MiniWoB++, WebArena): one Chromium per
process, a context per task, the navigation allowlist and real clicks (``envs.browser.core``)."""

from envs.browser.core import (
    CHROMIUM_ARGS,
    DEFAULT_CHROMIUM,
    DEFAULT_CLICK_TIMEOUT_MS,
    DEFAULT_VIEWPORT,
    BrowserSession,
    UrlPolicy,
    browser_memory_bytes,
    browser_pids,
    chromium_path,
    click,
    close_browser,
    get_browser,
    launch_count,
)

__all__ = [
    "CHROMIUM_ARGS", "DEFAULT_CHROMIUM", "DEFAULT_CLICK_TIMEOUT_MS", "DEFAULT_VIEWPORT", "BrowserSession", "UrlPolicy",
    "browser_memory_bytes", "browser_pids", "chromium_path", "click", "close_browser", "get_browser", "launch_count",
]
