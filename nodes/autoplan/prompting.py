"""AutoPlan's prompts per environment, and the chat messages they are sent as.

The paper writes its prompts per environment (Table 2 is ALFWorld's; Figures 6-8 give
both ALFWorld's and HotpotQA's, as images). Every prompt is worded as the original code
words it, byte for byte (it produced the published numbers); where Table 2 words one
otherwise (ALFWorld's Flaw and Upd prompts), Context.prompt_wording="paper" takes the
paper's (``worded``). A prompt lives
at ``prompts/autoplan/<variant>/<name>.md`` where the paper's environments differ
(nodes.autoplan.variants) and at ``prompts/autoplan/<name>.md`` otherwise; ``render`` picks
the variant's first. Every other env gets the generic prompts, filled from its Interface
(``interface_values``): the same Table 2 wording, with "task" for "game".
The experience is one growing chat, as in the paper's H_t = P ⊕ X ⊕ (o_0, ~a_0, a_0, o_1,
...) (written by nodes.autoplan.transcript): reflection continues that same chat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from envs.base import Interface
from nodes.autoplan.state import Experience, Turn
from nodes.autoplan.variants import variant


def prompt_name(env: str, name: str) -> str:
    """``autoplan/<variant>/<name>`` when the env's variant has its own version, else the
    generic ``autoplan/<name>``."""
    return prompts.variant("autoplan", variant(env).prompts, name)


def render(env: str, name: str, **values: object) -> str:
    return prompts.render(prompt_name(env, name), **values)


def worded(env: str, name: str, wording: str, **values: object) -> str:
    """Prompt ``name`` in the run's Context.prompt_wording: the paper's words where the
    variant has them (``<name>_paper``: Table 2's ALFWorld Flaw and Upd prompts) when
    ``wording`` is "paper", else the original code's."""
    paper = prompts.variant("autoplan", variant(env).prompts, f"{name}_paper")
    chosen = paper if wording == "paper" and paper in prompts.SHIPPED else prompt_name(env, name)
    return prompts.render(chosen, **values)


def system_prompt(env: str) -> str | None:
    """ALFWorld's agent gets a system message; HotpotQA's and the generic one do not."""
    name = prompts.variant("autoplan", variant(env).prompts, "system")
    return None if name == "autoplan/system" else prompts.load(name)


def interface_values(interface: Interface, intro: str = "") -> dict[str, str]:
    """What the generic prompts say about an env, from its Interface: its introduction (the
    task's own ``intro`` when it has one), its action grammar in words and, where a task ends
    with an answer, the action that gives it (a bullet after the grammar)."""
    answer = ""
    if interface.answer_action:
        action = interface.answer_action.replace("{answer}", "answer")
        answer = "\n" + prompts.render("autoplan/answer", action=action)
    return {"intro": (intro or interface.intro).strip(), "grammar": interface.grammar, "answer": answer}


def description(env: str, interface: Interface, task_types: Sequence[str] = (), intro: str = "") -> str:
    """The task description: the paper's for its envs (ALFWorld's ends with the job of the task
    type, "You job is to Heat some object and put it in/on some receptacle.", the original's
    words, left out when the types differ in a batch or are unknown), else the generic one
    filled from the env's Interface."""
    text = render(env, "description", **interface_values(interface, intro))
    kinds = set(task_types)
    if len(kinds) == 1 and (job := variant(env).jobs.get(kinds.pop())):
        text += "\n" + render(env, "job", job=job)
    return text


def objective(env: str, goal: str) -> str:
    """A task's objective as the prompts state it: ALFWorld's without its full stop (the
    original's "Game Objective: ...." and "You job is to ..." read it so), else as given."""
    return goal.strip().rstrip(".").strip() if variant(env).trims_objective else goal.strip()


def thought_prompt(env: str, plan: str) -> str:
    """Table 2's Thought-prompt with a plan; ReAct zero-shot's plain one without."""
    return render(env, "thought" if plan.strip() else "thought_no_plan")


def outcome(env: str, success: bool, stop_reason: str, detail: str = "") -> str:
    """The result sentence, e.g. "Job failed. Maximum number of steps reached."."""
    table = variant(env).outcomes
    key = "success" if success else ("max_actions" if stop_reason == "max_actions" else "failure")
    return f"{table[key]} {detail}".strip()


def gold_detail(env: str, question: dict | None) -> str:
    """HotpotQA training sees the gold answer and the supporting pages (the paper's training
    triples: question, answer, supporting facts); other envs have nothing to add."""
    if not variant(env).shows_reference or not question or "answer" not in question:
        return ""
    titles = list(dict.fromkeys(str(fact[0]) for fact in question.get("supporting_facts") or []))
    quoted = [f'"{t}"' for t in titles] or ["unknown"]
    entities = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    return render(env, "gold", answer=question["answer"], entities=entities)


def with_user(turns: Sequence[Turn], text: str) -> list[Turn]:
    """``turns`` followed by a user message ``text`` (merged into a trailing user turn)."""
    out = list(turns)
    if out and out[-1]["role"] == "user":
        out[-1] = Turn(role="user", content=f"{out[-1]['content']}\n{text}")
    else:
        out.append(Turn(role="user", content=text))
    return out


def chat(env: str, turns: Sequence[Turn]) -> list[BaseMessage]:
    """LangChain messages for ``turns``, led by the env's system prompt."""
    system = system_prompt(env)
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    for turn in turns:
        cls = HumanMessage if turn["role"] == "user" else AIMessage
        messages.append(cls(turn["content"]))
    return messages


def first_line(text: str) -> str:
    """The first non-empty line (of a formalizer's reply, which names one command)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def asks_flaw(env: str, plan: str) -> bool:
    """Whether SIR asks for flaws: ALFWorld's (and the generic) Flaw prompt asks about the plan
    and the actions, so always; HotpotQA's only about the plan, so only when there is one (the
    original)."""
    return not variant(env).flaw_needs_plan or bool(plan.strip())


def asks_revision(plan: str) -> bool:
    """The Rev prompt revises the plan, so it is asked only when there is one (the original:
    not in the first iteration, which starts from no plan)."""
    return bool(plan.strip())


def experience_block(env: str, number: int, experience: Experience, reflection: Mapping[str, Any]) -> str:
    """One (P_j, s_j, f_j, r_j) entry of the Upd-prompt (paper eq. 9), numbered from 0 as the
    original numbers its jobs. The lines about the
    plan (``experience_plan``: ALFWorld's revision, HotpotQA's flaws and revision) appear only
    when the experience had a plan, as in the original, which asks for them only then."""
    values = dict(
        number=number,
        objective=objective(env, str(experience.get("objective", ""))),
        result="Succeeded" if experience.get("success") else "Failed",
        summary=reflection.get("summary") or "N/A",
        flaw=reflection.get("flaw") or "N/A",
        revision=reflection.get("revision") or "N/A",
    )
    block = render(env, "experience", **values)
    if asks_revision(str(experience.get("plan", ""))):
        block += "\n" + render(env, "experience_plan", **values)
    return block
