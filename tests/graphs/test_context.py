"""Settings: the shared Context and one class per method, validated from their field metadata
(one place for types, ranges and choices, used by the CLI, by from_dict and by a graph that
receives a context dict from Studio), each field holding its real default."""

from __future__ import annotations

from dataclasses import fields

import pytest

from graphs import method_named, methods
from introspect.evaluate import changed_settings, fingerprint
from nodes.autoplan.context import AutoPlanContext
from nodes.da.context import DAContext
from nodes.laser.context import LaserContext
from nodes.runtime.context import Context, ContextError
from nodes.sr.context import SRContext

LASER, AUTOPLAN = method_named("laser"), method_named("autoplan")


@pytest.mark.parametrize(
    "cls,values,message",
    [
        (LaserContext, {"max_actions": "abc"}, "max_actions='abc' is not allowed: expected an integer >= 1"),
        (LaserContext, {"max_actions": -3}, "max_actions=-3 is not allowed: expected an integer >= 1"),
        (LaserContext, {"max_actions": None}, "max_actions=None is not allowed: expected an integer >= 1"),
        (DAContext, {"max_actions": 2.5}, "expected an integer >= 1"),
        (LaserContext, {"tool_mode": "bogus"}, "tool_mode='bogus' is not allowed: expected one of tools, json"),
        (SRContext, {"planning": "random"}, "expected one of staged, iterative"),
        (Context, {"max_tokens": -5}, "max_tokens=-5 is not allowed: expected an integer >= 1"),
        (Context, {"max_tokens": None}, "expected an integer >= 1"),
        (DAContext, {"temperature": -0.5}, "temperature=-0.5 is not allowed: expected a number >= 0.0"),
        (LaserContext, {"backup": "yes"}, "backup='yes' is not allowed: expected true or false"),
        (Context, {"env_options": ["a"]}, "env_options=['a'] is not allowed: expected an object"),
        (Context, {"timeout": 0}, "timeout=0 is not allowed"),
        (Context, {"retries": 99}, "retries=99 is not allowed: expected an integer from 0 to 50"),
        (Context, {"model": "gpt-4o"}, "model: malformed model spec 'gpt-4o'"),
        (AutoPlanContext, {"max_actions": {"alfworld": 0}}, "expected an object of integers >= 1"),
        (AutoPlanContext, {"max_actions": "many"}, "expected an object of integers >= 1"),
    ],
)
def test_bad_values_name_the_field_and_what_is_allowed(cls, values, message):
    with pytest.raises(ContextError, match=message.replace("(", r"\(").replace("[", r"\[")) as info:
        cls(**values)
    assert "\n" not in str(info.value)
    if None not in values.values():  # from_dict reads an old thread's null as the default (below)
        with pytest.raises(ContextError):  # the same check when settings are read back from JSON
            cls.from_dict({**cls().to_dict(), **values})


def test_good_values_pass_and_numbers_widen_to_float():
    context = LaserContext(temperature=1, timeout=30, tool_mode="json", env_options={"k": 1})
    assert context.temperature == 1.0 and isinstance(context.temperature, float)
    assert LaserContext.from_dict(context.to_dict()) == context


def test_each_method_has_its_own_class_holding_the_paper_defaults_as_values():
    laser, sr, da, ap = LaserContext(), SRContext(), DAContext(), AutoPlanContext()
    assert (laser.env, laser.max_actions, laser.temperature, laser.backup) == ("webshop", 15, 0.0, True)
    assert (sr.env, sr.max_trials, sr.max_actions, sr.max_stage_actions, sr.temperature) == ("miniwob", 5, 20, 9, 0.5)
    assert (da.env, da.max_actions, da.max_episodes, da.remedies, da.temperature) == ("webarena", 30, 7, 2, 1.0)
    assert (ap.env, ap.steps(), ap.batch_size, ap.iterations, ap.train_top_p) == ("alfworld", 35, 4, 3, 0.9)
    assert AutoPlanContext(env="hotpotqa").steps() == 10
    for method in methods():  # no None-means-default left: every field but top_p (unsent) holds a value
        context = method.context()
        assert all(getattr(context, f.name) is not None for f in fields(context) if f.name != "top_p")
        assert context.env == method.default_env


def test_a_method_has_only_its_own_settings():
    assert "remedies" not in LaserContext.field_names() and "planning" not in LaserContext.field_names()
    assert "backup" not in DAContext.field_names()
    own = {m.name: {f.name for f in m.context.own_fields()} for m in methods()}
    assert own["laser"] == {
        "max_actions",
        "backup",
        "backtracking",
        "backup_check",
        "customise",
        "detail_text",
        "history_shown",
        "argument_enums",
        "tool_mode",
    }
    assert "max_episodes" in own["devils_advocate"] and "max_trials" in own["structured_reflection"]
    assert {"plan", "batch_size", "iterations"} <= own["autoplan"]
    with pytest.raises(TypeError):
        LaserContext(remedies=3)  # type: ignore[call-arg]


def test_every_field_is_described_and_timeouts_do_not_change_results():
    for method in methods():
        assert all(f.metadata.get("description") for f in fields(method.context)), method.name
    settings = LaserContext().result_settings()
    assert "timeout" not in settings and "retries" not in settings and "max_actions" in settings


def test_a_setting_given_at_its_default_is_the_same_configuration():
    """The fingerprint is over effective values: giving the default changes nothing."""
    plain = LaserContext(model="openai:gpt-4o-mini")
    explicit = LaserContext(model="openai:gpt-4o-mini", max_actions=15, backup=True, temperature=0.0)
    assert fingerprint(LASER, plain) == fingerprint(LASER, explicit)
    assert changed_settings(explicit) == {}
    assert fingerprint(LASER, plain) != fingerprint(LASER, LaserContext(model="openai:gpt-4o-mini", max_actions=14))
    ap = AutoPlanContext(env="hotpotqa")
    assert fingerprint(AUTOPLAN, ap) == fingerprint(
        AUTOPLAN, AutoPlanContext(env="hotpotqa", max_actions={"hotpotqa": 10})
    )
    assert changed_settings(AutoPlanContext(env="hotpotqa", max_actions={"hotpotqa": 4})) == {
        "max_actions": {**AutoPlanContext.default("max_actions"), "hotpotqa": 4}
    }


def test_a_thread_written_with_the_one_context_for_all_methods_still_loads():
    """Before the split, a thread stored all 39 fields, null meaning the paper's default."""
    old = {
        "model": "scripted:demo.jsonl",
        "temperature": None,
        "top_p": None,
        "max_tokens": 512,
        "tool_mode": "tools",
        "timeout": 120.0,
        "retries": 4,
        "confirm": False,
        "env": "webshop",
        "env_options": {},
        "max_actions": None,
        "max_trials": None,
        "remedies": None,
        "backup": False,
        "planning": "staged",
        "plan": "",
        "batch_size": 4,
    }
    laser = LaserContext.from_dict(old)
    assert (laser.max_actions, laser.temperature, laser.backup, laser.model) == (15, 0.0, False, "scripted:demo.jsonl")
    da = DAContext.from_dict({**old, "env": "webarena", "max_actions": 12})
    assert (da.max_actions, da.remedies, da.temperature) == (12, 2, 1.0)


def test_each_graph_takes_its_method_class_and_studio_shows_its_fields_with_defaults():
    """LangGraph builds the method's class from the dict a Studio run passes."""
    from graphs import compiled, studio_graphs

    for name, (method, attribute) in studio_graphs().items():
        graph = compiled(method, attribute)
        assert graph.builder.context_schema is method.context, name
        schema = graph.get_context_jsonschema()
        assert set(schema["properties"]) == set(method.context.field_names()), name
    schema = compiled(*studio_graphs()["laser"]).get_context_jsonschema()
    assert schema["properties"]["max_actions"]["default"] == 15
    assert "transitions" in schema["properties"]["max_actions"]["description"]
    assert "remedies" not in schema["properties"]
    from graphs.laser import graph

    with pytest.raises(ContextError, match="max_actions"):
        graph.invoke({"task_id": "0"}, context={"max_actions": "abc"})


def test_autoplan_hands_alfworld_the_originals_refusals_and_its_think():
    assert AutoPlanContext(env="alfworld").env_settings() == {"feedback_wording": "original", "react_think": False}
    table6 = AutoPlanContext(env="alfworld", feedback_wording="table6").env_settings()
    assert table6 == {"feedback_wording": "table6", "react_think": False}
    given = AutoPlanContext(env="alfworld", env_options={"react_think": True, "feedback_wording": "table6"})
    assert given.env_settings() == {"feedback_wording": "table6", "react_think": True}  # the env's own options win
    assert LaserContext(env="alfworld").env_settings() == {}


def test_autoplan_hands_hotpotqa_the_originals_judge_and_no_other_method_does():
    code = {"augmented_feedback": True}  # a search miss in the words of AutoPlan's code
    assert AutoPlanContext(env="hotpotqa").env_settings() == {"judge": "openai:gpt-4-0314", **code}
    assert AutoPlanContext(env="hotpotqa", judge="off").env_settings() == {"judge": "off", **code}
    given = AutoPlanContext(env="hotpotqa", env_options={"judge": "run", "backend": "local"})
    assert given.env_settings() == {"judge": "run", "backend": "local", **code}  # the env's own option wins
    assert AutoPlanContext(env="webshop").env_settings() == {}
    assert LaserContext(env="hotpotqa").env_settings() == {} and DAContext(env="hotpotqa").env_settings() == {}
    with pytest.raises(ContextError, match="judge"):
        AutoPlanContext(env="hotpotqa", judge="gpt4")


def test_a_per_env_limit_naming_no_env_of_the_method_is_refused():
    with pytest.raises(ContextError, match="max_actions names no env of AutoPlan's: nosuchenv"):
        AutoPlanContext(env="alfworld", max_actions={"nosuchenv": 3})
    assert AutoPlanContext(env="alfworld", max_actions={"alfworld": 3}).steps() == 3
