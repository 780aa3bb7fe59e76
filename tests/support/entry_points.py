"""Methods registered as a user's package registers them: a distribution whose
``introspect.methods`` entry points name them (graphs' module docstring), here an installed
distribution's ``.dist-info`` folder written into a test's temporary folder and put first on
the path, of this process (``sys.path``) and of the children it starts (``PYTHONPATH``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DISTRIBUTION = "introspect_test_methods-0.dist-info"


def install_methods(monkeypatch: pytest.MonkeyPatch, folder: Path, **methods: str) -> Path:
    """Install a distribution in ``folder`` whose entry points register ``methods`` (method
    name -> the value of its entry point: the module declaring METHOD), for this test only."""
    info = folder / DISTRIBUTION
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: introspect-test-methods\nVersion: 0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in methods.items())
    (info / "entry_points.txt").write_text(f"[introspect.methods]\n{lines}")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    return folder
