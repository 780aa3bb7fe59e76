"""ReAct's settings: the shared ones plus a step cap. A module of its own, as each shipped
method keeps its class in its node package: Studio loads a graph module by its file path,
outside ``sys.modules``, where a dataclass cannot be defined."""

from __future__ import annotations

from dataclasses import dataclass

from nodes.runtime.context import Context, env, setting


@dataclass(kw_only=True)
class ReactContext(Context):
    """The shared settings plus ReAct's own: a step cap (its graphs' context_schema)."""

    env: str = env("webshop")
    max_actions: int = setting(10, "actions per task", min=1)
