"""Signing in to the WebArena sites, as WebArena's browser_env/auto_login.py does, and the stored
logins (Playwright storage states: cookies and local storage) the env starts its tasks with.

    introspect webarena login                      # every configured site, and the pairs WebArena uses
    introspect webarena login --site shop          # the local shop
    introspect webarena login --site gitlab --site reddit   # one combined login: gitlab.reddit_state.json

What auto_login does, and so does ``login`` here:
- the sites with accounts are shopping, shopping_admin, reddit and gitlab (plus the project's local
  shop); each is signed into through its own sign-in form (Magento's Email/Password/"Sign In",
  Postmill's Username/Password/"Log in", the Magento admin's "user name"/"password"/"Sign in",
  GitLab's username-field/password-field/sign-in-button);
- a combination of sites is signed into in one browser context and its storage state written to
  ``<auth dir>/<site>.<site>_state.json`` (names sorted, as the task configs name them); with no
  sites named: every configured site alone and every pair of them, except reddit with shopping or
  shopping_admin (WebArena skips those pairs: their logins do not work together);
- each login is checked as auto_login checks it: a members-only page must open without being sent
  to the sign-in page (shopping ``/wishlist/``, gitlab ``/-/profile``), or must show a keyword
  (shopping_admin ``/dashboard`` "Dashboard", reddit ``/user/<name>/account`` "Delete").

Credentials come from the environment, never from files or flags: ``WEBARENA_<SITE>_USER`` and
``WEBARENA_<SITE>_PASSWORD`` (WebArena's own accounts are listed in docs/envs/webarena.md). The auth dir is
``$WEBARENA_AUTH_DIR``, else ``.auth`` (the ``./.auth/`` the task configs name).

A local site needs no stored login: when its state file is absent the env signs in with the
site's own demo account (``local_state``), so the offline tasks start signed in as WebArena's do.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, StorageState
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from envs.base import EnvError
from envs.browser import BrowserSession, UrlPolicy
from envs.sites.serve import site_url as local_site_url
from envs.sites.shop.store import load_store
from envs.webarena import tasks as webarena_tasks
from errors import IntrospectError


class LoginFailed(IntrospectError, RuntimeError):
    """A site did not accept the login (the check page still asks to sign in): the command
    says which in one line and exits 1."""

    exit_status = 1


Fill = Callable[[Page, str, str, str], Awaitable[None]]  # page, base URL, user, password


async def _magento_customer(page: Page, base: str, user: str, password: str) -> None:
    await page.goto(f"{base}/customer/account/login/")
    await page.get_by_label("Email", exact=True).fill(user)
    await page.get_by_label("Password", exact=True).fill(password)
    await _submit(page, page.get_by_role("button", name="Sign In"))


async def _postmill(page: Page, base: str, user: str, password: str) -> None:
    await page.goto(f"{base}/login")
    await page.get_by_label("Username").fill(user)
    await page.get_by_label("Password").fill(password)
    await _submit(page, page.get_by_role("button", name="Log in"))


async def _magento_admin(page: Page, base: str, user: str, password: str) -> None:
    await page.goto(base)
    await page.get_by_placeholder("user name").fill(user)
    await page.get_by_placeholder("password").fill(password)
    await _submit(page, page.get_by_role("button", name="Sign in"))


async def _gitlab(page: Page, base: str, user: str, password: str) -> None:
    await page.goto(f"{base}/users/sign_in")
    await page.get_by_test_id("username-field").click()
    await page.get_by_test_id("username-field").fill(user)
    await page.get_by_test_id("username-field").press("Tab")
    await page.get_by_test_id("password-field").fill(password)
    await _submit(page, page.get_by_test_id("sign-in-button"))


async def _submit(page: Page, button: Any) -> None:
    try:
        async with page.expect_navigation(timeout=30000):
            await button.click()
    except PlaywrightTimeoutError:
        pass  # no navigation: the check below tells whether the login took


@dataclass(frozen=True)
class Site:
    """One site with accounts: how to sign in, and which page proves it (auto_login's is_expired)."""

    fill: Fill
    check_path: str  # may name {user}
    keyword: str = ""  # "" = the check page must open at its own URL (not the sign-in page)


SITES: dict[str, Site] = {
    "shopping": Site(_magento_customer, "/wishlist/"),
    "shopping_admin": Site(_magento_admin, "/dashboard", "Dashboard"),
    "reddit": Site(_postmill, "/user/{user}/account", "Delete"),
    "gitlab": Site(_gitlab, "/-/profile"),
    "shop": Site(_magento_customer, "/wishlist/"),
}
ORDER = ("shopping", "reddit", "shopping_admin", "gitlab", "shop")  # auto_login's order within a context
SITE_VARS = {site: var for site, var in webarena_tasks.WEBARENA_SITES.values()}


def credential_vars(site: str) -> tuple[str, str]:
    prefix = f"WEBARENA_{site.upper()}"
    return f"{prefix}_USER", f"{prefix}_PASSWORD"


def credentials(site: str, environ: Mapping[str, str]) -> tuple[str, str]:
    user_var, password_var = credential_vars(site)
    user, password = environ.get(user_var, "").strip(), environ.get(password_var, "")
    if not user or not password:
        raise EnvError(f"signing in to {site} needs its account: set {user_var} and {password_var}")
    return user, password


def auth_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    return Path(environ.get(webarena_tasks.AUTH_DIR_VAR) or webarena_tasks.DEFAULT_AUTH_DIR)


def state_name(sites: tuple[str, ...]) -> str:
    return ".".join(sorted(sites)) + "_state.json"


def site_url(site: str, environ: Mapping[str, str]) -> str:
    """The base URL of a site with accounts (a one-line EnvError when it is unknown or unset)."""
    if site not in SITES:
        raise EnvError(f"no login for site {site!r}; sites with accounts: {', '.join(sorted(SITES))}")
    if site in webarena_tasks.LOCAL_SITES.values():
        return local_site_url(site)
    var = SITE_VARS[site]
    url = environ.get(var, "").strip().rstrip("/")
    if not url:
        raise EnvError(f"site {site} is not configured: set {var} to its URL")
    return url


def plan(sites: list[str], environ: Mapping[str, str]) -> list[tuple[str, ...]]:
    """The site combinations to sign into; every problem is found here, before a browser starts."""
    if sites:
        combos = [tuple(sorted(set(sites)))]
    else:
        configured = [s for s in ORDER if s in SITE_VARS and environ.get(SITE_VARS[s], "").strip()]
        if not configured:
            raise EnvError(
                "no WebArena site with accounts is configured (set WEBARENA_SHOPPING, "
                "WEBARENA_SHOPPING_ADMIN, WEBARENA_REDDIT or WEBARENA_GITLAB), or name one: --site shop"
            )
        pairs = [
            tuple(sorted(p))
            for p in combinations(configured, 2)
            if not ("reddit" in p and ("shopping" in p or "shopping_admin" in p))
        ]
        combos = [(s,) for s in configured] + pairs
    for combo in combos:
        for site in combo:
            site_url(site, environ)
            credentials(site, environ)
    return combos


async def sign_in(
    sites: tuple[str, ...], accounts: Mapping[str, tuple[str, str]], urls: Mapping[str, str]
) -> StorageState:
    """Sign into ``sites`` in one fresh context; returns its storage state. LoginFailed if one fails."""
    policy = UrlPolicy(origins=tuple(urls[s] for s in sites))
    session = await BrowserSession.open(policy)
    try:
        for site in sorted(sites, key=ORDER.index):
            user, password = accounts[site]
            await SITES[site].fill(session.page, urls[site], user, password)
        for site in sites:
            await _check(session.page, site, urls[site], accounts[site][0])
        return await session.context.storage_state()
    except PlaywrightError as exc:
        raise LoginFailed(f"signing in to {', '.join(sites)} failed: {str(exc).splitlines()[0]}") from None
    finally:
        await session.close()


async def _check(page: Page, site: str, base: str, user: str) -> None:
    spec = SITES[site]
    url = base + spec.check_path.format(user=urllib.parse.quote(user))
    await page.goto(url)
    ok = spec.keyword in await page.content() if spec.keyword else page.url.rstrip("/") == url.rstrip("/")
    if not ok:
        user_var, password_var = credential_vars(site)
        raise LoginFailed(
            f"signing in to {site} failed ({url} still asks to sign in): check {user_var} and {password_var}"
        )


def write_state(path: Path, state: StorageState) -> None:
    """Write atomically: a crash never leaves half a login file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as fh:
        json.dump(state, fh)
    os.replace(fh.name, path)


async def login(sites: list[str], folder: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Sign into each combination and write its state file; returns the files written."""
    environ = os.environ if environ is None else environ
    combos = plan(sites, environ)
    written = []
    for combo in combos:
        urls = {s: site_url(s, environ) for s in combo}
        accounts = {s: credentials(s, environ) for s in combo}
        state = await sign_in(combo, accounts, urls)
        path = folder / state_name(combo)
        await asyncio.to_thread(write_state, path, state)
        written.append(path)
    return written


def _shop_account() -> tuple[str, str]:
    customer = load_store().customer
    return customer["email"], customer["password"]


LOCAL_ACCOUNTS: dict[str, Callable[[], tuple[str, str]]] = {"shop": _shop_account}
_LOCAL_STATES: dict[str, StorageState] = {}


async def local_state(site: str, base_url: str) -> StorageState:
    """A signed-in storage state for a local site, made once per process with its demo account
    (two tasks starting at once may both sign in: harmless, each gets a valid session)."""
    if base_url not in _LOCAL_STATES:
        account = await asyncio.to_thread(LOCAL_ACCOUNTS[site])  # reads the site's data file
        _LOCAL_STATES[base_url] = await sign_in((site,), {site: account}, {site: base_url})
    return _LOCAL_STATES[base_url]
