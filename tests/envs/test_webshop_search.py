"""WebShop's search engine: Lucene's analyzer and BM25 as pyserini runs them.

The reference data (tests/envs/data/README.md) comes from WebShop's own engine, Anserini
0.14.3 (the jar of pyserini 0.17.0, which WebShop pins), indexing the 1000 shipped products'
documents as WebShop's search_engine scripts do and searching with pyserini's defaults.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from envs.webshop.analysis import analyze
from envs.webshop.catalogue import load_catalogue
from envs.webshop.data import search_text
from envs.webshop.search import (
    SEARCH_RETURN_N,
    IndexBuilder,
    SearchIndex,
    lucene_length,
    lucene_norm,
)

DATA = Path(__file__).parent / "data"


def reference(name: str):
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_every_document_has_the_terms_of_webshops_lucene_index():
    terms = reference("lucene_terms.json.gz")
    catalogue = load_catalogue()
    assert len(terms) == catalogue.n_products == 1000
    for product in catalogue.products():
        assert Counter(analyze(search_text(product))) == terms[product["asin"]], product["asin"]


def test_top_fifty_equal_webshops_for_every_reference_query():
    """615 queries: goal instructions, product titles, random word sets, and edge cases
    (possessives, hyphens, decimals, stop words alone)."""
    index = load_catalogue().index
    cases = reference("lucene_top50.json.gz")
    assert len(cases) == 615
    different = [case["query"] for case in cases if list(index.search(case["query"])) != case["hits"]]
    assert different == []


@pytest.mark.parametrize("query", ["the of and", "to be or not to be", "it is not", "?!", ""])
def test_a_query_without_terms_finds_nothing(query):
    assert load_catalogue().index.search(query) == ()


def test_analyzer_steps():
    # standard tokenizer (apostrophes and dots inside words kept, hyphens split), possessive,
    # lower case, Lucene's stop words, Porter as Lucene's (short words unstemmed; "logi" -> "log")
    assert analyze("Women's Wi-Fi U.S.A. 3.5 don't The technology US ★") == [
        "women",
        "wi",
        "fi",
        "u.s.a",
        "3.5",
        "don't",
        "technolog",
        "us",
        "★",
    ]
    assert analyze("Running shoes, and the pillows") == ["run", "shoe", "pillow"]


def build(tmp_path: Path, docs: dict[str, str]) -> SearchIndex:
    builder = IndexBuilder()
    for asin, text in docs.items():
        builder.add(asin, text)
    builder.save(tmp_path)
    return SearchIndex(tmp_path)


def test_ranking_depends_on_k1_b_stemming_and_stop_words(tmp_path):
    index = build(
        tmp_path,
        {
            "X1": "shirt shirt wool soft warm",  # tf 2, 5 terms
            "Y2": "shirt",  # tf 1, 1 term
            "Z3": "p q r",
            "Z4": "s t u",
        },
    )
    # The average length is 3. With pyserini's k1 = 0.9, b = 0.4, X1 (0.637) beats Y2 (0.602);
    # with SQLite FTS5's k1 = 1.2, b = 0.75 (the engine this replaced) Y2 would win (0.625 vs 0.526).
    assert index.search("shirt") == ("X1", "Y2")
    # Porter stemming: "shirts" finds "shirt"; "running" is "run", never "ran".
    assert index.search("shirts") == ("X1", "Y2")
    stems = build(tmp_path / "s", {"R1": "running shoes", "R2": "she ran"})
    assert stems.search("run") == ("R1",) and stems.search("runs") == ("R1",)
    # Stop words are not terms, so they do not lengthen a document: P1 has 1 term, Q2 has 3.
    stops = build(tmp_path / "t", {"Q2": "red blue shirt", "P1": "the of and to with the of and shirt"})
    assert stops.search("shirt") == ("P1", "Q2")
    # A repeated query word counts again (Lucene's bag of words).
    both = build(tmp_path / "u", {"C1": "blue shoes", "C2": "blue pillow pillow"})
    assert both.search("blue shoes shoes")[0] == "C1" and both.search("blue pillow")[0] == "C2"


def test_k1_saturates_term_frequency_as_lucene(tmp_path):
    """With k1 = 0.9 a third occurrence adds little: for equal lengths, tf 3 vs tf 1 scores
    (3 / (3 + 0.9 L)) / (1 / (1 + 0.9 L)), not 3."""
    index = build(tmp_path, {"A1": "shirt shirt shirt x y", "B2": "shirt x y z w", "C3": "other words here now ok"})
    engine_scores = index._engine.get_scores_from_ids(index.term_ids("shirt"))
    ratio = float(engine_scores[0] / engine_scores[1])
    # both documents have 5 terms = the average length, so the length factor L is 1
    assert ratio == pytest.approx((3 / (3 + 0.9)) / (1 / (1 + 0.9)), rel=1e-5)


def test_document_lengths_are_rounded_as_lucene_stores_them():
    assert [lucene_length(lucene_norm(n)) for n in (0, 5, 23, 24, 25, 40, 41, 100, 1000)] == [
        0,
        5,
        23,
        24,
        25,
        40,
        40,
        96,
        984,
    ]
    assert all(lucene_length(lucene_norm(n)) <= n for n in range(5000))


def test_ties_are_broken_by_asin_and_at_most_fifty_results(tmp_path):
    index = build(tmp_path, {f"B{i:03d}": "same text" for i in reversed(range(60))})
    hits = index.search("text")
    assert len(hits) == SEARCH_RETURN_N and list(hits) == sorted(hits) and hits[0] == "B000"
