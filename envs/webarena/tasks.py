"""WebArena task configs: loading, site placeholders, and each task's navigation allowlist.

Two sources, one format (WebArena's ``config_files/test.raw.json`` keys):
- the 812 WebArena tasks (envs/data/webarena/test.raw.json.gz, Apache-2.0), ids "0".."811";
  their sites are the WebArena docker sites, located through environment variables;
- the local shop tasks (envs/data/webarena/shop_tasks.json), ids "shop-0".., on the site the
  project serves itself (envs/sites/shop), placeholder ``__SHOP__``.

Placeholders in any string of a config (start_url, reference_url, program_html url/locator) are
replaced by the site's base URL. The task's ``sites`` (plus any site its config mentions) form the
allowlist of origins the browser may load, with, for a WebArena task, every other configured
WebArena site (its variable set), as WebArena lets an agent reach all of its sites.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import urllib.parse
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.base import DATA_ROOT, EnvError, UnknownTaskError

if TYPE_CHECKING:
    from playwright.async_api import StorageState

DATA = DATA_ROOT / "webarena"
WEBARENA_FILE = DATA / "test.raw.json.gz"
SHOP_FILE = DATA / "shop_tasks.json"

# placeholder -> (site name in configs, environment variable with its base URL)
WEBARENA_SITES: dict[str, tuple[str, str]] = {
    "__SHOPPING_ADMIN__": ("shopping_admin", "WEBARENA_SHOPPING_ADMIN"),
    "__SHOPPING__": ("shopping", "WEBARENA_SHOPPING"),
    "__REDDIT__": ("reddit", "WEBARENA_REDDIT"),
    "__GITLAB__": ("gitlab", "WEBARENA_GITLAB"),
    "__MAP__": ("map", "WEBARENA_MAP"),
    "__WIKIPEDIA__": ("wikipedia", "WEBARENA_WIKIPEDIA"),
    "__HOMEPAGE__": ("homepage", "WEBARENA_HOMEPAGE"),
}
LOCAL_SITES: dict[str, str] = {"__SHOP__": "shop"}  # placeholder -> site served by envs.sites.serve
AUTH_DIR_VAR = "WEBARENA_AUTH_DIR"  # folder with the logins (<sites>_state.json), as WebArena's .auth/
DEFAULT_AUTH_DIR = ".auth"  # where the configs' "./.auth/<sites>_state.json" point
_PLACEHOLDER = re.compile(r"__[A-Z_]+?__")


@lru_cache(maxsize=1)
def load_configs() -> dict[str, dict[str, Any]]:
    """Every task config by its string id: the 812 WebArena tasks, then the local shop tasks."""
    with gzip.open(WEBARENA_FILE, "rt", encoding="utf-8") as fh:
        webarena = json.load(fh)
    local = json.loads(SHOP_FILE.read_text(encoding="utf-8"))
    configs = {str(c["task_id"]): c for c in webarena}
    configs.update({str(c["task_id"]): c for c in local})
    return configs


def task_ids(split: str | None = None) -> list[str]:
    """ "local" = the shop tasks, "webarena" = the 812, None = all."""
    configs = load_configs()
    if split is None:
        return list(configs)
    if split == "local":
        return [t for t, c in configs.items() if is_local(c)]
    if split == "webarena":
        return [t for t, c in configs.items() if not is_local(c)]
    raise EnvError(f"unknown webarena split {split!r}; choose local, webarena or leave it unset")


def config(task_id: str) -> dict[str, Any]:
    try:
        return load_configs()[task_id]
    except KeyError:
        raise UnknownTaskError(f"unknown webarena task {task_id!r}") from None


def is_local(cfg: Mapping[str, Any]) -> bool:
    return any(site in LOCAL_SITES.values() for site in cfg.get("sites", []))


def placeholders_of(cfg: Mapping[str, Any]) -> list[str]:
    """The site placeholders a config uses: its ``sites`` and any placeholder in its strings."""
    by_site = {site: ph for ph, (site, _) in WEBARENA_SITES.items()}
    by_site.update({site: ph for ph, site in LOCAL_SITES.items()})
    found = [by_site[s] for s in cfg.get("sites", []) if s in by_site]
    known = set(WEBARENA_SITES) | set(LOCAL_SITES)
    for match in _PLACEHOLDER.findall(json.dumps(cfg)):
        # "__SHOPPING____REDDIT__" glues two placeholders; split them by known names
        for name in sorted(known, key=len, reverse=True):
            if name in match and name not in found:
                found.append(name)
    return found


def site_urls(
    cfg: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    local_url: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """placeholder -> base URL (no trailing slash) for every site the task uses.

    A WebArena site comes from its environment variable (a one-line EnvError names the variable
    when it is unset); a local site from ``local_url(site)``, which starts it when needed.
    """
    environ = os.environ if environ is None else environ
    urls: dict[str, str] = {}
    for ph in placeholders_of(cfg):
        if ph in LOCAL_SITES:
            if local_url is None:
                raise EnvError(f"task {cfg.get('task_id')} needs the local site {LOCAL_SITES[ph]}")
            urls[ph] = local_url(LOCAL_SITES[ph]).rstrip("/")
            continue
        site, var = WEBARENA_SITES[ph]
        value = environ.get(var, "").strip()
        if not value:
            raise EnvError(
                f"webarena task {cfg.get('task_id')} needs the {site} site: set {var} to its URL "
                f"(e.g. {var}=http://localhost:7770)"
            )
        urls[ph] = value.rstrip("/")
    return urls


def sandbox_urls(
    cfg: Mapping[str, Any], urls: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """placeholder -> base URL of every site the task's agent may reach: for a WebArena task its
    own ``urls`` and every WebArena site whose variable is set (WebArena lets an agent reach all
    of its sites whatever the task, and the Devil's Advocate prompts list them all); for a local
    task its own, so that a local run (a test, a demo's recording) does not depend on which
    WebArena sites the shell has configured."""
    if is_local(cfg):
        return dict(urls)
    environ = os.environ if environ is None else environ
    configured = {ph: environ.get(var, "").strip().rstrip("/") for ph, (_, var) in WEBARENA_SITES.items()}
    return {**{ph: url for ph, url in configured.items() if url}, **urls}


def site_names(urls: Mapping[str, str]) -> dict[str, str]:
    """placeholder -> URL mapping re-keyed by site name ("shopping", "shop", ...)."""
    names = {ph: site for ph, (site, _) in WEBARENA_SITES.items()}
    names.update(LOCAL_SITES)
    return {names[ph]: url for ph, url in urls.items()}


def resolve(value: Any, urls: Mapping[str, str]) -> Any:
    """``value`` with every placeholder replaced (strings inside dicts and lists too)."""
    if isinstance(value, str):
        for ph in sorted(urls, key=len, reverse=True):
            value = value.replace(ph, urls[ph])
        return value
    if isinstance(value, list):
        return [resolve(v, urls) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, urls) for k, v in value.items()}
    return value


def origins(urls: Mapping[str, str]) -> tuple[str, ...]:
    """The allowlist: scheme://host:port of each site."""
    out = []
    for url in urls.values():
        parts = urllib.parse.urlsplit(url)
        out.append(f"{parts.scheme}://{parts.netloc}")
    return tuple(dict.fromkeys(out))


def start_urls(cfg: Mapping[str, Any]) -> list[str]:
    """WebArena opens one tab per URL of ``start_url`` joined by " |AND| "."""
    return [u.strip() for u in str(cfg.get("start_url") or "").split(" |AND| ") if u.strip()]


def storage_state(cfg: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> StorageState | None:
    """The stored login a task starts with: its ``storage_state`` file (``introspect webarena login``
    writes them) under $WEBARENA_AUTH_DIR, else under ``.auth`` as the configs name it.

    None when the task needs no login, or when it runs on a local site and has no stored login (the
    env then signs in itself); a WebArena task whose login is missing is a one-line EnvError.
    """
    environ = os.environ if environ is None else environ
    name = cfg.get("storage_state")
    if not name:
        return None
    folder = Path(environ.get(AUTH_DIR_VAR) or DEFAULT_AUTH_DIR)
    path = folder / Path(name).name
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    if is_local(cfg):
        return None
    raise EnvError(
        f"webarena task {cfg.get('task_id')} starts signed in with {path}, which does not exist: run "
        f"`introspect webarena login` (or set {AUTH_DIR_VAR} to the folder holding {path.name})"
    )
