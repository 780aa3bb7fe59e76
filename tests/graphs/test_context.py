"""Context validation from its field metadata: one place for types, ranges and choices,
used by the CLI, by Context.from_dict and by a graph that receives a context dict (Studio)."""

from __future__ import annotations

from dataclasses import fields

import pytest

from nodes.context import Context, ContextError


@pytest.mark.parametrize(
    "values,message",
    [
        ({"max_actions": "abc"}, "max_actions='abc' is not allowed: expected an integer >= 1, or null"),
        ({"max_actions": -3}, "max_actions=-3 is not allowed: expected an integer >= 1"),
        ({"max_actions": 2.5}, "expected an integer >= 1"),
        ({"tool_mode": "bogus"}, "tool_mode='bogus' is not allowed: expected one of tools, json"),
        ({"planning": "random"}, "expected one of staged, iterative"),
        ({"max_tokens": -5}, "max_tokens=-5 is not allowed: expected an integer >= 1"),
        ({"max_tokens": None}, "expected an integer >= 1"),
        ({"temperature": -0.5}, "temperature=-0.5 is not allowed: expected a number >= 0.0, or null"),
        ({"backup": "yes"}, "backup='yes' is not allowed: expected true or false"),
        ({"env_options": ["a"]}, "env_options=['a'] is not allowed: expected an object"),
        ({"timeout": 0}, "timeout=0 is not allowed"),
        ({"retries": 99}, "retries=99 is not allowed: expected an integer from 0 to 50"),
        ({"model": "gpt-4o"}, "model: malformed model spec 'gpt-4o'"),
    ],
)
def test_bad_values_name_the_field_and_what_is_allowed(values, message):
    with pytest.raises(ContextError, match=message.replace("(", r"\(").replace("[", r"\[")) as info:
        Context(**values)
    assert "\n" not in str(info.value)
    with pytest.raises(ContextError):  # the same check when a Context is read back from JSON
        Context.from_dict({**Context().to_dict(), **values})


def test_good_values_pass_and_numbers_widen_to_float():
    context = Context(temperature=1, max_actions=None, timeout=30, tool_mode="json", env_options={"k": 1})
    assert context.temperature == 1.0 and isinstance(context.temperature, float)
    assert Context.from_dict(context.to_dict()) == context


def test_every_field_is_described_and_timeouts_do_not_change_results():
    assert all(f.metadata.get("description") for f in fields(Context))
    settings = Context().result_settings()
    assert "timeout" not in settings and "retries" not in settings and "max_actions" in settings


def test_studio_style_context_dict_is_validated_by_the_graph():
    """LangGraph builds Context(**context) from the dict a Studio run passes."""
    from graphs.laser import graph

    with pytest.raises(ContextError, match="max_actions"):
        graph.invoke({"task_id": "0"}, context={"max_actions": "abc"})
    schema = graph.get_context_jsonschema()
    assert "actions" in schema["properties"]["max_actions"]["description"]
