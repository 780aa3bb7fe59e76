"""How the experience's chat H_t is written: as the paper has it, or as the original code sends it.

Paper 3.2.1: H_t = P_j ⊕ X_i ⊕ (o_0, ~a_0, a_0, o_1, ..., o_t). The task instance P_j is the
task description and the instance's objective ("a generic abstract description and a
concrete task instance with an objective", 3.1), X_i the plan, o_0 the env's first
observation ("the agent's current and visible locations" in ALFWorld); then each thought
~a_t, each formalized action a_t (eq. 5) and each observation o_t. The experience H_T that
SIR reflection reads ends with the last observation o_T.

The paper's full prompts (Figures 6-8) are images, so the wording is the original code's:
ALFWorld's instance says "Game Starts:", then "Game Objective: <objective>." and o_0 (the
game's first observation without its "Your task is to: ..." line, which the objective
states); an observation reads "Observation: ..." in ALFWorld and "Observation:\\n..." in
HotpotQA; HotpotQA's instance ends with its env's "Question: ...".

Context.transcript="original" (the default: the original code produced the published
numbers) writes the chat as the original code does where it differs from the paper
(Context.transcript="paper"):
- ALFWorld's o_0 is the original's state summary instead of the game's observation: "You
  arrive at the middle of a room.\\nYou have not been to cabinet 1, ... .\\nYou are taking
  nothing with you." (every place the agent can go to; the original updates this state
  after each step but only ever sends this first one);
- ALFWorld's chat keeps the free-form action a'_t, not the formalized a_t (the original's
  HotpotQA code keeps a_t, as the paper);
- the last observation o_T is not in the experience: the original's loop ends before it
  sends it, except at ALFWorld's step cap, where it asks one more thought about it;
- HotpotQA: a formalized action that is none of search[...], lookup[...], finish[...] is
  answered "No action in the format of ..." without "Observation:";
- ALFWorld: a ``look`` observation is cut to its first sentence.
Which of these apply to an env is its variant's ``quirks`` (nodes.autoplan.variants); the
generic variant has none, so other envs' chats are the paper's under both settings.
Not reproduced: the original ends an ALFWorld episode when the free-form action contains
"quit".
"""

from __future__ import annotations

import re
from typing import Any, Literal

from envs.base import Interface
from nodes.autoplan import prompting as text
from nodes.autoplan.state import CollectState
from nodes.autoplan.variants import variant

Transcript = Literal["paper", "original"]
LOCATION = re.compile(r"You are in (.+)\. Looking quickly around you")
NEXT_TO_IT = "Next to it"  # in ALFWorld's answer to "look"


def original(env: str, transcript: str, quirk: str) -> bool:
    """Whether the chat is written with the original's ``quirk`` (nodes.autoplan.variants)."""
    return transcript == "original" and quirk in variant(env).quirks


def opening(env: str, observation: str, info: dict[str, Any], transcript: str) -> str:
    """o_0 as the chat shows it (see the module docstring)."""
    goal_line = variant(env).goal_line
    if goal_line is None:
        return observation
    scene = goal_line.sub("", observation).strip()
    if original(env, transcript, "state_summary"):
        return state_summary(env, scene, info.get("admissible_commands") or [])
    return scene


def state_summary(env: str, scene: str, admissible: list[str]) -> str:
    """The original's opening state: where the agent is, every place it can go, no object."""
    found = LOCATION.search(scene)
    places = [command[len("go to ") :] for command in admissible if command.startswith("go to ")]
    location = found.group(1).strip() if found else "the middle of a room"
    return text.render(env, "state_summary", location=location, places=", ".join(places))


def instance_prompt(
    env: str,
    interface: Interface,
    plan: str,
    opening_text: str,
    goal: str,
    task_type: str = "",
    examples: str = "",
    intro: str = "",
) -> str:
    """P_j ⊕ X_i ⊕ o_0: the task description, the custom prompt X_i (the plan, or a
    baseline's few-shot examples), the objective and the first observation."""
    spacing = variant(env).spacing
    if plan.strip():
        before, after = spacing.plan
        section = before + text.render(env, "plan_section", plan=plan.strip()) + after
    elif examples:  # as read: the original keeps the examples' own last newline
        before, after = spacing.examples
        section = before + text.render(env, "examples_section", examples=examples) + after
    else:
        section = spacing.without
    return text.render(
        env,
        "instance",
        description=text.description(env, interface, [task_type], intro),
        plan_section=section,
        observation=opening_text,
        objective=text.objective(env, goal),
    )


def observation_turn(env: str, observation: str, command: str, transcript: str) -> str:
    """o_t as the chat shows it after action ``command``."""
    actions = variant(env).actions
    if original(env, transcript, "no_action_sentence") and actions and not actions.fullmatch(command.strip()):
        return text.render(env, "no_action")
    if original(env, transcript, "short_look") and NEXT_TO_IT in observation:
        observation = observation[: observation.find(". ") + 1]
    return text.render(env, "observation", observation=observation)


def action_in_chat(env: str, raw_action: str, command: str, transcript: str) -> str:
    """What the chat keeps after "Action:": a_t, or the original ALFWorld's a'_t."""
    return raw_action if original(env, transcript, "free_form_action") else command


def keeps_last_observation(transcript: str) -> bool:
    """Whether o_T closes the experience (the paper's H_T) or is left out (the original)."""
    return transcript != "original"


def thinks_after_cap(env: str, transcript: str, state: CollectState) -> bool:
    """Whether the original ALFWorld asks one more thought, about the observation at the
    step cap (``state`` is the collection's after a step; the thought then ends it)."""
    return (
        original(env, transcript, "think_at_cap")
        and state.get("stop_reason") == "max_actions"
        and not state.get("success")
    )
