"""What produced a results row, and whether a finished row still stands for the current code.

Every row an evaluation writes carries ``provenance`` (``Provenance.to_dict``), worked out once
per evaluation: the project's version and git commit (``dirty``: the checkout had local changes
to tracked files; both "unknown" when the code does not run from a git checkout, e.g. an
installed wheel), Python and the versions of the packages a run goes through, Chromium's when
the env drives a browser, the model spec (a spec names a model, never a key; it is passed
through ``nodes.runtime.secrets.redact`` all the same), the run's seeds, a hash of every prompt the run
uses, and a hash of the code it runs; for a model served here (``local``, ``gguf:FILE``), the
GGUF file's sha256, llama-cpp-python's version, the context size and the servers' settings.
The data the env read is the row's own ``data``.

A finished row is reused only while its prompts and code are the current ones (``stale``);
one written by other prompts or other code runs again (``eval --keep-stale`` keeps it).

What "the code differs" means: not the git commit, which changes with every edit of the docs or
of an unrelated module, but ``code``: a hash of the Python source of the modules the method and
its env run, found by following the imports (every ``import``, also those inside functions)
from the method's graph module and the env's package, within the project's packages and the
method's own top-level package (a method kept elsewhere). Each module counts as its syntax tree
without docstrings, so a reworded comment or docstring, or reformatted code, leaves rows
standing; a changed statement anywhere in those modules does not. Packages outside the project
(langgraph, ...) are recorded by version and do not make a row stale.

The prompts are hashed from the texts the process loaded (``prompts.Templates`` reads its files
once, at import): the method's own folder (``Method.prompts``) and the shipped prompts of the env
(a judge's: ``prompts/hotpotqa``), named ``METHOD/NAME`` and ``ENV/NAME``.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import hashlib
import importlib.metadata
import importlib.util
import platform
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from envs import syntax
from envs.base import ENV_CLASSES
from graphs.method import Method
from nodes.runtime.context import Context
from nodes.runtime.secrets import redact
from prompts import SHIPPED

ROOT = Path(__file__).resolve().parents[1]  # the checkout (or site-packages, when installed)
DISTRIBUTION = "introspect-agents"
PROJECT = ("graphs", "nodes", "envs", "prompts", "errors")  # the project's top-level packages
PACKAGES = ("langgraph", "langchain-core", "langchain-openai", "playwright")
UNKNOWN = "unknown"
GIT_TIMEOUT_S = 10.0


def digest(text: str | bytes, length: int = 12) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:length]


@dataclass(frozen=True)
class Provenance:
    """What produced a row (module docstring); ``code`` and ``prompts`` decide staleness."""

    version: str  # the project's version (pyproject.toml of the checkout, else the installed distribution's)
    commit: str  # git HEAD, or "unknown" when not run from a git checkout
    dirty: bool | None  # tracked files changed since ``commit``; None when unknown
    python: str
    packages: dict[str, str | None]  # distribution -> version (None: not installed)
    chromium: str | None  # the browser's version, for an env that drives one
    model: str
    seeds: dict[str, Any]  # the Context's seed settings
    code: str  # hash of the modules the method and env run
    prompts: dict[str, str] = field(default_factory=dict)  # prompt name -> hash of its text
    served: dict[str, Any] | None = None  # the embedded model's GGUF (sha256), llama.cpp and server settings

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def changes(self, recorded: Mapping[str, Any]) -> list[str]:
        """Why a row with provenance ``recorded`` no longer stands for this one: "prompts
        changed (laser/action)", "code changed"; empty when it does."""
        out = []
        before = recorded.get("prompts") or {}
        changed = sorted(
            name for name in before.keys() | self.prompts.keys() if before.get(name) != self.prompts.get(name)
        )
        if changed:
            shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
            out.append(f"prompts changed ({shown})")
        if recorded.get("code") != self.code:
            out.append("code changed")
        return out


async def provenance_of(method: Method, context: Context) -> Provenance:
    """The provenance of an evaluation of ``method`` with ``context``: file and process work
    (git, package metadata, parsing the modules, Chromium's ``--version``) runs in a thread."""
    env_package = ENV_CLASSES.get(context.env, "").partition(":")[0]
    modules = await asyncio.to_thread(source_modules, [method.build_graph.__module__, env_package])
    browser = "envs.browser.launch" in modules
    (commit, dirty), version, packages, chromium, code, served = await asyncio.gather(
        asyncio.to_thread(git_state),
        asyncio.to_thread(project_version),
        asyncio.to_thread(package_versions),
        asyncio.to_thread(chromium_version) if browser else _none(),
        asyncio.to_thread(code_hash, modules),
        asyncio.to_thread(served_model, context.model),
    )
    return Provenance(
        version=version,
        commit=commit,
        dirty=dirty,
        python=platform.python_version(),
        packages=packages,
        chromium=chromium,
        model=redact(context.model),
        seeds={name: value for name, value in context.to_dict().items() if "seed" in name},
        code=code,
        prompts=prompt_hashes(method, context.env),
        served=served,
    )


def served_model(spec: str) -> dict[str, Any] | None:
    """What is known of a model served here (nodes.runtime.local): the GGUF file's name and sha256, the
    llama-cpp-python version, the context size and the servers' settings; None for other specs."""
    from nodes.runtime import local

    return local.local_model(spec).describe() if local.is_local(spec) else None


async def _none() -> None:
    return None


def prompt_hashes(method: Method, env: str) -> dict[str, str]:
    """Hashes of the prompt texts the run can use: its method's folder and its env's."""
    own = method.prompts
    out = {f"{method.name}/{name}": digest(own.load(name)) for name in own.names()} if own else {}
    shipped = SHIPPED.folder(env)
    out.update({f"{env}/{name}": digest(shipped.load(name)) for name in shipped.names()})
    return out


def git_state() -> tuple[str, bool | None]:
    """(HEAD, local changes to tracked files) of the checkout the code runs from, or
    ("unknown", None): not a checkout (an installed wheel, whose folder may even lie inside
    another repository), or no git."""
    try:
        top = _git("rev-parse", "--show-toplevel")
        if Path(top).resolve() != ROOT:
            return UNKNOWN, None
        return _git("rev-parse", "HEAD"), bool(_git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN, None


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=True
    )
    return done.stdout.strip()


def project_version() -> str:
    """The checkout's pyproject.toml version, else the installed distribution's."""
    try:
        return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


@functools.cache
def chromium_version() -> str:
    """``chromium --version`` of the binary the browser envs launch, asked once per process."""
    from envs.browser.launch import chromium_path

    try:
        done = subprocess.run([chromium_path(), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    return done.stdout.strip() or UNKNOWN


def source_modules(roots: Iterable[str]) -> dict[str, ast.Module]:
    """The project's modules reachable by imports from ``roots`` (module names), with their
    syntax trees: the project's packages and each root's own top-level package."""
    roots = [r for r in roots if r]
    own = set(PROJECT) | {r.split(".")[0] for r in roots}
    found: dict[str, ast.Module] = {}
    queue = list(roots)
    while queue:
        name = queue.pop()
        if name in found or name.split(".")[0] not in own:
            continue
        path = module_file(name)
        if path is None:
            continue
        # envs.syntax: provenance is asked from worker threads, several at once, and CPython
        # 3.11's parser is not safe in two threads at once
        found[name] = tree = syntax.parse(path.read_bytes())
        queue += imported_names(name, path, tree)
    return found


def module_file(name: str) -> Path | None:
    """The source file of module ``name``, or None (not a module: a name imported from one)."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None)
    if module is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def imported_names(name: str, path: Path, tree: ast.Module) -> Iterator[str]:
    """Every module ``tree`` (module ``name`` at ``path``) may import, and for ``from X import
    y`` also ``X.y`` (a submodule, or a name ``module_file`` then finds is none)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def code_hash(modules: Mapping[str, ast.Module]) -> str:
    """One hash over the modules' syntax trees without docstrings (module docstring); the trees
    lose their docstrings."""
    total = hashlib.sha256()
    for name in sorted(modules):
        tree = modules[name]
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (
                isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and isinstance(body, list)
                and body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
        total.update(f"{name}\n{ast.dump(tree)}\n".encode())
    return total.hexdigest()[:16]


@dataclass(frozen=True)
class Reuse:
    """Which finished rows of one configuration an evaluation reuses (their tasks are skipped)
    and which are stale: written by other prompts or code, so run again unless ``kept``."""

    provenance: Provenance  # the evaluation's own
    finished: frozenset[str]  # tasks whose rows are reused
    stale: Mapping[str, list[str]]  # task -> why its row no longer stands
    unrecorded: int  # reused rows written before rows carried provenance
    kept: bool  # --keep-stale: stale rows are reused too

    def notes(self, configuration: str) -> list[str]:
        """What the user should know before the tasks run, one line per kind."""
        lines = []
        if self.stale:
            reasons = sorted({why for whys in self.stale.values() for why in whys})
            rows = f"{len(self.stale)} finished row{'s' if len(self.stale) != 1 else ''}"
            action = "kept (--keep-stale)" if self.kept else "running them again (--keep-stale keeps them)"
            lines.append(f"stale: {rows} of {configuration}: {'; '.join(reasons)}: {action}")
        if self.unrecorded:
            rows = "1 finished row" if self.unrecorded == 1 else f"{self.unrecorded} finished rows"
            verb = "carries" if self.unrecorded == 1 else "carry"
            lines.append(
                f"note: {rows} of {configuration} {verb} no provenance (written before rows recorded it): "
                "reused as they are"
            )
        return lines


def reuse_of(provenance: Provenance, rows: Mapping[str, Mapping[str, Any]], keep_stale: bool = False) -> Reuse:
    """Sort the latest rows per task of a configuration (``rows``) into reused and stale."""
    finished: set[str] = set()
    stale: dict[str, list[str]] = {}
    unrecorded = 0
    for task, row in rows.items():
        if row.get("error"):
            continue
        recorded = row.get("provenance")
        why = provenance.changes(recorded) if isinstance(recorded, Mapping) else []
        unrecorded += not isinstance(recorded, Mapping)
        if why:
            stale[task] = why
        if not why or keep_stale:
            finished.add(task)
    return Reuse(provenance, frozenset(finished), stale, unrecorded, keep_stale)
