"""Every method's declared interventions (``Method.interventions``, what ``introspect ablate``
switches off): each names a node of the method's graph, and its off-settings are fields of the
method's settings that take the values given, which differ from the defaults (a setting that
switched nothing off would make an ablation that changes nothing) unless the intervention tells
when it happened (AutoPlan's plan, which a run sets)."""

from __future__ import annotations

import dataclasses

import pytest

from graphs import method_named, registry
from graphs.method import Intervention


@pytest.mark.parametrize("name", list(registry()))
def test_each_intervention_is_switched_off_by_a_real_setting(name):
    method = method_named(name)
    nodes = set(method.graph.get_graph().nodes)
    kinds = [i.kind for i in method.interventions]
    assert len(kinds) == len(set(kinds))
    for intervention in method.interventions:
        assert intervention.node in nodes, intervention
        assert set(intervention.off) <= set(method.context.field_names()), intervention
        context = dataclasses.replace(method.context(), **intervention.off)  # validated
        # an off-setting at its default switches off only what a run set otherwise (AutoPlan's plan),
        # so its intervention says when it happened; any other must differ from the default
        at_default = all(getattr(context, k) == method.context.default(k) for k in intervention.off)
        assert not at_default or intervention.fired is not Intervention.fired, intervention


def test_laser_declares_its_backup():
    assert {i.kind: dict(i.off) for i in method_named("laser").interventions}["backup"] == {"backup": False}


@pytest.mark.parametrize("name", list(registry()))
def test_the_base_agent_has_every_intervention_switched_off(name):
    """The equal-cost baseline arm retries the base agent: "without introspection" means without
    each intervention ``introspect ablate`` knows, but LASER's going back (Prev, Back to Search),
    which are WebShop's own buttons: a plain ReAct agent on WebShop has them too."""
    method = method_named(name)
    assert method.base_agent is not None
    for intervention in method.interventions:
        if (name, intervention.kind) != ("laser", "backtrack"):
            assert dict(intervention.off).items() <= dict(method.base_agent.settings).items(), intervention
