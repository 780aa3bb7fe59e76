"""Where HotpotQA's search[entity] looks pages up: the backends and what each one is.

Three backends, each saying what it searches (``Corpus``), which results rows carry:

- ``local`` (``LocalWiki``): the union of the loaded questions' context paragraphs (the
  distractor setting's 2 gold + 8 distractor paragraphs each). Offline and opt-in (demos, tests): it
  hands the agent the gold pages (a question's own words find them among the 5 suggestions
  for most questions), so its results are marked "not comparable with the paper".
- ``abstracts`` (``AbstractsDump``): HotpotQA's official processed Wikipedia of 2017-10-01,
  the introductory paragraphs of every article
  (``enwiki-20171001-pages-meta-current-withlinks-abstracts``, envs.hotpotqa.dump); all of
  Wikipedia to search, but a page is its first paragraph only.
- ``wikipedia`` (envs.hotpotqa.wikipedia, the default): the MediaWiki API, each page pinned at
  its last revision before 2017-10-01, as AutoPlan's code reads it.

On the local corpus a search whose text is a page title (ignoring case, spacing and
underscores, as HotpotQA treats titles) opens that page; the dump and Wikipedia open a page only
when the search is its title character for character, as AutoPlan's code does (``entity in
found_entities``). Any other search gets the 5 best-matching titles. The local
and dump backends keep pages in SQLite (FTS5 for the suggestions). SQLite calls block, so
searches run in a worker thread (``asyncio.to_thread``); one connection serves every thread,
under a lock.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Page:
    """A page as sentences (what lookup[] walks through) and, where a backend words it otherwise
    than its first 5 sentences, what a search that opens it shows (``opening``)."""

    title: str
    sentences: tuple[str, ...]
    opening: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """Either the page found or up to 5 similar titles."""

    page: Page | None
    similar: tuple[str, ...] = ()


@dataclass(frozen=True)
class Corpus:
    """What a backend searches, as every step's info and every result row name it.
    ``comparable``: whether scores on it can stand beside the paper's; ``caveat`` says why not."""

    name: str
    comparable: bool
    caveat: str = ""


class Backend(Protocol):
    corpus: ClassVar[Corpus]

    async def search(self, entity: str) -> SearchResult: ...


def title_key(text: str) -> str:
    """How titles are matched: case, spacing and underscores do not matter."""
    return " ".join(text.replace("_", " ").split()).casefold()


def fts_query(text: str) -> str | None:
    """An FTS5 query (any of the words) from untrusted text; None when it has no words."""
    words = re.findall(r"\w+", text)
    return " OR ".join(f'"{w}"' for w in words) if words else None


class PageIndex:
    """Pages by title and their full-text index, in one SQLite database (blocking calls).
    The first page of a title wins, as a dict filled in order would keep it."""

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS page(key TEXT PRIMARY KEY, title TEXT NOT NULL, sentences TEXT NOT NULL);
        CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(title, body);
        CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
    """

    def __init__(self, path: str = ":memory:") -> None:
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(self.SCHEMA)

    def add(self, pages: Iterable[Page]) -> None:
        with self.lock, self.db:
            for page in pages:
                added = self.db.execute(
                    "INSERT OR IGNORE INTO page(key, title, sentences) VALUES (?, ?, ?)",
                    (title_key(page.title), page.title, json.dumps(page.sentences)),
                )
                if added.rowcount:
                    self.db.execute(
                        "INSERT INTO search(title, body) VALUES (?, ?)", (page.title, " ".join(page.sentences))
                    )

    def page(self, title: str) -> Page | None:
        with self.lock:
            row = self.db.execute("SELECT title, sentences FROM page WHERE key = ?", (title_key(title),)).fetchone()
        return Page(row[0], tuple(json.loads(row[1]))) if row else None

    def similar(self, text: str, limit: int = 5) -> list[str]:
        """The best-matching titles, a title's words weighing 10 times a sentence's."""
        query = fts_query(text)
        if query is None:
            return []
        with self.lock:
            rows = self.db.execute(
                "SELECT title FROM search WHERE search MATCH ? ORDER BY bm25(search, 10.0, 1.0) LIMIT ?",
                (query, limit),
            ).fetchall()
        return [row[0] for row in rows]

    def get_meta(self, name: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_meta(self, name: str, value: str) -> None:
        with self.lock, self.db:
            self.db.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (name, value))

    def find(self, entity: str, exact: bool = False) -> SearchResult:
        """The page titled ``entity``, else the titles most like it (blocking). ``exact``: the
        title must be ``entity`` character for character, as AutoPlan's code opens a page."""
        page = self.page(entity)
        if page is not None and (not exact or page.title == entity):
            return SearchResult(page)
        return SearchResult(None, tuple(self.similar(entity)))

    def close(self) -> None:
        self.db.close()


DISTRACTOR = Corpus("distractor", False, "distractor corpus: not comparable with the paper")


class LocalWiki:
    """The union of the questions' paragraphs, searchable like a small Wikipedia."""

    corpus: ClassVar[Corpus] = DISTRACTOR

    def __init__(self, questions: Iterable[dict[str, Any]]) -> None:
        self.index = PageIndex()
        self.index.add(
            Page(title, tuple(s.strip() for s in sentences if s.strip()))
            for question in questions
            for title, sentences in question.get("context", [])
        )

    async def search(self, entity: str) -> SearchResult:
        return await asyncio.to_thread(self.index.find, entity)
