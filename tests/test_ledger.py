"""The fidelity ledgers (docs/methods/*-fidelity.md): one per method, linked from its page, and
every setting a ledger names exists in the method's settings with the default it states; a row
that says its default is the code's states the code's value of each number in it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphs import methods

DOCS = Path(__file__).resolve().parents[1] / "docs"
SETTING = re.compile(r"`(\w+)=([^`]+)`")
NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-]|\.\d)")  # not part of a name ("gpt-4-0613")
AS_THE_CODE = ("as the code", "as the harness")  # the status of a row whose default is the code's


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


def numbers(value: object) -> list[float]:
    """The numbers a setting's value holds (a number, or those of a list or a mapping); a boolean
    or a string names a variant, which the ledger describes in words."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [n for item in value.values() for n in numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return []


def code_cell(row: dict[str, str]) -> str:
    """What the row says the original code (or harness) does: its third column, with the paper's
    column when that cell says "the same"."""
    code = list(row.values())[2]
    return f"{code} {row['paper']}" if code.startswith("the same") else code


@pytest.mark.parametrize("method", methods(), ids=lambda m: m.name)
def test_a_row_as_the_code_has_each_number_of_its_setting_at_the_codes_value(method):
    """ "as the code" means the default is the code's value: where the row gives the code's numbers,
    each number of its setting at its default (the setting test checks the default) is among them,
    so a row stating another value than its setting's cannot say "as the code". A code column
    without numbers (the code's behaviour in words, a seed the code does not use) is not read."""
    wrong = []
    for row in ledger_rows(method.name):
        if not row["status"].startswith(AS_THE_CODE):
            continue
        stated = {float(n) for n in NUMBER.findall(code_cell(row))}
        if not stated:
            continue
        for key, value in SETTING.findall(row["setting"]):
            missing = [n for n in numbers(json.loads(value)) if n not in stated]
            if missing:
                wrong.append(f"{row['what']!r}: {key}={value} but the code's column gives {sorted(stated)}")
    assert not wrong, f"{method.name}'s rows marked as the code with another value: " + "; ".join(wrong)


def test_the_codes_value_check_reads_numbers_and_refuses_another():
    row = {"what": "decoding", "paper": "greedy", "original code": "temperature 0.5", "setting": "`temperature=0.0`"}
    assert {float(n) for n in NUMBER.findall(code_cell(row))} == {0.5}
    assert numbers(json.loads('{"alfworld": 35, "hotpotqa": 10}')) == [35.0, 10.0]
    assert numbers(True) == [] and numbers("first_line") == []
    same = {"what": "x", "paper": "at most 15", "original code": "the same", "setting": "`max_actions=15`"}
    assert 15.0 in {float(n) for n in NUMBER.findall(code_cell(same))}
    assert NUMBER.findall("`max_iter = 13`, gpt-4-0613, 200 tokens") == ["13", "200"]
