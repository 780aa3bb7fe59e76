"""``introspect data``: the full data of each benchmark listed, and ``data get NAME`` installing
it from a local HTTP server the tests start (small files in the official formats, the
expected counts lowered to theirs), after which the envs use it without options; bad and
partial downloads refused in one line with nothing left in INTROSPECT_HOME; results rows
recording which data they ran on."""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import http.server
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.alfworld import ALFWorldEnv
from envs.alfworld.games import SHIPPED_ROOT
from envs.datasets import DATASETS, MANIFEST
from envs.hotpotqa import HotpotQAEnv
from envs.hotpotqa.questions import SHIPPED_QUESTIONS
from envs.webshop import WebShopEnv
from envs.webshop.catalogue import DATA_DIR
from graphs import method_named
from introspect.cli import main
from introspect.evaluate import evaluate, read_rows
from nodes.laser.context import LaserContext


class Server:
    """Serves ``files`` (name -> bytes); a name in ``truncated`` announces its full length and
    sends half of it, then closes the connection."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncated: set[str] = set()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                name = self.path.lstrip("/")
                if name not in server.files:
                    self.send_error(404)
                    return
                body = server.files[name]
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if name in server.truncated else body)
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def server() -> Iterator[Server]:
    served = Server()
    thread = threading.Thread(target=served.httpd.serve_forever, daemon=True)
    thread.start()
    yield served
    served.httpd.shutdown()
    served.httpd.server_close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An INTROSPECT_HOME that does not exist yet; the mirror variable and ALFWORLD_DATA unset."""
    folder = tmp_path / "home"
    monkeypatch.setenv("INTROSPECT_HOME", str(folder))
    monkeypatch.delenv("INTROSPECT_DATA_MIRROR", raising=False)
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    return folder


def expect(monkeypatch: pytest.MonkeyPatch, name: str, **changes: object) -> None:
    """Dataset ``name`` with its downloads changed: file name -> {field: value}."""
    dataset = DATASETS[name]
    downloads = tuple(dataclasses.replace(d, **changes.get(d.file, {})) for d in dataset.downloads)
    monkeypatch.setitem(DATASETS, name, dataclasses.replace(dataset, downloads=downloads))


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*")] if folder.exists() else []


# -- WebShop: 3 products, their attributes and human instructions --------------------------


def webshop_files() -> dict[str, bytes]:
    """Three products of the shipped sample that have human instructions, in WebShop's files."""
    human = json.loads((DATA_DIR / "items_human_ins.json").read_text())
    asins = [a for a, records in human.items() if any(r["instruction_attributes"] for r in records)][:3]
    products = json.loads(gzip.decompress((DATA_DIR / "items_shuffle_1000.json.gz").read_bytes()))
    attributes = json.loads(gzip.decompress((DATA_DIR / "items_ins_v2_1000.json.gz").read_bytes()))
    return {
        "items_shuffle.json": json.dumps([p for p in products if p["asin"] in asins]).encode(),
        "items_ins_v2.json": json.dumps({a: attributes[a] for a in asins}).encode(),
        "items_human_ins.json": json.dumps({a: human[a] for a in asins}).encode(),
    }


def small_webshop(monkeypatch: pytest.MonkeyPatch, server: Server) -> dict[str, bytes]:
    files = webshop_files()
    server.files.update(files)
    expect(
        monkeypatch,
        "webshop",
        **{"items_shuffle.json": {"at_least": 3}, "items_human_ins.json": {"at_least": 3}},
    )
    return files


def test_data_lists_each_benchmarks_full_data(capsys):
    assert main(["data"]) == 0
    out = capsys.readouterr().out
    for name, host in (
        ("webshop", "github.com/princeton-nlp/WebShop"),
        ("alfworld", "github.com/alfworld/alfworld"),
        ("hotpotqa", "github.com/hotpotqa/hotpot"),
        ("hotpotqa-abstracts", "hotpotqa.github.io"),
    ):
        block = next(b for b in out.split("\n\n") if b.startswith(f"{name}  "))
        dataset = DATASETS[name]
        assert host in block and f"introspect data get {name}" in block
        for label, value in (
            ("source", dataset.source),
            ("size", dataset.size),
            ("licence", dataset.licence),
            ("enables", dataset.enables),
        ):
            assert f"  {label}:" in block and value in block


def test_data_list_is_the_listing_the_help_names(capsys):
    assert main(["data"]) == 0
    listed = capsys.readouterr().out
    assert main(["data", "list"]) == 0 and capsys.readouterr().out == listed


def test_an_unreachable_source_names_the_mirror(capsys, monkeypatch, home):
    """Offline, the official URL cannot be reached: the refusal says how to download from elsewhere."""
    expect(monkeypatch, "hotpotqa", **{"hotpot_dev_distractor_v1.json": {"url": "http://127.0.0.1:9/x.json"}})
    assert main(["data", "get", "hotpotqa"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("introspect: cannot download http://127.0.0.1:9/x.json") and "--mirror URL" in err
    assert len(err.splitlines()) == 1 and files_under(home) == []


@pytest.mark.parametrize("mirror", ["http://127.0.0.1:UNUSED", "file:///etc", "file:///etc/"])
def test_an_unusable_mirror_is_refused_in_one_line(mirror, capsys, monkeypatch, home):
    """A mirror that does not answer (nothing listens, a folder without the files) is one line
    in all: nothing says "downloading" before the source has answered."""
    from tests.support.studio import free_port

    assert main(["data", "get", "webshop", "--mirror", mirror.replace("UNUSED", str(free_port()))]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("introspect: cannot download ") and len(err.strip().splitlines()) == 1
    assert files_under(home) == []


def test_get_webshop_installs_it_and_the_env_serves_it(capsys, monkeypatch, home, server):
    files = small_webshop(monkeypatch, server)
    published = hashlib.sha256(files["items_ins_v2.json"]).hexdigest()
    expect_sha = {"items_ins_v2.json": {"sha256": published}}  # a published checksum that matches
    expect(monkeypatch, "webshop", **expect_sha)
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 0
    assert "installed in" in capsys.readouterr().out
    folder = home / "data" / "webshop"
    assert sorted(p.name for p in folder.iterdir()) == sorted([*files, MANIFEST])
    assert json.loads((folder / MANIFEST).read_text())["sha256"]["items_ins_v2.json"] == published

    env = WebShopEnv()  # no options: the installed data
    catalogue = env._catalogue()
    served = {p["asin"] for p in json.loads(files["items_shuffle.json"])}
    assert catalogue.n_products == 3 and {p["asin"] for p in catalogue.products()} == served
    assert env.task_ids("human") and all(env._goal_of(t)["asin"] in served for t in env.task_ids("human"))
    assert env.data_info().kind == "full"
    assert WebShopEnv(data_dir=str(DATA_DIR))._catalogue().n_products == 1000  # an explicit option wins
    assert main(["data"]) == 0
    assert f"webshop  (env webshop; installed in {folder})" in capsys.readouterr().out


def test_get_alfworld_installs_the_games_and_the_env_lists_them(monkeypatch, home, server):
    unseen = sorted(SHIPPED_ROOT.glob("json_2.1.1/valid_unseen/*/*/game.tw-pddl.gz"))[:2]
    train = sorted(SHIPPED_ROOT.glob("json_2.1.1/valid_train/*/*/game.tw-pddl.gz"))[:1]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as out:
        for path, split in [(p, "valid_unseen") for p in unseen] + [(p, "train") for p in train]:
            trial = path.parent.relative_to(path.parents[2])
            out.writestr(f"json_2.1.1/{split}/{trial.as_posix()}/game.tw-pddl", gzip.decompress(path.read_bytes()))
    server.files["json_2.1.1_tw-pddl.zip"] = archive.getvalue()
    least = {"train": 1, "valid_seen": 0, "valid_unseen": 2}
    expect(monkeypatch, "alfworld", **{"json_2.1.1_tw-pddl.zip": {"at_least": least}})

    assert main(["data", "get", "alfworld", "--mirror", server.url]) == 0
    assert not (home / "data" / "alfworld" / "json_2.1.1_tw-pddl.zip").exists()  # the archive is unpacked, gone
    env = ALFWorldEnv()
    expected = sorted(f"json_2.1.1/valid_unseen/{p.parent.relative_to(p.parents[2]).as_posix()}" for p in unseen)
    assert env.task_ids("valid_unseen") == expected
    assert len(env.task_ids("train")) == 1
    assert env.data_info().kind == "full"


def test_get_hotpotqa_installs_the_dev_set_the_env_asks(monkeypatch, home, server):
    questions = json.loads(gzip.decompress(SHIPPED_QUESTIONS.read_bytes()))
    server.files["hotpot_dev_distractor_v1.json"] = json.dumps(questions[:3]).encode()
    server.files["hotpot_train_v1.1.json"] = json.dumps(questions[3:5]).encode()
    expect(
        monkeypatch,
        "hotpotqa",
        **{"hotpot_dev_distractor_v1.json": {"at_least": 3}, "hotpot_train_v1.1.json": {"at_least": 2}},
    )
    monkeypatch.setenv("INTROSPECT_DATA_MIRROR", server.url)  # the variable, not --mirror
    assert main(["data", "get", "hotpotqa"]) == 0
    assert HotpotQAEnv().task_ids() == [q["_id"] for q in questions[:3]]
    assert HotpotQAEnv(questions=str(SHIPPED_QUESTIONS)).task_ids()[:5] == [q["_id"] for q in questions[:5]]


def test_get_the_abstracts_unpacks_the_dump_in_its_own_layout(monkeypatch, home, server):
    article = {"id": 12, "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism", "text": ["A."]}
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:bz2") as out:
        for part in ("AA/wiki_00.bz2", "AB/wiki_00.bz2"):
            member = bz2.compress((json.dumps(article) + "\n").encode())
            info = tarfile.TarInfo(f"enwiki-20171001-pages-meta-current-withlinks-abstracts/{part}")
            info.size = len(member)
            out.addfile(info, io.BytesIO(member))
    dump = "enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2"
    server.files[dump] = archive.getvalue()
    expect(monkeypatch, "hotpotqa-abstracts", **{dump: {"at_least": 2}})
    assert main(["data", "get", "hotpotqa-abstracts", "--mirror", server.url]) == 0
    folder = home / "data" / "hotpotqa-abstracts"
    parts = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.bz2"))
    assert parts == [
        f"enwiki-20171001-pages-meta-current-withlinks-abstracts/{p}" for p in ("AA/wiki_00.bz2", "AB/wiki_00.bz2")
    ]
    assert not (folder / dump).exists()  # the archive is unpacked, gone
    first = bz2.decompress((folder / parts[0]).read_bytes())
    assert json.loads(first)["title"] == "Anarchism"


def test_an_archive_reaching_outside_its_folder_is_refused(capsys, monkeypatch, home, server):
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:bz2") as out:
        info = tarfile.TarInfo("../../escaped.txt")
        info.size = 2
        out.addfile(info, io.BytesIO(b"hi"))
    server.files["enwiki-20171001-pages-meta-current-withlinks-abstracts.tar.bz2"] = archive.getvalue()
    assert main(["data", "get", "hotpotqa-abstracts", "--mirror", server.url]) == 2
    assert "is not a readable tar.bz2 archive" in capsys.readouterr().err
    assert not home.exists() and not (home.parent / "escaped.txt").exists()


def _truncated(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    server.truncated.add("items_human_ins.json")
    return "truncated"


def _bad_checksum(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    expect(monkeypatch, "webshop", **{"items_shuffle.json": {"sha256": "0" * 64}})
    return "sha256"


def _too_few(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    expect(monkeypatch, "webshop", **{"items_shuffle.json": {"at_least": 4}})  # the 3-product file is not it
    return "3 items (expected at least 4)"


def _not_json(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    server.files["items_ins_v2.json"] = b"<html>Google Drive can't scan this file for viruses</html>"
    return "items_ins_v2.json is not a JSON array or object"


def _cut_json(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    whole = server.files["items_shuffle.json"]
    server.files["items_shuffle.json"] = whole[: len(whole) // 2]  # its length announced as it is
    return "items_shuffle.json is not valid JSON"


def _missing(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    del server.files["items_human_ins.json"]
    return "Not Found"


@pytest.mark.parametrize("spoil", [_truncated, _bad_checksum, _too_few, _not_json, _cut_json, _missing])
def test_a_bad_or_partial_download_is_refused_and_leaves_nothing(spoil, capsys, monkeypatch, home, server):
    small_webshop(monkeypatch, server)
    said = spoil(server, monkeypatch)
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 2
    refusal = capsys.readouterr().err.splitlines()
    assert len(refusal) == 1 and refusal[0].startswith("introspect: ") and said in refusal[0]
    assert not home.exists(), files_under(home)  # nothing half-installed, not even the folders


def test_an_unwritable_home_is_refused_in_one_line(capsys, monkeypatch, tmp_path, server):
    small_webshop(monkeypatch, server)
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "afile"))
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("introspect: cannot write into") and "INTROSPECT_HOME=" in err[0]
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_a_folder_left_in_the_way_is_refused_before_any_download(capsys, monkeypatch, home, server):
    small_webshop(monkeypatch, server)
    (home / "data" / "webshop").mkdir(parents=True)
    (home / "data" / "webshop" / "items_shuffle.json").write_text("[]")  # someone's half copy
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 2
    out, err = capsys.readouterr()
    assert "downloading" not in out and "not a complete install" in err
    assert [p.name for p in files_under(home / "data")] == ["webshop", "items_shuffle.json"]


def test_an_installed_dataset_is_kept(capsys, monkeypatch, home, server):
    small_webshop(monkeypatch, server)
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 0
    manifest = (home / "data" / "webshop" / MANIFEST).read_text()
    server.files.clear()  # nothing is downloaded again
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 0
    assert "already installed" in capsys.readouterr().out
    assert (home / "data" / "webshop" / MANIFEST).read_text() == manifest


async def test_rows_record_the_data_they_ran_on(tmp_path, monkeypatch, home, server):
    context = LaserContext(model="scripted:none.jsonl", env="webshop")

    async def ran(task_id: str) -> dict:
        return {"task_id": task_id, "method": "laser", "env": "webshop", "model": context.model, "reward": 0.0}

    sample = tmp_path / "sample.jsonl"
    await evaluate(method_named("laser"), context, ["0"], sample, None, run=ran)
    shipped = [
        DATA_DIR / n for n in ("items_human_ins.json", "items_ins_v2_1000.json.gz", "items_shuffle_1000.json.gz")
    ]
    digest = hashlib.sha256()
    for path in sorted(p.resolve() for p in shipped):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    assert read_rows(sample)[0]["data"] == {"name": "webshop", "kind": "sample", "sha256": digest.hexdigest()}

    small_webshop(monkeypatch, server)
    assert main(["data", "get", "webshop", "--mirror", server.url]) == 0
    full = tmp_path / "full.jsonl"
    await evaluate(method_named("laser"), context, ["0"], full, None, run=ran)
    manifest = (home / "data" / "webshop" / MANIFEST).read_bytes()
    expected = hashlib.sha256(MANIFEST.encode() + b"\0" + manifest).hexdigest()
    assert read_rows(full)[0]["data"] == {"name": "webshop", "kind": "full", "sha256": expected}

    async def on_a_server(task_id: str) -> dict:  # a server's env read the server's data
        return {**await ran(task_id), "data": None}

    remote = tmp_path / "remote.jsonl"
    await evaluate(method_named("laser"), context, ["0"], remote, None, run=on_a_server)
    assert read_rows(remote)[0]["data"] is None
