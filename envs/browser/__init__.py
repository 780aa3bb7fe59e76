"""The shared browser core of the browser environments (MiniWoB++, WebArena): one Chromium per
process (launch), a context per task whose traffic reaches only the task's origins (gate), real
clicks (click), steps that outlive a Chromium crash (crash), the sessions themselves (core).
Import from here; the modules are its parts."""

from envs.browser.click import click, evaluate_all, hover
from envs.browser.core import (
    DEFAULT_LOAD_TIMEOUT_MS,
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_VIEWPORT,
    BrowserSession,
    PageTooLarge,
    reported,
)
from envs.browser.crash import CrashGuard
from envs.browser.gate import UrlPolicy
from envs.browser.launch import (
    CHROMIUM_ARGS,
    DEFAULT_CHROMIUM,
    BrowserDiedError,
    answers,
    chromium_path,
    close_browser,
    get_browser,
    launch_count,
)
from envs.browser.processes import browser_memory_bytes, browser_pids

__all__ = [
    "CHROMIUM_ARGS",
    "DEFAULT_CHROMIUM",
    "DEFAULT_LOAD_TIMEOUT_MS",
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_VIEWPORT",
    "BrowserDiedError",
    "BrowserSession",
    "CrashGuard",
    "PageTooLarge",
    "UrlPolicy",
    "answers",
    "browser_memory_bytes",
    "browser_pids",
    "chromium_path",
    "click",
    "close_browser",
    "evaluate_all",
    "get_browser",
    "hover",
    "launch_count",
    "reported",
]
