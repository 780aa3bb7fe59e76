"""The benchmarks' full data: where it comes from, what it is, and where an env finds it.

Only samples ship with the project (``envs/data/``). The full data is declared here, one
``Dataset`` per name, from the benchmarks' own download scripts and READMEs:
``introspect data`` lists these entries and ``introspect data get NAME`` installs one
(``introspect.data``: download, verify, install) into ``data/NAME/`` of introspect's home (``home()``). An env
given no data option reads ``installed(NAME)`` when it is there, else its sample; an explicit
option still wins.

None of the three sources publishes a sha256 (HotpotQA publishes an MD5 only for its 7.4 GB
processed dump, which is not used here), so a download is verified by parsing it and
counting its records against the counts the benchmark's papers and READMEs give (a lower
bound, ``at_least``: a truncated, an HTML error page or a smaller file is refused).
``Download.sha256`` is checked whenever it is set.

``data_info`` says which data an env ran on (results rows record it): the sample or the full
data, and a hash of the files it loaded, computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MANIFEST = "manifest.json"  # written last into an installed folder: the folder is complete
Unpack = Literal["none", "zip", "tar.bz2"]


@dataclass(frozen=True)
class Download:
    """One file of a dataset as its source publishes it.

    ``count`` names what is counted to verify it: ``items`` (a JSON array's items or a JSON
    object's keys), ``records`` (the items of a JSON object's lists: WebShop's human
    instructions per product), ``games`` (ALFWorld game files per split folder, ``at_least``
    then maps split -> count) or ``members`` (the files an archive holds)."""

    url: str
    file: str  # the name it is saved (or extracted) under; a mirror serves it under this name too
    count: Literal["items", "records", "games", "members"]
    at_least: int | dict[str, int] = 1
    unpack: Unpack = "none"
    sha256: str | None = None  # only where the source publishes one


@dataclass(frozen=True)
class Dataset:
    """A benchmark's full data: what ``introspect data`` lists and ``data get`` installs."""

    name: str
    env: str
    source: str  # the page or script the URLs come from
    size: str
    licence: str
    enables: str
    downloads: tuple[Download, ...]


_DRIVE = "https://drive.google.com/uc?export=download&confirm=t&id="  # WebShop's setup.sh (gdown) ids
_ALFWORLD = "https://github.com/alfworld/alfworld/releases/download/0.2.2/"
_HOTPOT = "http://curtis.ml.cmu.edu/datasets/hotpot/"

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            name="webshop",
            env="webshop",
            source="https://github.com/princeton-nlp/WebShop (setup.sh -d all)",
            size="several GB of JSON: 1.18M products, their attributes, 12,087 human instructions",
            licence="MIT (WebShop); product texts scraped from Amazon by the WebShop authors",
            enables="WebShop's full catalogue and its 12,087 human goals: the test split is the paper's 500",
            downloads=(
                Download(_DRIVE + "1A2whVgOO0euk5O13n2iYDM0bQRkkRduB", "items_shuffle.json", "items", 1_180_000),
                Download(_DRIVE + "1s2j6NgHljiZzQNL3veZaAiyW_qDEgBNi", "items_ins_v2.json", "items", 1),
                Download(_DRIVE + "14Kb5SPBk_jfdLZ_CDBNitW98QLDlKR5O", "items_human_ins.json", "records", 12_087),
            ),
        ),
        Dataset(
            name="alfworld",
            env="alfworld",
            source="https://github.com/alfworld/alfworld (scripts/alfworld-download, release 0.2.2)",
            size="the json_2.1.1 TextWorld-PDDL games: 3,553 train, 140 valid_seen, 134 valid_unseen",
            licence="MIT (ALFWorld)",
            enables="all 134 valid_unseen games (the papers' evaluation set) and the training games",
            downloads=(
                Download(
                    _ALFWORLD + "json_2.1.1_tw-pddl.zip",
                    "json_2.1.1_tw-pddl.zip",
                    "games",
                    {"train": 3553, "valid_seen": 140, "valid_unseen": 134},
                    unpack="zip",
                ),
            ),
        ),
        Dataset(
            name="hotpotqa",
            env="hotpotqa",
            source="https://github.com/hotpotqa/hotpot (README: the official train and dev files)",
            size="about 600 MB: 90,447 train and 7,405 dev (distractor) questions",
            licence="CC BY-SA 4.0",
            enables="the whole dev set (7,405 questions, distractor setting) as the env's questions, and "
            "the paper's split: 50 hard training questions drawn from the train file (AutoPlan's training) "
            "and 200 drawn dev questions to test on",
            downloads=(
                Download(_HOTPOT + "hotpot_dev_distractor_v1.json", "hotpot_dev_distractor_v1.json", "items", 7405),
                Download(_HOTPOT + "hotpot_train_v1.1.json", "hotpot_train_v1.1.json", "items", 90_447),
            ),
        ),
        Dataset(
            name="hotpotqa-abstracts",
            env="hotpotqa",
            source="https://hotpotqa.github.io/wiki-readme.html (the 2017-10-01 Wikipedia abstracts)",
            size="about 1.5 GB (tar.bz2 of bz2 JSON lines)",
            licence="CC BY-SA 4.0 (Wikipedia text)",
            enables="the introductory paragraphs of every 2017-10-01 Wikipedia article (the fullwiki "
            "setting's corpus); installed for your own retrieval: the env's search does not read it",
            downloads=(
                Download(
                    "https://nlp.stanford.edu/projects/hotpotqa/"
                    "enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2",
                    "enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2",
                    "members",
                    1,
                    unpack="tar.bz2",
                ),
            ),
        ),
    )
}


@dataclass(frozen=True)
class DataInfo:
    """Which data a run used: a dataset's name, ``sample`` (shipped), ``full`` (installed by
    ``introspect data get``) or ``custom`` (a folder or file given as an env option), and a
    sha256 of what was loaded (of the manifest, for installed data)."""

    name: str
    kind: Literal["sample", "full", "custom"]
    sha256: str


HOME = "INTROSPECT_HOME"  # the variable naming introspect's home (``introspect --home DIR`` sets it)


def home() -> Path:
    """Where introspect keeps what it makes (checkpoints, studies, data, journals): one folder
    per user, ``$INTROSPECT_HOME``, else ``$XDG_DATA_HOME/introspect`` (by default
    ``~/.local/share/introspect``, the XDG base directory for a user's data). It never depends
    on the current folder, so a thread run in one folder is found from any other."""
    if os.environ.get(HOME):
        return Path(os.environ[HOME]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "introspect"


def data_home() -> Path:
    return home() / "data"


def installed(name: str) -> Path | None:
    """The folder of dataset ``name`` when ``introspect data get`` installed it (blocking: a
    stat), else None."""
    folder = data_home() / name
    return folder if (folder / MANIFEST).is_file() else None


@functools.cache
def _hash(paths: tuple[Path, ...]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def data_info(name: str, loaded: list[Path], *, explicit: bool) -> DataInfo:
    """What an env ran on, given the files it ``loaded`` and whether an env option chose them
    (blocking: hashes them once per process). Files under an installed dataset's folder are hashed through its manifest,
    which holds each downloaded file's sha256, so the 1.18M products are not read again."""
    full = installed(name)
    if full is not None and loaded and all(full.resolve() in p.resolve().parents for p in loaded):
        return DataInfo(name, "full", _hash((full / MANIFEST,)))
    kind: Literal["sample", "custom"] = "custom" if explicit else "sample"
    return DataInfo(name, kind, _hash(tuple(sorted(p.resolve() for p in loaded))))


def manifest_text(name: str, files: dict[str, str]) -> str:
    """The manifest of an installed dataset: its name and each downloaded file's sha256."""
    return json.dumps({"name": name, "sha256": files}, indent=2, sort_keys=True)
