"""WebShop's search engine: Lucene BM25 with pyserini's defaults, built once and kept on disk.

WebShop (``search_engine/``) indexes one document per product (title, description, first
bullet point and options, lower-cased: ``webshop_data.search_text``) with pyserini 0.17's
Lucene indexer and answers a query with ``LuceneSearcher.search(query, k=50)``:

* terms from Lucene's English analyzer (``envs.webshop.analysis``: standard tokenizer,
  possessives, lower case, Lucene's 33 English stop words, Porter stemming); a query of
  stop words alone has no terms and finds nothing;
* BM25 with k1 = 0.9, b = 0.4 as Lucene 8 computes it: idf = ln(1 + (N - df + 0.5) /
  (df + 0.5)), score = idf - idf / (1 + tf / (k1 (1 - b + b dl / avgdl))) in float32,
  where dl is the document length *as Lucene stores it*: one byte per document
  (``SmallFloat.intToByte4``), exact below 24 terms and rounded down to 4 significant
  bits above. The rounding reorders close results, so it is reproduced (``lucene_length``);
* a document's score is the sum over the query's terms (a repeated word counts again);
  hits are ordered by score, ties by asin (Anserini breaks ties by document id).

The per-(document, term) scores are precomputed at build time and stored, with the
vocabulary, as a ``bm25s`` index (``bm25s.BM25``: compressed sparse columns, loaded
memory-mapped, queried with ``get_scores_from_ids``). bm25s's own ``index()`` would use
exact document lengths, which is not what Lucene scores, so the scores are computed here
from streamed term counts (``IndexBuilder``), which also keeps memory low for the full
1.18M-product catalogue. On the shipped catalogue the top-50 lists equal those of
WebShop's Lucene index for every query tried (tests/envs/test_webshop_search.py).
"""

from __future__ import annotations

import functools
from array import array
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np

from envs.webshop.analysis import analyze

K1, B = 0.9, 0.4  # pyserini's BM25 defaults (LuceneSearcher.set_bm25)
SEARCH_RETURN_N = 50  # WebShop shows at most 50 results
ASINS_FILE = "asins.npy"


def _int4(value: int) -> int:
    """Lucene's SmallFloat.longToInt4: 4 significant bits and a 4-bit shift."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_int(code: int) -> int:
    bits, shift = code & 0x07, (code >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_FREE_VALUES = 255 - _int4((1 << 31) - 1)  # lengths below this are stored exactly (24)


def lucene_norm(length: int) -> int:
    """The byte Lucene stores for a document of ``length`` terms (SmallFloat.intToByte4)."""
    return length if length < _FREE_VALUES else _FREE_VALUES + _int4(length - _FREE_VALUES)


def lucene_length(norm: int) -> int:
    """The document length BM25 uses for a stored byte (SmallFloat.byte4ToInt)."""
    return norm if norm < _FREE_VALUES else _FREE_VALUES + _int4_to_int(norm - _FREE_VALUES)


class IndexBuilder:
    """Takes documents one at a time and writes the index; holds only term counts."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._terms = array("i")  # per (document, distinct term): term id ...
        self._freqs = array("i")  # ... and its count in the document
        self._distinct = array("i")  # per document: how many distinct terms
        self._lengths = array("i")  # per document: how many terms
        self._asins: list[str] = []

    def add(self, asin: str, text: str) -> None:
        counts = Counter(analyze(text))
        vocab = self.vocab
        self._terms.extend([vocab.setdefault(term, len(vocab)) for term in counts])
        self._freqs.extend(counts.values())
        self._distinct.append(len(counts))
        self._lengths.append(sum(counts.values()))
        self._asins.append(asin)

    def _scores(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Lucene's BM25 score of every (document, term) pair, as CSC arrays by term."""
        terms = np.frombuffer(self._terms, dtype=np.int32)
        freqs = np.frombuffer(self._freqs, dtype=np.int32).astype(np.float32)
        lengths = np.frombuffer(self._lengths, dtype=np.int32)
        docs = np.repeat(np.arange(len(lengths), dtype=np.int32), np.frombuffer(self._distinct, dtype=np.int32))
        n_docs = max(int(np.count_nonzero(lengths)), 1)  # Lucene's docCount: documents with terms
        df = np.bincount(terms, minlength=len(self.vocab)).astype(np.float64)
        idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = np.float32(lengths.sum() / n_docs)
        k1, b = np.float32(K1), np.float32(B)
        table = np.array([lucene_length(n) for n in range(256)], dtype=np.float32)
        inverse = np.float32(1) / (k1 * ((np.float32(1) - b) + b * table / avgdl))
        norms = np.array([lucene_norm(int(n)) for n in range(int(lengths.max(initial=0)) + 1)], dtype=np.uint8)
        weight = idf[terms]
        scores = weight - weight / (np.float32(1) + freqs * inverse[norms[lengths[docs]]])
        order = np.argsort(terms, kind="stable")  # by term, documents in order within a term
        indptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(self.vocab)), out=indptr[1:])
        return scores[order].astype(np.float32), docs[order], indptr

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (a bm25s index plus the asin of each document)."""
        data, indices, indptr = self._scores()
        engine = bm25s.BM25(k1=K1, b=B, method="lucene", idf_method="lucene")
        engine.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(self._asins)}
        engine.vocab_dict = self.vocab
        engine.nonoccurrence_array = None
        engine.save(str(folder), show_progress=False)
        np.save(folder / ASINS_FILE, np.array(self._asins, dtype="S10"))


class SearchIndex:
    """A saved index, memory-mapped; ``search`` returns asins, best first."""

    def __init__(self, folder: Path) -> None:
        self._engine = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        self.asins: np.ndarray = np.load(folder / ASINS_FILE, mmap_mode="r")
        self.search = functools.lru_cache(maxsize=4096)(self._search)

    def term_ids(self, query: str) -> list[int]:
        """The query's terms (repeats kept) that occur in the catalogue, as vocabulary ids."""
        vocab = self._engine.vocab_dict
        return [vocab[term] for term in analyze(query) if term in vocab]

    def _search(self, query: str, limit: int = SEARCH_RETURN_N) -> tuple[str, ...]:
        ids = self.term_ids(query)
        if not ids:
            return ()
        scores = self._engine.get_scores_from_ids(ids)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > limit:  # keep the top ``limit`` and everything tied with the last
            cut = np.partition(scores[hits], len(hits) - limit)[len(hits) - limit]
            hits = hits[scores[hits] >= cut]
        order = np.lexsort((self.asins[hits], -scores[hits]))[:limit]
        return tuple(a.decode("ascii") for a in self.asins[hits[order]])
