"""Every shipped prompt renders with all its placeholders filled, and only then."""

from __future__ import annotations

import re

import pytest

import prompts


def test_prompts_are_shipped():
    assert "laser/item_state" in prompts.names()


@pytest.mark.parametrize("name", prompts.names())
def test_every_prompt_renders_with_named_placeholders(name):
    fields = prompts.placeholders(name)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", f) for f in fields), fields
    values = {key: f"<{key.upper()}-VALUE>" for key in fields}
    text = prompts.render(name, **values)
    assert all(value in text for value in values.values())


def test_a_missing_placeholder_is_refused():
    with pytest.raises(prompts.PromptError, match="observation"):
        prompts.render("laser/observation", history="none")


def test_unknown_and_escaping_names_are_refused():
    with pytest.raises(prompts.PromptError):
        prompts.load("laser/nope")
    with pytest.raises(prompts.PromptError):
        prompts.load("../pyproject")
