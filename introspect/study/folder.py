"""Where a study folder keeps what the commands read back: its spec, results files and checkpoints.

Below the study's run (introspect.study.run writes the folder) and the commands that find runs
in it (introspect.finding for ``view`` and ``export``, the report): they read the folder's layout
here, so finding a run does not import the machinery that runs a study, which itself writes the
report and the viewer's pages.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from introspect.study.spec import StudyError

SPEC = "spec.toml"  # the spec as given, which marks a folder as a study's


def checkpoint_url(folder: Path, checkpoint: str | None) -> str:
    """Where a study's runs keep their checkpoints: the study's ``checkpoint``, else the folder's
    own ``checkpoints.sqlite`` (export and the viewer read them there too)."""
    return checkpoint or f"sqlite:///{(folder / 'checkpoints.sqlite').resolve()}"


def folder_checkpoint(folder: Path) -> str:
    """The checkpoints of the study in ``folder``, from its spec as given."""
    spec = tomllib.loads((folder / SPEC).read_text(encoding="utf-8"))
    return checkpoint_url(folder, spec.get("checkpoint"))


def results_files(folder: Path) -> list[Path]:
    """The study's results files, in name order (a study folder is known by its spec.toml)."""
    if not (folder / SPEC).is_file():
        raise StudyError(f"{folder} is not a study folder (no {SPEC})")
    return sorted((folder / "results").glob("*.jsonl"))
