"""The README stays a short front page (what Introspect is, setup, the main job, the demos, links
to the docs), its links lead to files of the repository, the Python API page's first example
runs as written, and nothing in the repository points at a file outside it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
API = ROOT / "docs" / "api.md"
MAX_BYTES = 8_000  # under 8 KB: everything else lives on the documentation site

# Files a user of the repository cannot read: the starting design and the data folder that sat
# beside the repository while it was built. Spelled in pieces so that this file does not match.
OUTSIDE = re.compile("|".join(["DESIGN" + r"\.md", "shared" + "/", "project " + "workspace"]), re.IGNORECASE)


def _python_block(text: str) -> str:
    start = text.index("```python\n") + len("```python\n")
    return text[start : text.index("```", start)]


def test_the_readme_is_under_8_kb():
    assert README.stat().st_size <= MAX_BYTES, README.stat().st_size


def test_the_readme_links_to_files_of_the_repository():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert "docs/architecture.md" in local and "docs/cli.md" in local
    assert [link for link in local if not (ROOT / link).is_file()] == []


def test_no_file_of_the_repository_refers_to_a_file_outside_it():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    found = []
    for name in filter(None, listed):
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary data, or deleted in the work tree
        found += [f"{name}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert found == []


@pytest.mark.slow
def test_the_python_api_example_runs_as_written(tmp_path):
    """The example runs LASER with a SQLite checkpointer and a scripted model from any folder (an
    empty one here): it finds the demo's replies in the installed package, nothing copied."""
    code = _python_block(API.read_text(encoding="utf-8"))
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    promised = re.search(r"print\(.*\)  # (.+)", code).group(1)  # what the example says it prints
    assert ran.stdout.strip() == promised == "1.0 click[Buy Now]"
    assert (tmp_path / "runs.sqlite").stat().st_size > 0
