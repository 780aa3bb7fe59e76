"""What a run leaves on disk, searched for secrets: every file under a directory (SQLite
checkpoints and their -wal/-shm files, results, logs, and whatever a later feature writes
there, such as recordings or viewer pages), read as bytes."""

from __future__ import annotations

from pathlib import Path


def files_under(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


def leaks(directory: Path, secrets: list[str]) -> list[str]:
    """``file: secret`` for every file under ``directory`` that holds one of ``secrets``."""
    found = []
    for path in files_under(directory):
        blob = path.read_bytes()
        found += [f"{path.relative_to(directory)}: {s!r}" for s in secrets if s.encode() in blob]
    return found
