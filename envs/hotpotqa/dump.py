"""HotpotQA's official Wikipedia of 2017-10-01, introductory paragraphs only, as a backend.

The dump (https://hotpotqa.github.io/wiki-readme.html, "enwiki-20171001-pages-meta-current-
withlinks-abstracts.tar.bz2", CC BY-SA 4.0) unpacks into a folder of subfolders (``AA``,
``AB``, ...) of bz2 files (``wiki_00.bz2``, ...), each holding JSON lines, one article a line:
``id``, ``url``, ``title`` (its identifier, case-insensitive), ``text`` (the first paragraph as
a list of sentences, each after the first starting with its space), ``text_with_links`` (the
same with hyperlinks as HTML tags) and character offsets. These are the pages HotpotQA's
questions were written from, as of the date AutoPlan's code pins live Wikipedia to.

The folder is indexed once into a SQLite file (``index``, by default beside the folder:
``<folder>.sqlite``), written under a temporary name and renamed when whole, so an
interrupted build starts over rather than leaving half an index. Building reads all of it
(about 5.2 million articles); it is the env's loading, done in a worker thread.
"""

from __future__ import annotations

import asyncio
import bz2
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from envs.base import EnvError
from envs.hotpotqa.corpus import Corpus, Page, PageIndex, SearchResult

BUILT = "built_from"  # meta key: the folder the index was built from, set when the build is whole


def shards(folder: Path) -> list[Path]:
    """The dump's bz2 files, in order (folders and files sorted by name)."""
    return sorted(folder.rglob("*.bz2"))


def articles(files: list[Path]) -> Iterator[Page]:
    """Every article of the dump's files, in order."""
    for shard in files:
        with bz2.open(shard, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield article(line, f"{shard}:{number}")


def article(line: str, where: str) -> Page:
    """One JSON line of the dump as a page (its sentences stripped, empty ones dropped)."""
    try:
        record: Any = json.loads(line)
        title, text = record["title"], record["text"]
    except (ValueError, KeyError, TypeError):
        raise EnvError(f"{where} is not an article of HotpotQA's abstracts dump (JSON with title and text)") from None
    if not isinstance(title, str) or not isinstance(text, list) or not all(isinstance(s, str) for s in text):
        raise EnvError(f"{where}: an article's title is a string and its text a list of sentences")
    return Page(title, tuple(s.strip() for s in text if s.strip()))


def default_index(folder: Path) -> Path:
    return folder.with_name(folder.name + ".sqlite")


def open_index(folder: str, index: str | None = None) -> PageIndex:
    """The dump's index, built first when there is none whole (blocking, long the first time)."""
    source = Path(folder)
    if not source.is_dir():
        raise EnvError(f"HotpotQA abstracts dump {folder!r} is not a folder (unpack the .tar.bz2 first)")
    target = Path(index) if index else default_index(source)
    if target.is_file():
        built = PageIndex(str(target))
        if built.get_meta(BUILT) is not None:
            return built
        built.close()
    files = shards(source)
    if not files:
        raise EnvError(f"{folder} holds no .bz2 files of HotpotQA's abstracts dump")
    partial = target.with_name(target.name + ".partial")
    try:
        partial.unlink(missing_ok=True)
        fresh = PageIndex(str(partial))
    except (OSError, sqlite3.Error) as exc:
        raise EnvError(f"cannot write the abstracts index {partial} ({type(exc).__name__})") from None
    try:
        fresh.add(articles(files))
        fresh.set_meta(BUILT, str(source.resolve()))
    finally:
        fresh.close()
    os.replace(partial, target)
    return PageIndex(str(target))


class AbstractsDump:
    """Search over the dump's articles (``folder``; ``index``: where its SQLite index lives)."""

    corpus: ClassVar[Corpus] = Corpus(
        "abstracts-2017-10-01", False, "2017-10-01 abstracts: pages are their first paragraph only"
    )

    def __init__(self, folder: str, index: str | None = None) -> None:
        self.index = open_index(folder, index)

    async def search(self, entity: str) -> SearchResult:
        return await asyncio.to_thread(self.index.find, entity, True)
