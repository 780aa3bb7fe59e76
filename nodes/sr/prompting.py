"""Which prompt an env gets: the paper's own where it wrote one, else the generic one.

The paper wrote its planning, paraphrase and reflection prompts for MiniWoB (Appendices B-E);
they live at ``prompts/structured_reflection/miniwob/<name>.md`` and are rendered byte for byte
as the paper has them. Every other env gets ``prompts/structured_reflection/<name>.md``, the same
prompt in the paper's words with the env's own text filled in from its ``Interface``: its
introduction (a task's own ``info["intro"]`` first), its action grammar in words and, where a task
ends with an answer, the answer action. A prompt is picked by the folder of the env's view
(``Interface.name``) existing, never by testing env names; the prompts both share (statuses,
lessons, instructions) have one file.
"""

from __future__ import annotations

import prompts
from envs.base import Interface

METHOD = "structured_reflection"


def prompt_name(interface: Interface, name: str) -> str:
    """``structured_reflection/<view>/<name>`` when the paper wrote that prompt for the env's view."""
    return prompts.variant(METHOD, interface.name, name)


def render(interface: Interface, name: str, **values: object) -> str:
    return prompts.render(prompt_name(interface, name), **values)


def actions_text(interface: Interface) -> str:
    """The env's actions in words: its grammar, and its answer action unless the grammar has it."""
    if not interface.answer_action:
        return interface.grammar
    head = interface.answer_action.split("{answer}", 1)[0]
    if head in interface.grammar:
        return interface.grammar
    example = interface.answer_action.format(answer="answer")
    return f"{interface.grammar}\n- {example}: give your final answer, which ends the task"
