"""HotpotQA env: ReAct's search/lookup/finish on the local corpus, scoring, snapshots, backends."""

from __future__ import annotations

import ast
import bz2
import gzip
import json
import socket
from pathlib import Path

import pytest
from aiohttp import web

from envs import EnvError, UnknownTaskError, make_env
from envs.datasets import MANIFEST, manifest_text
from envs.hotpotqa.env import _dump, _questions
from envs.hotpotqa.questions import FULL_DEV, FULL_TRAIN, SHIPPED_QUESTIONS, SHIPPED_SPLIT
from envs.hotpotqa.score import (
    exact_match,
    f1,
    judged_correct,
    normalize_answer,
)
from nodes.runtime.llm import JUDGE_MAX_TOKENS, Caller, model_for

FIRST = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def paragraphs() -> dict[str, list[str]]:
    data = json.loads(gzip.decompress(SHIPPED_QUESTIONS.read_bytes()))
    return {title: [s.strip() for s in sents] for q in data for title, sents in q["context"]}


@pytest.fixture
async def env():
    env = make_env("hotpotqa", backend="local")
    await env.reset(FIRST)
    return env


async def test_reset_and_task_ids():
    env = make_env("hotpotqa")
    ids = env.task_ids()
    assert len(ids) == 100 and ids[0] == FIRST
    assert len(env.task_ids("bridge")) + len(env.task_ids("comparison")) == 100
    assert env.task_ids("dev[:50]") + env.task_ids("dev[50:]") == ids
    obs = await env.reset(FIRST)
    assert obs.text == "Question: Were Scott Derrickson and Ed Wood of the same nationality?"
    assert obs.info["question"] == obs.text.removeprefix("Question: ")
    with pytest.raises(UnknownTaskError):
        await env.reset("nope")
    with pytest.raises(EnvError):
        env.task_ids("validation")


def test_training_split_is_disjoint_from_the_evaluation_split():
    env = make_env("hotpotqa")
    train, test = env.task_ids("train"), env.task_ids("test")
    assert len(train) == 20 and len(test) == 80 and not set(train) & set(test)
    assert test + train == env.task_ids("dev") and env.task_ids("train[:4]") == train[:4]
    assert env.training_splits == ("train",)


async def test_search_hit_shows_the_first_five_sentences(env):
    result = await env.step("search[Scott Derrickson]")
    assert result.observation.text == " ".join(paragraphs()["Scott Derrickson"])  # 3 sentences
    assert result.valid and result.info["page"] == "Scott Derrickson"
    sentences = paragraphs()["James P. Comer"]  # any page of the local wiki, not only this question's
    assert len(sentences) == 10
    long = await env.step("search[James P. Comer]")
    assert long.observation.text == " ".join(sentences[:5])
    again = await env.step("search[  james_p._comer ]")  # title match ignores case and underscores
    assert again.observation.text == long.observation.text


async def test_quoted_arguments_lose_their_quotes_as_in_autoplans_code(env):
    found = await env.step('search["Ed Wood"]')
    assert found.info["page"] == "Ed Wood" and found.observation.text == " ".join(paragraphs()["Ed Wood"][:5])
    assert (await env.step("search['Scott Derrickson']")).info["page"] == "Scott Derrickson"
    assert (await env.step('lookup["horror"]')).observation.text.startswith("(Result 1 / ")
    answered = await env.step('finish["yes"]')
    assert answered.info["answer"] == "yes" and answered.info["em"] == 1.0


async def test_search_miss_lists_similar_titles(env):
    result = await env.step("search[Derrickson horror director]")
    text = result.observation.text
    assert text.startswith("Could not find Derrickson horror director. Similar: [")
    similar = ast.literal_eval(text.split("Similar: ", 1)[1].rstrip("."))
    assert 1 <= len(similar) <= 5 and similar[0] == "Scott Derrickson"
    assert result.info["page"] is None and result.valid


async def test_a_search_miss_can_read_as_autoplans_code_words_it():
    env = make_env("hotpotqa", backend="local", augmented_feedback=True)  # the paper keeps ReAct's (the default above)
    await env.reset(FIRST)
    text = (await env.step("search[Derrickson horror director]")).observation.text
    assert text.startswith(
        'Could not find exact match of "Derrickson horror director". '
        'Available entities in the database: "Scott Derrickson"'
    )
    assert text.endswith(
        "The search API only returns the paragraph if the search query matches every character "
        "to an entity in the database."
    )


async def test_lookup_steps_through_results_then_ends(env):
    await env.step("search[Tyler Bates]")
    hits = [s for s in paragraphs()["Tyler Bates"] if "film" in s.lower()]
    assert len(hits) == 3
    seen = [(await env.step("lookup[film]")).observation.text for _ in range(4)]
    assert seen[:3] == [f"(Result {i} / 3) {hits[i - 1]}" for i in (1, 2, 3)]
    assert seen[3] == "No more results."
    restart = await env.step("lookup[FILM]")  # another keyword starts over
    assert restart.observation.text == f"(Result 1 / 3) {hits[0]}"
    await env.step("search[Ed Wood]")  # a new page clears the lookup
    assert (await env.step("lookup[film]")).observation.text.startswith("(Result 1 / ")


async def test_finish_scores_exact_match_and_f1(env):
    result = await env.step("finish[Yes.]")
    assert result.done and result.reward == 1.0
    assert result.observation.text == "Episode finished, reward = 1"
    assert result.info["em"] == 1.0 and result.info["f1"] == 1.0 and result.success is True
    assert result.info["gold"] == "yes" and result.info["answer"] == "Yes."
    after = await env.step("search[Ed Wood]")
    assert after.done and after.valid is False and after.feedback == "The episode has ended."
    assert {"valid", "feedback", "success"}.isdisjoint(result.info) and "evaluation" in result.info
    other = make_env("hotpotqa", backend="local")
    await other.reset(other.task_ids()[4])  # gold: "Greenwich Village, New York City"
    partial = await other.step("finish[Greenwich Village in New York]")
    assert partial.reward == 0.0 and partial.success is False
    assert partial.info["f1"] == pytest.approx(2 * (4 / 5) * (4 / 5) / (8 / 5))  # P = R = 4/5


def test_answer_normalisation_em_and_f1_by_hand():
    assert normalize_answer("The  Eiffel-Tower, in Paris!") == "eiffeltower in paris"
    assert exact_match("the Animorphs", "Animorphs") and not exact_match("Animorph", "Animorphs")
    # pred 4 tokens, gold 5 tokens, 4 shared: P = 1, R = 4/5, F1 = 2 * 0.8 / 1.8
    assert f1("Greenwich Village New York", "Greenwich Village, New York City") == pytest.approx(8 / 9)
    # 1 shared of pred 2 / gold 3: P = 1/2, R = 1/3, F1 = 2 * (1/6) / (5/6) = 0.4
    assert f1("Badly Boy", "Badly Drawn Boy.") == pytest.approx(0.8)
    assert f1("yes it is", "yes") == 0.0  # the official yes/no/noanswer rule
    assert f1("No", "no.") == 1.0 and f1("no", "yes") == 0.0
    assert f1("something else", "Animorphs") == 0.0


async def test_invalid_actions_get_feedback(env):
    bad = await env.step("dance[tango]")
    assert bad.observation.text == "Invalid action: dance[tango]"
    assert bad.valid is False and "search[entity]" in bad.feedback
    empty = await env.step("search[]")
    assert empty.valid is False and empty.feedback == "search[] needs an argument."
    no_page = await env.step("lookup[film]")
    assert no_page.observation.text == "No more results." and no_page.valid is False
    assert "search[entity] first" in no_page.feedback
    thought = await env.step("think[Both seem American.]")
    assert thought.observation.text == "Nice thought." and thought.valid
    assert thought.info["steps"] == 4 and not thought.done


async def test_step_cap_ends_the_episode_unanswered():
    env = make_env("hotpotqa", backend="local", max_steps=2)
    await env.reset(FIRST)
    assert not (await env.step("search[Ed Wood]")).done
    last = await env.step("lookup[American]")
    assert last.done and last.reward == 0.0 and last.info["stop_reason"] == "max_steps"
    assert last.success is False and last.info["answer"] is None


async def test_snapshot_restore_on_a_fresh_instance(env):
    await env.step("search[Tyler Bates]")
    first = await env.step("lookup[film]")
    snap = await env.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    fresh = make_env("hotpotqa", backend="local")
    obs = await fresh.restore(snap)
    assert obs.text == first.observation.text and obs.info["page"] == "Tyler Bates"
    a, b = await env.step("lookup[film]"), await fresh.step("lookup[film]")
    assert a.observation.text == b.observation.text and a.observation.text.startswith("(Result 2 / 3)")
    assert b.info["steps"] == 3


async def test_wikipedia_backend_offline_is_a_one_line_env_error():
    with socket.socket() as sock:  # a local port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = make_env("hotpotqa", backend="wikipedia", api_url=f"http://127.0.0.1:{port}/w/api.php", timeout=2)
    await env.reset(FIRST)
    with pytest.raises(EnvError) as caught:
        await env.step("search[Ed Wood]")
    message = str(caught.value)
    assert "\n" not in message and "Wikipedia is unreachable" in message and "backend='local'" in message


OLD_REVISION = """<html><body><div id="mw-revision-info"><p>Revision as of 2017</p></div>
<div class="mw-parser-output"><p>Ed Wood was a filmmaker. He was American.</p>
<p>He died in 1978. His films were cheap.</p><p>See also</p>
<ul><li>Glen or Glenda is one of his films.</li></ul></div>
<ul id="footer"><li>Privacy policy</li></ul></body></html>"""


@pytest.fixture
async def mediawiki():
    """A fake MediaWiki (api.php and index.php) that records every request it gets."""
    seen: list[dict[str, str]] = []

    async def api(request: web.Request) -> web.Response:
        q = dict(request.query)
        seen.append({"path": "api.php", **q})
        if q.get("list") == "search":
            found = ["Ed Wood", "Ed Wood (film)", "Edward Wood", "Wood", "Ed", "Woods"]
            if q["srsearch"] == "Mercury":
                found = ["Mercury"]
            return web.json_response({"query": {"search": [{"title": t} for t in found]}})
        assert q.get("prop") == "revisions"
        if q["titles"] == "Ed Wood":  # formatversion 1, as the original reads it: pages by id
            return web.json_response({"query": {"pages": {"1": {"title": "Ed Wood", "revisions": [{"revid": 7001}]}}}})
        return web.json_response({"query": {"pages": {"2": {"title": q["titles"], "revisions": [{"revid": 7002}]}}}})

    async def index(request: web.Request) -> web.Response:
        q = dict(request.query)
        seen.append({"path": "index.php", **q})
        if q.get("oldid") == "7001":
            return web.Response(text=OLD_REVISION, content_type="text/html")
        return web.Response(text="<p>x</p><ul><li>Mercury may refer to: a planet, an element.</li></ul>")

    app = web.Application()
    app.router.add_get("/w/api.php", api)
    app.router.add_get("/w/index.php", index)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/w/api.php", seen
    finally:
        await runner.cleanup()


async def test_wikipedia_pages_are_their_last_revision_before_2017_10_01(mediawiki):
    api_url, seen = mediawiki
    env = make_env("hotpotqa", backend="wikipedia", api_url=api_url)
    await env.reset(FIRST)
    hit = await env.step("search[Ed Wood]")
    # the <p>s then the <ul>s, the first block dropped (the revision notice), those of 2 words or fewer
    # ("See also", "Privacy policy") left out; the first 5 sentences shown as the code's get_page_obs
    # splits them (spaCy) and words them (a "." appended to each, so "..")
    assert hit.observation.text == (
        "Ed Wood was a filmmaker.. He was American.. He died in 1978.. His films were cheap.. "
        "Glen or Glenda is one of his films.."
    )
    assert hit.info["page"] == "Ed Wood" and hit.info["corpus"] == "wikipedia-2017-10-01"
    assert hit.info["caveat"] == SHIPPED_SPLIT and hit.info["comparable"] is False  # the corpus is; the sample is not
    assert (await env.step("lookup[films]")).observation.text == "(Result 1 / 2) His films were cheap."
    assert (await env.step("lookup[films]")).observation.text == "(Result 2 / 2) Glen or Glenda is one of his films."
    # the requests AutoPlan's code sends: search (default limit), the revision before the date, that revision
    search, revision, page = seen
    assert search == {"path": "api.php", "action": "query", "format": "json", "list": "search", "srsearch": "Ed Wood"}
    assert revision == {
        "path": "api.php",
        "action": "query",
        "format": "json",
        "prop": "revisions",
        "titles": "Ed Wood",
        "rvlimit": "1",
        "rvdir": "older",
        "rvstart": "20171001000000",
    }
    assert page == {"path": "index.php", "title": "Ed Wood", "oldid": "7001"}


async def test_wikipedia_misses_list_the_searchs_first_five_titles(mediawiki):
    api_url, seen = mediawiki
    env = make_env("hotpotqa", backend="wikipedia", api_url=api_url)
    await env.reset(FIRST)
    miss = await env.step("search[ed wood]")  # not a title character for character: a miss, as in the original
    assert miss.observation.text == (
        "Could not find ed wood. Similar: ['Ed Wood', 'Ed Wood (film)', 'Edward Wood', 'Wood', 'Ed']."
    )
    assert [r.get("list") for r in seen] == ["search"]  # no page fetched
    ambiguous = await env.step("search[Mercury]")  # a disambiguation page opens nothing
    assert (
        ambiguous.observation.text == "Could not find Mercury. Similar: ['Mercury']." and ambiguous.info["page"] is None
    )


UNRELATED = {  # a small Wikipedia of its own: none of these is a page of the shipped questions
    "Anarchism": ["Anarchism is a political philosophy.", "It was born in Washington, D.C. in 1924 and grew."],
    "Apollo": ["Apollo is a god of the Greek and Roman religion.", "He is the son of Zeus."],
    "Film": ["A film is a work of visual art.", "The American film industry is the oldest."],
    "Band": ["A band is a group of musicians.", "Who was the first band of the same name?"],
}


@pytest.fixture
async def small_wikipedia():
    """A fake MediaWiki whose search ranks ``UNRELATED``'s titles by the words they share with the
    search text, as the API's list=search finds pages by their words, and serves their revisions."""
    searched: list[str] = []

    def words(text: str) -> set[str]:
        return {w.lower() for w in text.replace("?", " ").split()}

    async def api(request: web.Request) -> web.Response:
        q = dict(request.query)
        if q.get("list") == "search":
            searched.append(q["srsearch"])
            shared = {t: len(words(q["srsearch"]) & words(t + " " + " ".join(p))) for t, p in UNRELATED.items()}
            found = sorted((t for t, n in shared.items() if n), key=lambda t: -shared[t])
            return web.json_response({"query": {"search": [{"title": t} for t in found]}})
        return web.json_response({"query": {"pages": {"1": {"title": q["titles"], "revisions": [{"revid": 9}]}}}})

    async def index(request: web.Request) -> web.Response:
        body = "".join(f"<p>{s}</p>" for s in UNRELATED[request.query["title"]])
        return web.Response(text=f"<p>Revision notice</p>{body}", content_type="text/html")

    app = web.Application()
    app.router.add_get("/w/api.php", api)
    app.router.add_get("/w/index.php", index)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/w/api.php", searched
    finally:
        await runner.cleanup()


def gold_pages_listed(text: str, record: dict) -> list[str]:
    """The gold titles a search for the question shows: on a miss, among the titles it suggests
    (the search text it repeats left out); on a page opened, anywhere."""
    shown = text.rsplit(" Similar: ", 1)[-1]
    return [title for title, _ in record["supporting_facts"] if title in shown]


async def test_the_default_backend_leaks_no_gold_page_for_a_search_of_the_question(small_wikipedia):
    api_url, searched = small_wikipedia
    default, local = make_env("hotpotqa", api_url=api_url), make_env("hotpotqa", backend="local")
    leaked: dict[str, list[str]] = {}
    local_leaks = 0
    test = default.task_ids("test")
    for qid in test:
        record = default.by_id[qid]
        await default.reset(qid)
        seen = (await default.step(f"search[{record['question']}]")).observation.text
        leaked.update({qid: gold_pages_listed(seen, record)} if gold_pages_listed(seen, record) else {})
        await local.reset(qid)
        searched_locally = await local.step(f"search[{record['question']}]")
        local_leaks += bool(gold_pages_listed(searched_locally.observation.text, record))
    assert leaked == {}
    assert searched == [default.by_id[q]["question"].strip() for q in test]  # every search asked the server
    assert local_leaks >= 70  # the opt-in local corpus lists a gold page for most (77 of 80)
    assert (await default.reset(test[0])).info["corpus"] == "wikipedia-2017-10-01"


async def test_wikipedias_opening_splits_sentences_as_spacy_does(small_wikipedia):
    api_url, _ = small_wikipedia
    env = make_env("hotpotqa", api_url=api_url)
    await env.reset(FIRST)
    hit = await env.step("search[Anarchism]")
    # ". " would split "D.C. in 1924" in two; spaCy's sentences (AutoPlan's get_page_obs) do not
    shown = "Anarchism is a political philosophy.. It was born in Washington, D.C. in 1924 and grew.."
    assert hit.observation.text == shown
    assert (await env.step("lookup[1924]")).observation.text == "(Result 1 / 1) in 1924 and grew."  # lookup: ". "


async def test_the_judge_is_asked_of_every_answer_and_read_as_autoplans_code_reads_it(write_script):
    replies = ["No, it is not.", "The two name the same place.\nYES", "NO", "No. Yes would be wrong."]
    spec = write_script([{"content": r} for r in replies])
    caller = Caller(spec, temperature=None, max_tokens=64, calls_before=0)
    judge = caller.judge()
    question = "Where did the singer grow up?"
    # an exact match is asked too (AutoPlan's HotpotQA.score asks of every answer), and its "No" counts
    assert await judged_correct(question, "New York City", "the New York City", judge) is False
    assert await judged_correct(question, "New York City", "NYC", judge) is True
    assert await judged_correct(question, "New York City", "Boston", judge) is False
    assert await judged_correct(question, "New York City", "Queens", judge) is True  # 'yes' in reply.lower()
    calls = model_for(spec, 0.0, JUDGE_MAX_TOKENS).calls
    assert len(calls) == 4 and caller.usage["model_calls"] == 4
    shown = calls[1]["messages"][0].content
    assert shown == (
        f'Question: "{question}"\n\nGold Answer: "New York City"\n\nMy Prediction: "NYC"\n\n'
        "Verify whether my prediction to the question is equivalent to gold answer. Respond with yes/no."
    )


def question(qid: str, level: str = "hard", kind: str = "bridge") -> dict:
    """A record in the official schema (hotpot_train_v1.1.json / hotpot_dev_distractor_v1.json)."""
    return {
        "_id": qid,
        "question": f"Question {qid}?",
        "answer": "yes",
        "type": kind,
        "level": level,
        "supporting_facts": [[f"Page {qid}", 0]],
        "context": [[f"Page {qid}", [f"Page {qid} is a page.", " It has two sentences."]]],
    }


def write_questions(path, records) -> str:
    path.write_text(json.dumps(records), encoding="utf-8")
    return str(path)


def test_the_official_files_give_the_papers_seeded_draw_of_50_hard_and_200_dev(tmp_path):
    levels = ["hard", "medium", "easy"]
    train = write_questions(tmp_path / "train.json", [question(f"t{i}", levels[i % 3]) for i in range(180)])
    dev = write_questions(tmp_path / "dev.json", [question(f"d{i}") for i in range(230)])
    env = make_env("hotpotqa", questions=dev, train_questions=train)
    drawn_train, drawn_test = env.task_ids("train"), env.task_ids("test")
    assert len(drawn_train) == 50 == len(set(drawn_train)) and len(drawn_test) == 200 == len(set(drawn_test))
    assert all(env.by_id[q]["level"] == "hard" for q in drawn_train) and all(q.startswith("t") for q in drawn_train)
    assert set(drawn_test) <= set(env.task_ids("dev")) and len(env.task_ids("dev")) == 230
    assert drawn_test != env.task_ids("dev")[:200] and drawn_train != [f"t{i}" for i in range(0, 150, 3)]  # drawn
    again = make_env("hotpotqa", questions=dev, train_questions=train)
    assert again.task_ids("train") == drawn_train and again.task_ids("test") == drawn_test  # seeded
    other = make_env("hotpotqa", questions=dev, train_questions=train, seed=1)
    assert other.task_ids("train") != drawn_train and other.task_ids("test") != drawn_test
    # the paper's split on the default backend, Wikipedia as of 2017-10-01: comparable with the paper
    assert env.provenance() == {"corpus": "wikipedia-2017-10-01", "comparable": True, "caveat": ""}


async def test_a_drawn_training_question_can_be_played(tmp_path):
    train = write_questions(tmp_path / "train.json", [question(f"t{i}") for i in range(50)])
    dev = write_questions(tmp_path / "dev.json", [question(f"d{i}") for i in range(200)])
    env = make_env("hotpotqa", backend="local", questions=dev, train_questions=train)
    await env.reset("t7")
    assert (await env.step("search[Page t7]")).observation.text == "Page t7 is a page. It has two sentences."


def test_too_few_hard_training_questions_for_the_papers_draw_is_one_line(tmp_path):
    train = write_questions(tmp_path / "train.json", [question(f"t{i}", "medium") for i in range(60)])
    env = make_env("hotpotqa", train_questions=train)
    with pytest.raises(EnvError, match="draws 50 hard training questions, but the file has 0"):
        env.task_ids("train")
    with pytest.raises(EnvError, match="seed='x': expected an integer"):
        make_env("hotpotqa", train_questions=train, seed="x")


def install_hotpotqa(home, dev: list[dict], train: list[dict]) -> Path:
    """The full data as ``introspect data get hotpotqa`` leaves it: the official files and the manifest."""
    folder = home / "data" / "hotpotqa"
    folder.mkdir(parents=True)
    write_questions(folder / FULL_DEV, dev)
    write_questions(folder / FULL_TRAIN, train)
    (folder / MANIFEST).write_text(manifest_text("hotpotqa", {FULL_DEV: "x", FULL_TRAIN: "y"}))
    return folder


async def test_the_installed_train_file_gives_the_papers_draw_read_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path))
    levels = ["hard", "medium", "easy"]
    train = [question(f"t{i}", levels[i % 3]) for i in range(180)]
    folder = install_hotpotqa(tmp_path, [question(f"d{i}") for i in range(230)], train)
    env = make_env("hotpotqa")
    assert env.task_ids("dev[:2]") == ["d0", "d1"]
    assert env.questions.splits == {}  # nothing drawn yet: an evaluation never reads the training file
    drawn = env.task_ids("train")
    assert drawn == make_env("hotpotqa", train_questions=str(folder / FULL_TRAIN)).task_ids("train")  # seeded
    assert len(set(drawn)) == 50 and {q for q in drawn} <= {q["_id"] for q in train if q["level"] == "hard"}
    assert len(env.task_ids("test")) == 200 and set(env.task_ids("test")) <= {f"d{i}" for i in range(230)}
    assert "split" not in env.provenance()["caveat"]  # the paper's draw, not the sample's split
    assert env.data_info().kind == "full"
    # a new process (a resumed run) plays a drawn training question: reset draws them, in a worker thread
    _questions.cache_clear()
    fresh = make_env("hotpotqa", backend="local")
    await fresh.reset(drawn[0])
    found = await fresh.step(f"search[Page {drawn[0]}]")
    assert found.observation.text == f"Page {drawn[0]} is a page. It has two sentences."
    # a questions file given explicitly keeps its own split: the installed train file goes with the installed dev set
    given = write_questions(tmp_path / "mine.json", [question(f"m{i}") for i in range(10)])
    assert make_env("hotpotqa", questions=given).task_ids("train") == [f"m{i}" for i in range(5, 10)]


async def test_every_step_and_result_of_the_local_corpus_is_marked_not_comparable():
    env = make_env("hotpotqa", backend="local", max_steps=2)
    obs = await env.reset(FIRST)
    assert obs.info["corpus"] == "distractor" and obs.info["comparable"] is False
    assert obs.info["caveat"] == f"distractor corpus: not comparable with the paper; {SHIPPED_SPLIT}"
    assert "the last 20" in SHIPPED_SPLIT and "first 80" in SHIPPED_SPLIT
    await env.step("search[Ed Wood]")
    capped = await env.step("lookup[American]")  # unanswered: the evaluation says so, with its caveat
    assert capped.info["evaluation"]["answer"] is None and capped.info["evaluation"]["em"] == 0.0
    assert capped.info["evaluation"]["caveat"] == obs.info["caveat"]
    await env.reset(FIRST)
    answered = await env.step("finish[yes]")
    assert answered.info["evaluation"]["comparable"] is False and answered.info["evaluation"]["corpus"] == "distractor"


async def test_a_judge_set_but_not_handed_over_is_an_error_not_an_exact_match():
    env = make_env("hotpotqa", backend="local", judge="openai:gpt-4-0314")
    await env.reset(FIRST)
    with pytest.raises(EnvError, match="judge=openai:gpt-4-0314 is set but no judge model"):
        await env.step("finish[They were both American]")
    await env.reset(FIRST)
    with pytest.raises(EnvError, match="no judge model"):  # an exact match is judged too, as the code does
        await env.step("finish[yes]")


def write_dump(folder, shards: dict[str, list[dict]]) -> None:
    """HotpotQA's abstracts dump layout: FOLDER/AA/wiki_00.bz2, JSON lines of articles."""
    for name, records in shards.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bz2.compress("".join(json.dumps(r) + "\n" for r in records).encode()))


def abstract(page_id: int, title: str, sentences: list[str]) -> dict:
    """One article as the dump holds it (id, url, title, text, text_with_links, charoffsets)."""
    return {
        "id": str(page_id),
        "url": f"https://en.wikipedia.org/wiki?curid={page_id}",
        "title": title,
        "text": sentences,
        "text_with_links": sentences,
        "charoffset": [[[0, len(s)]] for s in sentences],
        "charoffset_with_links": [[[0, len(s)]] for s in sentences],
    }


async def test_the_abstracts_dump_backend_searches_every_article_of_the_dump(tmp_path):
    folder = tmp_path / "enwiki-20171001-pages-meta-current-withlinks-abstracts"
    write_dump(
        folder,
        {
            "AA/wiki_00.bz2": [
                abstract(12, "Anarchism", ["Anarchism is a political philosophy.", " It opposes rulers."]),
                abstract(25, "Ed Wood", ["Edward Davis Wood Jr. was an American filmmaker.", " He made cheap films."]),
            ],
            "AB/wiki_00.bz2": [abstract(39, "Scott Derrickson", ["Scott Derrickson is an American director."])],
        },
    )
    env = make_env("hotpotqa", backend="abstracts", wiki_dump=str(folder))
    obs = await env.reset(FIRST)
    assert obs.info["corpus"] == "abstracts-2017-10-01" and "first paragraph only" in obs.info["caveat"]
    miss = await env.step("search[ed wood]")  # a title character for character, as AutoPlan's code opens one
    assert miss.observation.text == "Could not find ed wood. Similar: ['Ed Wood']." and miss.info["page"] is None
    hit = await env.step("search[Ed Wood]")
    assert hit.observation.text == "Edward Davis Wood Jr. was an American filmmaker. He made cheap films."
    assert (await env.step("lookup[cheap]")).observation.text == "(Result 1 / 1) He made cheap films."
    miss = await env.step("search[American director]")
    assert miss.observation.text.startswith("Could not find American director. Similar: ['Scott Derrickson'")
    assert (tmp_path / f"{folder.name}.sqlite").is_file()  # indexed once, beside the dump
    (folder / "AA" / "wiki_00.bz2").unlink()
    _dump.cache_clear()
    again = make_env("hotpotqa", backend="abstracts", wiki_dump=str(folder))
    await again.reset(FIRST)
    assert (await again.step("search[Anarchism]")).info["page"] == "Anarchism"  # read from the index, not the files


def test_the_abstracts_backend_refuses_a_missing_or_wrong_dump(tmp_path):
    with pytest.raises(EnvError, match="needs wiki_dump=FOLDER"):
        make_env("hotpotqa", backend="abstracts")
    with pytest.raises(EnvError, match="is not a folder"):
        make_env("hotpotqa", backend="abstracts", wiki_dump=str(tmp_path / "none")).task_ids()
    bad = tmp_path / "bad"
    (bad / "AA").mkdir(parents=True)
    (bad / "AA" / "wiki_00.bz2").write_bytes(bz2.compress(b'{"id": "1"}\n'))
    with pytest.raises(EnvError, match="is not an article of HotpotQA's abstracts dump"):
        make_env("hotpotqa", backend="abstracts", wiki_dump=str(bad)).task_ids()


def test_searches_at_once_load_spacy_once(monkeypatch):
    """Wikipedia searches run in worker threads, several at once; the first load of spaCy's
    pipeline (seconds, hundreds of MB) must be the only one."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    import spacy

    from envs.hotpotqa import wikipedia

    loads: list[str] = []
    count = threading.Lock()

    def slow_load(name, **options):
        with count:
            loads.append(name)
        time.sleep(0.2)
        return object()

    monkeypatch.setattr(spacy, "load", slow_load)
    wikipedia._loaded_sentencizer.cache_clear()
    try:
        with ThreadPoolExecutor(4) as pool:
            pipelines = list(pool.map(lambda _: wikipedia._sentencizer(), range(4)))
    finally:
        wikipedia._loaded_sentencizer.cache_clear()
    assert loads == [wikipedia.SPACY_MODEL]
    assert all(p is pipelines[0] for p in pipelines)
