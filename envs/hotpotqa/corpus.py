"""Where HotpotQA's search[entity] looks pages up: a local corpus or live Wikipedia.

The local "wiki" is the union of the context paragraphs of every loaded question (the
distractor setting's 2 gold + 8 distractor paragraphs each), indexed with SQLite FTS5. A
search whose text is a page title (ignoring case, spacing and underscores) opens that page;
any other search gets the 5 best-matching titles, the way Wikipedia's search page answers
when there is no article of that name. Live Wikipedia uses the MediaWiki API.

SQLite calls block, so the index is built by the env in a worker thread and ranked searches
run in one too (``asyncio.to_thread``); one connection serves every thread, under a lock.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envs.base import DATA_ROOT, EnvError
from envs.datasets import installed

SHIPPED_QUESTIONS = DATA_ROOT / "hotpotqa" / "hotpot_dev_distractor_v1_first100.json.gz"
FULL_DEV = "hotpot_dev_distractor_v1.json"  # of the installed full data (envs.datasets)
WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"


@dataclass(frozen=True)
class Page:
    """A page as sentences (what lookup[] walks through)."""

    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class SearchResult:
    """Either the page found or up to 5 similar titles."""

    page: Page | None
    similar: tuple[str, ...] = ()


class Backend(Protocol):
    async def search(self, entity: str) -> SearchResult: ...


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
    with opener(source, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, list) or not all(isinstance(q, dict) and "_id" in q for q in data):
        raise EnvError(f"{source} is not a HotpotQA file (a list of records with _id)")
    return data


def title_key(text: str) -> str:
    """How titles are matched: case, spacing and underscores do not matter."""
    return " ".join(text.replace("_", " ").split()).casefold()


def fts_query(text: str) -> str | None:
    """An FTS5 query (any of the words) from untrusted text; None when it has no words."""
    words = re.findall(r"\w+", text)
    return " OR ".join(f'"{w}"' for w in words) if words else None


class LocalWiki:
    """The union of the questions' paragraphs, searchable like a small Wikipedia."""

    def __init__(self, questions: list[dict[str, Any]]) -> None:
        self.pages: dict[str, Page] = {}
        for question in questions:
            for title, sentences in question.get("context", []):
                key = title_key(title)
                if key not in self.pages:
                    kept = tuple(s.strip() for s in sentences if s.strip())
                    self.pages[key] = Page(title, kept)
        self.lock = threading.Lock()
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE pages USING fts5(title, body)")
        self.db.executemany(
            "INSERT INTO pages(title, body) VALUES (?, ?)",
            [(p.title, " ".join(p.sentences)) for p in self.pages.values()],
        )

    def similar(self, text: str, limit: int = 5) -> list[str]:
        """The best-matching titles (blocking: SQLite)."""
        query = fts_query(text)
        if query is None:
            return []
        with self.lock:
            rows = self.db.execute(
                "SELECT title FROM pages WHERE pages MATCH ? ORDER BY bm25(pages, 10.0, 1.0) LIMIT ?",
                (query, limit),
            ).fetchall()
        return [row[0] for row in rows]

    async def search(self, entity: str) -> SearchResult:
        page = self.pages.get(title_key(entity))
        if page is not None:
            return SearchResult(page)
        return SearchResult(None, tuple(await asyncio.to_thread(self.similar, entity)))


def react_sentences(text: str) -> tuple[str, ...]:
    """ReAct's split of a page's text: paragraphs by line, sentences at '. '."""
    sentences: list[str] = []
    for paragraph in (p.strip() for p in text.split("\n")):
        if paragraph:
            sentences += [s.strip() for s in paragraph.split(". ") if s.strip()]
    return tuple(s if s.endswith(".") else s + "." for s in sentences)


class Wikipedia:
    """Live Wikipedia through the MediaWiki API (current article text, plain)."""

    def __init__(self, api_url: str = WIKIPEDIA_API, timeout: float = 10.0) -> None:
        self.api_url = api_url
        self.timeout = float(timeout)

    async def _get(self, **params: Any) -> dict[str, Any]:
        import httpx

        query = {"format": "json", "formatversion": "2", **params}
        headers = {"User-Agent": "Introspect/0.1 (HotpotQA agent env)"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers) as client:
                response = await client.get(self.api_url, params=query)
                response.raise_for_status()
                return response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise EnvError(
                f"Wikipedia is unreachable at {self.api_url} ({type(exc).__name__}); use backend='local' offline"
            ) from None

    async def search(self, entity: str) -> SearchResult:
        found = await self._get(action="query", prop="extracts", explaintext=1, redirects=1, titles=entity)
        pages = (found.get("query") or {}).get("pages") or []
        pages = list(pages.values()) if isinstance(pages, dict) else pages  # formatversion 1 or 2
        page = pages[0] if pages else {}
        extract = str(page.get("extract") or "")
        if page and "missing" not in page and extract and "may refer to:" not in extract:
            return SearchResult(Page(str(page.get("title", entity)), react_sentences(extract)))
        hits = await self._get(action="query", list="search", srsearch=entity, srlimit=5)
        titles = [str(h.get("title", "")) for h in (hits.get("query") or {}).get("search", [])]
        return SearchResult(None, tuple(t for t in titles if t)[:5])
