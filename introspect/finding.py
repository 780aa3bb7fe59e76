"""Which checkpointer holds a run, from what a person has at hand: a study folder, one of its
results files, or a thread id.

``view``, ``view --compare`` and ``export`` read runs back from their checkpoints. A study keeps
its runs' checkpoints itself (``checkpoints.sqlite`` in its folder, or the spec's
``checkpoint``), so a study folder, or a results file in its ``results/``, names its
checkpointer. A thread id is looked for in the default checkpointer, then in the studies kept in
introspect's home (``studies/*``). ``--checkpoint``, when given, always wins.
"""

from __future__ import annotations

from pathlib import Path

from introspect.checkpoint import CheckpointConfigError, default_url, home, open_checkpointer, thread_exists
from introspect.study.folder import SPEC, folder_checkpoint, results_files


def study_holding(path: Path) -> Path | None:
    """The study folder ``path`` is, or whose ``results/`` holds it; None for neither."""
    if path.is_dir():
        return path if (path / SPEC).is_file() else None
    folder = path.resolve().parent
    return folder.parent if folder.name == "results" and (folder.parent / SPEC).is_file() else None


def checkpoint_of(path: Path, given: str | None) -> str | None:
    """The checkpointer of the runs in ``path`` (a results file or a study folder): ``given``,
    else the study's own when ``path`` belongs to one, else None (the default)."""
    if given is not None:
        return given
    study = study_holding(path)
    return folder_checkpoint(study) if study is not None else None


def kept_studies() -> list[Path]:
    """The study folders in introspect's home, in name order."""
    return sorted(spec.parent for spec in (home() / "studies").glob(f"*/{SPEC}"))


async def thread_checkpoint(thread_id: str, given: str | None) -> str | None:
    """The checkpointer holding ``thread_id``: ``given``; else the default one when the thread
    is there; else the first study in introspect's home whose own SQLite checkpoints hold it;
    else None (the default, which then says the thread is not there)."""
    if given is not None:
        return given
    async with open_checkpointer(default_url(), existing=True) as saver:
        if await thread_exists(saver, thread_id):
            return None
    for study in kept_studies():
        try:
            url = folder_checkpoint(study)
        except (OSError, ValueError):  # an unreadable spec: not a study to look in
            continue
        if not url.startswith("sqlite:"):
            continue  # a server's checkpointer is named with --checkpoint, not searched
        try:
            async with open_checkpointer(url, existing=True) as saver:
                if await thread_exists(saver, thread_id):
                    return url
        except CheckpointConfigError:
            continue
    return None


def results_in(paths: list[Path]) -> list[Path]:
    """Results files as given, a study folder standing for its ``results/*.jsonl``."""
    from introspect.options import UsageError

    files = []
    for path in paths:
        found = results_files(path) if path.is_dir() else [path]  # a folder that is no study is refused there
        if not found:
            raise UsageError(f"study {path} has no results yet (results/*.jsonl)")
        files += found
    return files
