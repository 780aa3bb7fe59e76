"""The text analysis of WebShop's search engine: Lucene's English analyzer, in Python.

WebShop indexes and searches with pyserini 0.17 (Anserini 0.14.3, Lucene 8), whose
default analyzer turns a text into terms in five steps, reproduced here:

1. StandardTokenizer: Unicode word segmentation (UAX #29). Letters and digits joined by
   ``'`` or ``.`` stay one token (``don't``, ``u.s.a``, ``3.5``), a hyphen splits
   (``wi-fi`` -> ``wi``, ``fi``), ideographs are one token each, emoji are tokens, other
   symbols and punctuation are dropped. The ``regex`` package's word-boundary mode
   (``(?w)``) segments by UAX #29; a segment is a token when it starts with a letter,
   digit, kana, ideograph or pictograph. Lucene 8 takes its pictographs from Unicode's
   emoji data 11.0, which also marks the Miscellaneous Symbols and Dingbats ranges
   listed in ``LUCENE_PICTOGRAPHS`` (``★``, ``☞``, ``♡`` ...) that later Unicode
   versions no longer mark.
2. EnglishPossessiveFilter: a trailing ``'s`` is removed (``women's`` -> ``women``).
3. LowerCaseFilter.
4. StopFilter with Lucene's English stop set (``STOP_WORDS``, 33 words).
5. PorterStemFilter: Lucene's Porter stemmer is Martin Porter's reference implementation
   (with its two departures from the paper, ``bli``->``ble`` and ``logi``->``log``, and no
   stemming of 1- and 2-letter words): NLTK's ``PorterStemmer`` in ``MARTIN_EXTENSIONS``
   mode is that algorithm (``technology`` -> ``technolog``, ``us`` stays ``us``).

On the 1000 shipped products this gives exactly the terms and counts of WebShop's own
Lucene index (tests/envs/test_webshop_search.py compares every document).
"""

from __future__ import annotations

import functools
import re

import regex
from nltk.stem.porter import PorterStemmer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (the stop set pyserini indexes with).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
# Symbols that Unicode's emoji data 11.0 (used by Lucene 8's tokenizer) marks as
# Extended_Pictographic and newer Unicode versions do not.
LUCENE_PICTOGRAPHS = (
    r"\u2600-\u2605\u2607-\u2612\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2714\u2716\u271D"
    r"\u2721\u2728\u2733\u2734\u2744\u2747\u274C\u274E\u2753-\u2755\u2757\u2763-\u2767"
    r"\u2795-\u2797\u27A1\u27B0\u27BF"
)
_BOUNDARIES = regex.compile(r"(?wV1)\b")
_TOKEN_START = regex.compile(
    r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}\p{WB=Numeric}\p{WB=Katakana}\p{Ideographic}"
    r"\p{Script=Hiragana}\p{Extended_Pictographic}" + LUCENE_PICTOGRAPHS + "]"
)
# The same segmentation for pure-ASCII text with the faster ``re``: letters, digits and "_"
# joined by ":" "." "'" between letters, or by "." "," ";" "'" between digits (UAX #29).
_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[.,;'](?=[0-9]))[A-Za-z0-9_]+)*")
# Words never span whitespace, so a text splits into ASCII stretches and the few
# whitespace-free chunks that hold other characters, each segmented its own way.
_NON_ASCII_CHUNK = re.compile(r"(\S*[^\x00-\x7f]\S*)")
_LEADING_JOINERS = "'’.:·,;"  # a word never starts with the marks that join its parts
_POSSESSIVES = ("'s", "'S", "’s", "’S")
_PORTER = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS)


@functools.lru_cache(maxsize=1 << 20)
def term(token: str) -> str:
    """The term a token becomes ('' for a stop word): possessive removed, lower case, stem.
    Memoised: a catalogue repeats its words, and Porter stemming is the costly step."""
    if token.endswith(_POSSESSIVES):
        token = token[:-2]
    token = token.lower()
    if not token or token in STOP_WORDS:
        return ""
    return _PORTER.stem(token, to_lowercase=False)


def _ascii_tokens(text: str) -> list[str]:
    return [word for word in _ASCII_WORD.findall(text) if word[0].isalnum()]


def _unicode_tokens(chunk: str) -> list[str]:
    found = []
    for segment in _BOUNDARIES.split(chunk):
        segment = segment.lstrip(_LEADING_JOINERS)
        if not segment:
            continue
        first = segment[0]
        if first.isalnum() if first.isascii() else _TOKEN_START.match(first):
            found.append(segment)
    return found


def tokens(text: str) -> list[str]:
    """The StandardTokenizer's tokens of ``text``, in order, before any filter."""
    if text.isascii():
        return _ascii_tokens(text)
    found: list[str] = []
    for i, part in enumerate(_NON_ASCII_CHUNK.split(text)):  # odd parts hold non-ASCII characters
        found += _unicode_tokens(part) if i % 2 else _ascii_tokens(part)
    return found


def analyze(text: str) -> list[str]:
    """The terms Lucene's English analyzer indexes (or searches) for ``text``, in order."""
    return [t for t in map(term, tokens(text)) if t]
