"""HotpotQA's questions and the splits the env offers over them.

Shipped (no file given): the first 100 dev questions (distractor setting). ``dev`` is all of
them, ``train`` their last 20 (AutoPlan's training questions, at most half the file) and
``test`` the first 80, so evaluation never sees a training question. That is this project's
split of a small sample, not the paper's.

The paper's setting (AutoPlan, Sec. 4.1): 50 hard questions drawn at random from HotpotQA's
training set to train on, 200 drawn from its dev set to test on. Given the official training
file (``train_questions`` = hotpot_train_v1.1.json, or the one ``introspect data get hotpotqa``
installed beside the dev set the env reads by default) the env draws them with a seeded
generator, the same ones for the same seed: ``train`` is the 50, ``test`` the 200 of the dev
file, ``dev`` the whole dev file. Each draw is made when its split is first asked for (or a
drawn training question is played), so a run that only evaluates never reads the 566 MB
training file. (AutoPlan's released code instead reads the first 300 questions of each file
that its Wikipedia search could open every context page of, in file order; that filter needs
live Wikipedia.)
"""

from __future__ import annotations

import gzip
import json
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.base import DATA_ROOT, EnvError
from envs.datasets import installed

SHIPPED_QUESTIONS = DATA_ROOT / "hotpotqa" / "hotpot_dev_distractor_v1_first100.json.gz"
FULL_DEV = "hotpot_dev_distractor_v1.json"  # of the installed full data (envs.datasets)
FULL_TRAIN = "hotpot_train_v1.1.json"
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


def training_file(path: str | Path | None = None, questions: str | Path | None = None) -> Path | None:
    """The official training file: ``path``, else the one ``introspect data get hotpotqa``
    installed, when the dev set is the installed one too (no ``questions`` given), else None
    (blocking: a stat)."""
    if path:
        return Path(path)
    full = installed("hotpotqa")
    if questions or full is None or not (full / FULL_TRAIN).is_file():
        return None
    return full / FULL_TRAIN


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
    """The loaded questions by id and the ids of each split (file order unless drawn).

    With a training file (``training``) the splits are the paper's seeded draws, each made on
    first use (``train()``, ``test()``); the drawn training questions then join ``by_id``."""

    by_id: dict[str, dict[str, Any]]
    dev: list[str]
    seed: int = 0
    training: Path | None = None
    caveat: str = ""  # what the split is, when it is not the paper's draw
    splits: dict[str, list[str]] = field(default_factory=dict)  # "train", "test" once known
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, questions: str | None, training: str | None, seed: int) -> QuestionSet:
        """The dev file's questions, split as the shipped sample is, or, with the official
        training file, as the paper draws them (see the module docstring)."""
        dev_records = load_questions(questions)
        dev = [q["_id"] for q in dev_records]
        by_id = {q["_id"]: q for q in dev_records}
        if training is not None:
            return cls(by_id, dev, seed, Path(training))
        held_out = min(SHIPPED_TRAIN, len(dev) // 2)
        caveat = (
            SHIPPED_SPLIT
            if questions_file(questions) == SHIPPED_QUESTIONS
            else f"train = the file's last {held_out} questions, test = the others"
        )
        split = {"train": dev[len(dev) - held_out :], "test": dev[: len(dev) - held_out]}
        return cls(by_id, dev, seed, None, caveat, split)

    def train(self) -> list[str]:
        """The training questions: 50 hard ones drawn from the training file, read on first use
        (blocking)."""
        with self.lock:
            if "train" not in self.splits:
                assert self.training is not None
                records = {q["_id"]: q for q in load_questions(self.training)}
                hard = [qid for qid, q in records.items() if q.get("level") == "hard"]
                drawn = draw(hard, PAPER_TRAIN, self.seed, "hard training questions")
                self.by_id.update({qid: records[qid] for qid in drawn})  # only the drawn ones: the file is large
                self.splits["train"] = drawn
            return self.splits["train"]

    def test(self) -> list[str]:
        """The test questions: 200 drawn from the dev file (or the shipped split's)."""
        with self.lock:
            if "test" not in self.splits:
                self.splits["test"] = draw(self.dev, PAPER_TEST, self.seed, "dev questions")
            return self.splits["test"]

    def knows(self, task_id: str) -> bool:
        """Whether ``task_id`` is a question of the set, drawing the training questions when it
        is none of the dev file's (blocking: may read the training file)."""
        if task_id not in self.by_id and self.training is not None:
            self.train()
        return task_id in self.by_id

    def drawn_training(self) -> list[dict[str, Any]]:
        """The drawn training questions' records (none without a training file)."""
        return [self.by_id[qid] for qid in self.train()] if self.training is not None else []
