"""WebShop's search engine as BM25 over SQLite FTS5 (stdlib sqlite3, in memory).

WebShop indexes one document per product (title, description, first bullet point and
options, lower-cased; ``webshop_data.search_text``) with Lucene and returns the top 50
BM25 hits for the query's words. Here the same documents go into an in-memory FTS5 table
with the Porter stemmer, and a query is the OR of its words ranked by FTS5's ``bm25()``.
Ranking differs from Lucene in details (FTS5 uses k1=1.2, b=0.75; pyserini 0.9, 0.4), so
result lists are close to WebShop's, not identical.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading

SEARCH_RETURN_N = 50  # WebShop shows at most 50 results ...
PRODUCT_WINDOW = 10  # ... 10 per page
_WORD = re.compile(r"\w+", re.UNICODE)


class SearchIndex:
    """An FTS5 index of product documents; ``search`` returns asins, best first."""

    def __init__(self, documents: list[tuple[str, str]]) -> None:
        """``documents`` are (asin, text) pairs; row order breaks score ties."""
        self._asins = [asin for asin, _ in documents]
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("CREATE VIRTUAL TABLE docs USING fts5(contents, tokenize='porter unicode61')")
        self._db.executemany(
            "INSERT INTO docs(rowid, contents) VALUES (?, ?)",
            ((i, text) for i, (_, text) in enumerate(documents)),
        )
        self._db.commit()
        self.search = functools.lru_cache(maxsize=4096)(self._search)

    def _search(self, query: str, limit: int = SEARCH_RETURN_N) -> tuple[str, ...]:
        """The asins of the top ``limit`` documents for ``query``'s words (none if it has no words)."""
        words = dict.fromkeys(_WORD.findall(query.lower()))
        if not words:
            return ()
        match = " OR ".join(f'"{w}"' for w in words)
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT ?",
                (match, limit),
            ).fetchall()
        return tuple(self._asins[r[0]] for r in rows)


def page_of_results(hits: tuple[str, ...], page: int) -> tuple[str, ...]:
    """The asins shown on results page ``page`` (1-based)."""
    return hits[(page - 1) * PRODUCT_WINDOW : page * PRODUCT_WINDOW]


def page_count(hits: tuple[str, ...]) -> int:
    """How many results pages ``hits`` fill (at least one, possibly empty)."""
    return max(1, -(-len(hits) // PRODUCT_WINDOW))
