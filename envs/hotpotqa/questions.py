"""HotpotQA's questions and the splits the env offers over them.

Shipped (no file given): the first 100 dev questions (distractor setting). ``dev`` is all of
them, ``train`` their last 20 (AutoPlan's training questions, at most half the file) and
``test`` the first 80, so evaluation never sees a training question. That is this project's
split of a small sample, not the paper's.

The paper's setting (AutoPlan, Sec. 4.1): 50 hard questions drawn at random from HotpotQA's
training set to train on, 200 drawn from its dev set to test on. Given the official files
(``questions`` = hotpot_dev_distractor_v1.json, ``train_questions`` = hotpot_train_v1.1.json)
the env draws them with a seeded generator, the same ones for the same seed: ``train`` is
the 50, ``test`` the 200, ``dev`` the whole dev file. (AutoPlan's released code instead reads
the first 300 questions of each file that its Wikipedia search could open every context page
of, in file order; that filter needs live Wikipedia.)
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.base import DATA_ROOT, EnvError
from envs.datasets import installed

SHIPPED_QUESTIONS = DATA_ROOT / "hotpotqa" / "hotpot_dev_distractor_v1_first100.json.gz"
FULL_DEV = "hotpot_dev_distractor_v1.json"  # of the installed full data (envs.datasets)
SHIPPED_TRAIN = 20  # the shipped file's training split: its last 20 questions (at most half of them)
PAPER_TRAIN = 50  # hard training questions the paper trains on
PAPER_TEST = 200  # dev questions the paper tests on
SHIPPED_SPLIT = "shipped 100 dev questions: train = the last 20, test = the first 80 (not the paper's draw)"


def questions_file(path: str | Path | None = None) -> Path:
    """The questions file: ``path``, else the dev set ``introspect data get hotpotqa``
    installed, else the shipped 100 dev questions (blocking: a stat)."""
    if path:
        return Path(path)
    full = installed("hotpotqa")
    return full / FULL_DEV if full else SHIPPED_QUESTIONS


def load_questions(path: str | Path | None = None) -> list[dict[str, Any]]:
    """Questions in the official HotpotQA schema, from a .json or .json.gz file (``questions_file``)."""
    source = questions_file(path)
    if not source.is_file():
        raise EnvError(f"HotpotQA questions file {str(source)!r} does not exist")
    opener = gzip.open if source.suffix == ".gz" else open
    try:
        with opener(source, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EnvError(f"{source} is not a HotpotQA file ({type(exc).__name__})") from None
    if not isinstance(data, list) or not all(isinstance(q, dict) and "_id" in q for q in data):
        raise EnvError(f"{source} is not a HotpotQA file (a list of records with _id)")
    return data


def draw(pool: list[str], size: int, seed: int, what: str) -> list[str]:
    """``size`` ids drawn from ``pool`` by a generator of its own seeded with ``seed``."""
    if len(pool) < size:
        raise EnvError(f"the paper's split draws {size} {what}, but the file has {len(pool)}")
    return random.Random(seed).sample(pool, size)


@dataclass
class QuestionSet:
    """The loaded questions by id and the ids of each split (file order unless drawn)."""

    by_id: dict[str, dict[str, Any]]
    dev: list[str]
    train: list[str]
    test: list[str]
    caveat: str = ""  # what the split is, when it is not the paper's draw

    @classmethod
    def load(cls, questions: str | None, train_questions: str | None, seed: int) -> QuestionSet:
        """The shipped split, or the paper's draw when the official training file is given."""
        dev_records = load_questions(questions)
        dev = [q["_id"] for q in dev_records]
        by_id = {q["_id"]: q for q in dev_records}
        if train_questions is None:
            held_out = min(SHIPPED_TRAIN, len(dev) // 2)
            caveat = (
                SHIPPED_SPLIT
                if questions_file(questions) == SHIPPED_QUESTIONS
                else f"train = the file's last {held_out} questions, test = the others"
            )
            return cls(by_id, dev, dev[len(dev) - held_out :], dev[: len(dev) - held_out], caveat)
        training = {q["_id"]: q for q in load_questions(train_questions)}
        hard = [qid for qid, q in training.items() if q.get("level") == "hard"]
        train = draw(hard, PAPER_TRAIN, seed, "hard training questions")
        test = draw(dev, PAPER_TEST, seed, "dev questions")
        by_id.update({qid: training[qid] for qid in train})  # only the drawn ones: the file is large
        return cls(by_id, dev, train, test)
