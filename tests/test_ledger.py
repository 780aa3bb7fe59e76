"""The fidelity ledgers (docs/methods/*-fidelity.md): one per method, linked from its page, and
every setting a ledger names exists in the method's settings with the default it states."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphs import methods

DOCS = Path(__file__).resolve().parents[1] / "docs"
SETTING = re.compile(r"`(\w+)=([^`]+)`")


def ledger_rows(method_name: str) -> list[dict[str, str]]:
    """The ledger's table as rows keyed by its header."""
    lines = [
        line
        for line in (DOCS / "methods" / f"{method_name}-fidelity.md").read_text().splitlines()
        if line.startswith("|")
    ]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split(" | ")))) for line in lines[2:]]


@pytest.mark.parametrize("method", methods(), ids=lambda m: m.name)
def test_each_setting_named_in_the_ledger_exists_with_the_stated_default(method):
    rows = ledger_rows(method.name)
    named = [(key, value) for row in rows for key, value in SETTING.findall(row["setting"])]
    assert named, f"{method.name}'s ledger names no setting"
    for key, value in named:
        assert key in method.context.field_names(), f"{method.name} has no setting {key!r}"
        assert method.context.default(key) == json.loads(value), f"{method.name}: {key} defaults otherwise"


@pytest.mark.parametrize("method", methods(), ids=lambda m: m.name)
def test_the_ledger_covers_every_own_setting_and_is_linked_from_the_method_page(method):
    named = {key for row in ledger_rows(method.name) for key, _ in SETTING.findall(row["setting"])}
    own = {f.name for f in method.context.own_fields()} | {"temperature"}
    assert own <= named, f"settings missing from {method.name}'s ledger: {sorted(own - named)}"
    page = (DOCS / "methods" / f"{method.name}.md").read_text()
    assert f"({method.name}-fidelity.md)" in page
    assert all(row["status"] for row in ledger_rows(method.name))
