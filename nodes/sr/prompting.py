"""Which prompt an env gets: the paper's own where it wrote one, else the generic one.

The paper wrote its planning, paraphrase and reflection prompts for MiniWoB (Appendices B-E);
they live at ``prompts/structured_reflection/miniwob/<name>.md`` and are rendered byte for byte
as the original code has them (it produced the published numbers). Where the paper's appendix
words a prompt otherwise (Appendix A's "If dropdown list is available", Appendix C's "And the
action taken is:"), the paper's text is ``<name>_paper.md``, picked by
``SRContext.prompt_wording="paper"``. Every other env gets ``prompts/structured_reflection/<name>.md``,
the same prompt in the paper's words with the env's own text filled in from its ``Interface``: its
introduction (a task's own ``info["intro"]`` first), its action grammar in words and, where a task
ends with an answer, the answer action. A prompt is picked by the folder of the env's view
(``Interface.name``) existing, never by testing env names; the prompts both share (statuses,
lessons, instructions) have one file.

The original code also has additions for single MiniWoB tasks (``SRContext.task_prompts``, on by
default): its own planning prompt for click-scroll-list, its own paraphrase prompt for the
social-media tasks, and a lesson shown at every planning call of use-autocomplete and
login-user-popup (its ``CUSTOM_REFLECTION_MEMORY``, "sticky" entries ahead of the memory's).
"""

from __future__ import annotations

import prompts
from envs.base import Interface
from nodes.sr.context import SRContext

METHOD = "structured_reflection"

# prompt -> task -> the view's prompt the original code uses for that task instead
TASK_PROMPTS: dict[str, dict[str, str]] = {
    "plan": {"click-scroll-list": "plan_click_scroll_list"},
    "paraphrase": dict.fromkeys(("social-media", "social-media-all", "social-media-some"), "paraphrase_social_media"),
}
# task -> the view's lesson the original code shows at every planning call of that task
STICKY_LESSONS: dict[str, str] = {
    "use-autocomplete": "lesson_use_autocomplete",
    "login-user-popup": "lesson_login_user_popup",
}


def _own(interface: Interface, name: str) -> str | None:
    """``structured_reflection/<view>/<name>`` if the env's view has that prompt, else None."""
    specific = f"{METHOD}/{interface.name}/{name}"
    return specific if interface.name and specific in prompts.SHIPPED else None


def paper_view(interface: Interface) -> bool:
    """Is this an env the paper wrote its prompts for (MiniWoB)? There the original code's
    decoding applies too (nodes/sr/model.py)."""
    return _own(interface, "plan") is not None


def prompt_name(interface: Interface, name: str, context: SRContext | None = None, task: str = "") -> str:
    """The prompt ``name`` for the env's view: a task's own (``context.task_prompts``), the paper's
    wording (``context.prompt_wording``), the view's, else the generic one."""
    if context is not None:
        special = TASK_PROMPTS.get(name, {}).get(task)
        if context.task_prompts and special and (own := _own(interface, special)):
            return own
        if context.prompt_wording == "paper" and (own := _own(interface, f"{name}_paper")):
            return own
    return prompts.variant(METHOD, interface.name, name)


def render(interface: Interface, name: str, context: SRContext | None = None, task: str = "", **values: object) -> str:
    return prompts.render(prompt_name(interface, name, context, task), **values)


def sticky_lessons(interface: Interface, context: SRContext, task: str) -> list[str]:
    """The task's lessons shown at every planning call (the original code's, ``task_prompts``)."""
    own = _own(interface, STICKY_LESSONS[task]) if context.task_prompts and task in STICKY_LESSONS else None
    return [prompts.load(own)] if own else []


def actions_text(interface: Interface) -> str:
    """The env's actions in words: its grammar, and its answer action unless the grammar has it."""
    if not interface.answer_action:
        return interface.grammar
    head = interface.answer_action.split("{answer}", 1)[0]
    if head in interface.grammar:
        return interface.grammar
    example = interface.answer_action.format(answer="answer")
    return f"{interface.grammar}\n- {example}: give your final answer, which ends the task"
