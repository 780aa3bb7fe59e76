"""HotpotQA env: ReAct's search/lookup/finish on the local corpus, scoring, snapshots, backends."""

from __future__ import annotations

import ast
import gzip
import json
import socket

import pytest
from aiohttp import web

from envs import EnvError, UnknownTaskError, make_env
from envs.hotpotqa.corpus import SHIPPED_QUESTIONS
from envs.hotpotqa.score import (
    exact_match,
    f1,
    judged_correct,
    normalize_answer,
    verdict,
)
from nodes.llm import JUDGE_MAX_TOKENS, Caller, model_for

FIRST = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def paragraphs() -> dict[str, list[str]]:
    data = json.loads(gzip.decompress(SHIPPED_QUESTIONS.read_bytes()))
    return {title: [s.strip() for s in sents] for q in data for title, sents in q["context"]}


@pytest.fixture
async def env():
    env = make_env("hotpotqa")
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
    env = make_env("hotpotqa", augmented_feedback=True)  # the paper keeps ReAct's (the default above)
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
    other = make_env("hotpotqa")
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
    env = make_env("hotpotqa", max_steps=2)
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
    fresh = make_env("hotpotqa")
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


async def test_wikipedia_backend_against_a_local_api_stub():
    async def api(request: web.Request) -> web.Response:
        q = request.query
        if q.get("prop") == "extracts" and q.get("titles") == "Ed Wood":
            page = {
                "pageid": 1,
                "title": "Ed Wood",
                "extract": "Ed Wood was a filmmaker. He was American.\nHe died in 1978.",
            }
            return web.json_response({"query": {"pages": [page]}})
        if q.get("prop") == "extracts":
            return web.json_response({"query": {"pages": [{"title": q.get("titles"), "missing": True}]}})
        assert q.get("list") == "search" and q.get("srlimit") == "5"
        return web.json_response({"query": {"search": [{"title": "Ed Wood"}, {"title": "Ed Wood (film)"}]}})

    app = web.Application()
    app.router.add_get("/w/api.php", api)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        env = make_env("hotpotqa", backend="wikipedia", api_url=f"http://127.0.0.1:{port}/w/api.php")
        await env.reset(FIRST)
        hit = await env.step("search[Ed Wood]")
        assert hit.observation.text == "Ed Wood was a filmmaker. He was American. He died in 1978."
        assert (await env.step("lookup[american]")).observation.text == "(Result 1 / 1) He was American."
        miss = await env.step("search[Edward Wood]")
        assert miss.observation.text == "Could not find Edward Wood. Similar: ['Ed Wood', 'Ed Wood (film)']."
    finally:
        await runner.cleanup()


async def test_judge_asks_the_model_only_when_the_answer_is_not_an_exact_match(write_script):
    spec = write_script([{"content": "The two name the same place.\nYES"}, {"content": "NO"}])
    caller = Caller(spec, temperature=None, max_tokens=64, calls_before=0)
    judge = caller.judge()
    question = "Where did the singer grow up?"
    assert await judged_correct(question, "New York City", "the New York City", judge)
    assert caller.position == 0  # exact match needs no model call
    assert await judged_correct(question, "New York City", "NYC", judge) is True
    assert await judged_correct(question, "New York City", "Boston", judge) is False
    calls = model_for(spec, 0.0, JUDGE_MAX_TOKENS).calls
    assert len(calls) == 2 and caller.usage["model_calls"] == 2
    shown = calls[0]["messages"][0].content
    assert shown == (
        f'Question: "{question}"\n\nGold Answer: "New York City"\n\nMy Prediction: "NYC"\n\n'
        "Verify whether my prediction to the question is equivalent to gold answer. Respond with yes/no."
    )


def test_the_judges_verdict_is_its_yes_or_no():
    assert verdict("YES, the prediction matches") is True
    assert verdict("No.") is False
    assert verdict("Thinking... yes maybe. Answer: NO") is False
    assert verdict("unclear") is None
