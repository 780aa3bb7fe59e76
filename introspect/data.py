"""``introspect data``: list the benchmarks' full data; ``data get NAME`` installs one.

What each dataset is and where it comes from is declared in ``envs.datasets``; this module
does the work: it downloads each file from its official URL (or from ``--mirror URL`` /
``$INTROSPECT_DATA_MIRROR``, which serves the same file names), verifies it and installs the
dataset into ``$INTROSPECT_HOME/data/NAME/``, where the envs find it without options.

Nothing is half-installed. Everything is written into a scratch folder beside the target:
each file is streamed into a ``.part`` file (its sha256 computed on the way), checked against
the length the server announced and the sha256 when the source publishes one, renamed,
unpacked when it is an archive, and parsed and counted. The manifest (each file's sha256) is
written last and the scratch folder is renamed to ``NAME`` in one step. Any failure removes
the scratch folder (and the folders the command created) and is reported in one line.

Exit status: 0 installed (or already installed); 2 refused, with nothing written: an unknown
name, an ``INTROSPECT_HOME`` that cannot be written, a source that cannot be reached or answers
with an error, a truncated download, a checksum or count that does not match, a file that is
not in the benchmark's format. A refusal is the same outcome as refused input (the project's
exit 2): the command did nothing, and running it again (later, or from a working mirror) is
the remedy.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from envs.datasets import DATASETS, MANIFEST, Download, data_home, home, installed, manifest_text
from errors import UserError

MIRROR_VARIABLE = "INTROSPECT_DATA_MIRROR"
CHUNK = 1 << 20
TIMEOUT = 60.0  # seconds without a byte before a download is given up


class DataError(UserError):
    """A download refused: the one line the command prints (exit 2, as every UserError)."""


def command(args: argparse.Namespace) -> int:
    if args.action != "get":
        print(listing())
        return 0
    already = installed(args.name)
    folder = get(args.name, args.mirror or os.environ.get(MIRROR_VARIABLE))
    state = "already installed (delete the folder to install it again)" if already else "installed"
    print(f"{args.name}: {state} in {folder}; the {DATASETS[args.name].env} env reads it without options")
    return 0


def listing() -> str:
    """Every dataset: source, size, licence, what it enables, and whether it is installed."""
    blocks = []
    for dataset in DATASETS.values():
        where = installed(dataset.name)
        blocks.append(
            "\n".join(
                [
                    f"{dataset.name}  (env {dataset.env}; "
                    + (f"installed in {where})" if where else f"not installed: introspect data get {dataset.name})"),
                    f"  source:   {dataset.source}",
                    f"  size:     {dataset.size}",
                    f"  licence:  {dataset.licence}",
                    f"  enables:  {dataset.enables}",
                ]
            )
        )
    return "\n\n".join(blocks)


def get(name: str, mirror: str | None = None) -> Path:
    """Install dataset ``name`` (see the module docstring); its folder. Raises DataError."""
    dataset = DATASETS.get(name)
    if dataset is None:
        raise DataError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    done = installed(name)
    if done is not None:
        return done
    target = data_home() / name
    if target.exists():
        raise DataError(f"{target} exists but is not a complete install (no {MANIFEST}): remove it and try again")
    created = [p for p in (data_home().parent, data_home()) if not p.exists()]
    try:
        data_home().mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=data_home()))
    except OSError as exc:
        raise DataError(f"cannot write into {data_home()} (INTROSPECT_HOME={home()}): {exc.strerror}") from None
    try:
        digests = {item.file: install_file(item, scratch, mirror) for item in dataset.downloads}
        (scratch / MANIFEST).write_text(manifest_text(name, digests), encoding="utf-8")
        try:
            scratch.rename(target)
        except OSError:
            if installed(name) is None:
                raise DataError(f"cannot move the verified data into {target}") from None
            shutil.rmtree(scratch)  # another `data get` installed it meanwhile
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        for folder in reversed(created):  # only what this command made, and only when empty
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    return target


def install_file(item: Download, folder: Path, mirror: str | None) -> str:
    """Download ``item`` into ``folder``, check and unpack it; its sha256."""
    url = f"{mirror.rstrip('/')}/{item.file}" if mirror else item.url
    path = folder / item.file
    offline = "" if mirror else f" (offline? --mirror URL or ${MIRROR_VARIABLE} names a copy of the same files)"
    digest = download(url, path, offline)
    if item.sha256 and digest != item.sha256:
        raise DataError(f"{item.file} from {url}: sha256 {digest} is not the published {item.sha256}")
    unpack(item, path, folder)
    check_counts(item, path, folder)
    return digest


def download(url: str, path: Path, hint: str = "") -> str:
    """Stream ``url`` into ``path`` (through ``path.part``); its sha256; ``hint`` ends the
    message of a download that fails. A response shorter
    than its Content-Length is refused."""
    import urllib.error
    import urllib.request

    part = path.with_name(path.name + ".part")
    digest, size = hashlib.sha256(), 0
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "introspect-data"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, part.open("wb") as out:
            # only once the source answered: a refusal is then the command's one line
            print(f"downloading {url}", flush=True)  # stdout: stderr holds only a refusal
            expected = response.headers.get("Content-Length")
            for chunk in iter(lambda: response.read(CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
    except (urllib.error.URLError, OSError, ValueError) as exc:  # HTTP errors, refused, reset, timeout
        raise DataError(f"cannot download {url}: {getattr(exc, 'reason', None) or exc}{hint}") from None
    if expected is not None and size != int(expected):
        raise DataError(f"{url}: the download stopped after {size} of {int(expected)} bytes (truncated)")
    part.rename(path)
    return digest.hexdigest()


def unpack(item: Download, path: Path, folder: Path) -> None:
    """Extract an archive into ``folder`` (already a scratch folder) and drop the archive."""
    if item.unpack == "none":
        return
    import tarfile
    import zipfile

    try:
        if item.unpack == "zip":
            with zipfile.ZipFile(path) as archive:
                archive.extractall(folder)  # zipfile drops absolute and ".." parts of member names
        else:
            with tarfile.open(path, "r:bz2") as archive:
                archive.extractall(folder, filter="data")  # nothing outside folder, no devices
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(f"{item.file} is not a readable {item.unpack} archive: {exc}") from None
    path.unlink()


def check_counts(item: Download, path: Path, folder: Path) -> None:
    """Parse what ``item`` installed and compare its counts with the expected ones."""
    found = count(item, path, folder)
    expected = item.at_least if isinstance(item.at_least, dict) else {"": item.at_least}
    short = {part: (found.get(part, 0), least) for part, least in expected.items() if found.get(part, 0) < least}
    if short:
        what = ", ".join(
            f"{part + ': ' if part else ''}{got} {item.count} (expected at least {least})"
            for part, (got, least) in short.items()
        )
        raise DataError(f"{item.file} is not the full data: {what}")


def count(item: Download, path: Path, folder: Path) -> Counter[str]:
    """What ``item.count`` names, counted ("" for a whole file; split names for games)."""
    if item.count == "games":
        return Counter(p.relative_to(folder).parts[1] for p in folder.glob("json_2.1.1/*/*/*/game.tw-pddl"))
    if item.count == "members":
        return Counter({"": sum(1 for p in folder.rglob("*") if p.is_file())})
    return Counter({"": json_count(path, records=item.count == "records")})


def json_count(path: Path, *, records: bool) -> int:
    """The items of the JSON array (or the keys of the JSON object) ``path`` holds, streamed;
    with ``records``, the items of the object's lists. Malformed JSON is refused."""
    import ijson

    def entries(handle: Any) -> Any:
        first = handle.read(1)
        while first.isspace():
            first = handle.read(1)
        handle.seek(handle.tell() - 1)
        if first == b"[" and not records:
            return ijson.items(handle, "item", use_float=True)
        if first == b"{":
            pairs = ijson.kvitems(handle, "", use_float=True)
            return (r for _, value in pairs for r in value) if records else pairs
        raise DataError(f"{path.name} is not {'a JSON object' if records else 'a JSON array or object'}")

    try:
        with path.open("rb") as handle:
            return sum(1 for _ in entries(handle))
    except (ijson.JSONError, ValueError, TypeError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]  # yajl adds lines pointing at the spot
        raise DataError(f"{path.name} is not valid JSON in the benchmark's format: {reason}") from None
