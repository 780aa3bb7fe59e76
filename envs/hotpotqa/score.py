"""HotpotQA answer scoring: the official exact match and F1, and a model judge.

``normalize_answer``, ``exact_match`` and ``f1`` follow the official evaluation script
(hotpot_evaluate_v1.py): lowercase, drop punctuation, drop the articles a/an/the, collapse
whitespace; F1 over tokens, and 0 when exactly one side is yes/no/noanswer and they differ.

AutoPlan reports human judgement instead, because a correct answer can differ in form from the
gold one; ``judged_correct`` stands in for the annotators with a model (the env's ``judge``),
asked with the yes/no prompt AutoPlan's own code scores with (``HotpotQA.score`` in its
``tasks/hotpotqa.py``; prompts/hotpotqa/judge.md) and greedy decoding, as there. As there, every
answer is asked about, an exact match too, and the reply is read as the code reads it: correct
when "yes" is anywhere in it, lower-cased (so "no, not yes" is correct, as it is there).
"""

from __future__ import annotations

import asyncio
import re
import string
from collections import Counter

import prompts
from envs.base import Judge

SPECIAL = ("yes", "no", "noanswer")


def normalize_answer(text: str) -> str:
    """The official normalisation (lower, no punctuation, no articles, single spaces)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(predicted: str, gold: str) -> bool:
    return normalize_answer(predicted) == normalize_answer(gold)


def f1(predicted: str, gold: str) -> float:
    """Token F1 after normalisation, with the official yes/no/noanswer rule."""
    pred, truth = normalize_answer(predicted), normalize_answer(gold)
    if (pred in SPECIAL or truth in SPECIAL) and pred != truth:
        return 0.0
    common = Counter(pred.split()) & Counter(truth.split())
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred.split())
    recall = same / len(truth.split())
    return 2 * precision * recall / (precision + recall)


async def judged_correct(question: str, gold: str, predicted: str, judge: Judge) -> bool:
    """Does ``predicted`` answer ``question`` as ``gold`` does? The judge is asked, an exact
    match too, and says yes when "yes" is anywhere in its reply (``'yes' in reply.lower()``)."""
    # the template is read from disk the first time: not on the event loop
    prompt = await asyncio.to_thread(
        prompts.render, "hotpotqa/judge", question=question, gold=gold, predicted=predicted
    )
    return "yes" in (await judge(prompt)).lower()
