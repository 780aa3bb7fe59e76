"""WebArena's evaluators on hand-made passing and failing cases (program_html on the local shop)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envs.browser import BrowserSession, UrlPolicy
from envs.sites.serve import shared_site
from envs.webarena import evaluate as ev
from envs.webarena import helpers
from envs.webarena import login as webarena_login
from envs.webarena import tasks as webarena_tasks
from nodes.runtime.llm import JUDGE_MAX_TOKENS, Caller, CallerJudge, model_for


def cfg(eval_part: dict[str, Any], intent: str = "What colour is the frame?") -> dict[str, Any]:
    return {"task_id": "t", "intent": intent, "eval": {"eval_types": ["string_match"], **eval_part}}


def judge(write_script: Callable[..., str], *replies: str) -> CallerJudge:
    spec = write_script([{"content": r} for r in replies])
    return Caller(spec, temperature=0.0, max_tokens=64, calls_before=0).judge()


def judged_calls(judge: CallerJudge) -> list[dict[str, Any]]:
    """What the scripted judge model was asked (the judge asks greedily, with 768 tokens)."""
    return model_for(judge.spec, 0.0, JUDGE_MAX_TOKENS).calls


# --- string_match ---------------------------------------------------------------------------------


def test_clean_exact_and_must_include_follow_webarena() -> None:
    assert ev.clean_answer('  "Walnut" ') == "walnut"
    assert ev.exact_match("3", " '3' ") and not ev.exact_match("3", "3 orders")
    assert ev.must_include("Walnut", "The colour is walnut.")
    assert ev.must_include("8", "size 8", tokenize=True)
    assert not ev.must_include("8", "size 18", tokenize=True)  # a lone digit must be its own token
    assert ev.must_include("8", "size 18", tokenize=False)


async def test_string_match_exact_and_must_include_pass_and_fail() -> None:
    exact = cfg({"reference_answers": {"exact_match": "3"}})
    assert (await ev.string_match(exact, "3")).passed is True
    assert (await ev.string_match(exact, "three")).passed is False
    include = cfg({"reference_answers": {"must_include": ["Gold", "Collage"]}})
    assert (await ev.string_match(include, "the gold collage frame")).passed is True
    failed = await ev.string_match(include, "gold")
    assert failed.passed is False and "Collage" in failed.detail


# WebArena's judge messages (evaluation_harness/helper_functions.py llm_fuzzy_match, llm_ua_match),
# written out here to check that prompts/webarena/*.md render to exactly these.
FUZZY = (
    "Help a teacher to grade the answer of a student given a question. Keep in mind that the student "
    "may use different phrasing or wording to answer the question. The goal is to evaluate whether the "
    "answer is semantically equivalent to the reference answer.\n"
    "question: {q}\nreference answer: {ref}\n"
    "all the string 'N/A' that you see is a special sequence that means 'not achievable'\n"
    "student answer: {pred}\nConclude the judgement by correct/incorrect/partially correct."
)
UA = (
    "task: {q}\nactual unachievable reason: {ref}\nreported unachievable reason: {pred}\n"
    "The task described above is inherently unachievable due to the reason specified under 'actual "
    "unachievable reason'. An individual previously attempted this task and was unable to complete it. "
    "They provided a reason for their failure, which is listed under 'reported unachievable reason'. "
    "Your role is to review both the actual and reported reasons. Determine if the reported reason "
    "aligns with the actual reason, even if implicitly. If the stated reason is in line with the actual "
    "reason, respond with 'same'. Otherwise, respond with 'different'."
)


async def test_fuzzy_match_asks_webarenas_prompt_and_reads_its_verdict(write_script) -> None:
    task = cfg({"reference_answers": {"fuzzy_match": ["yoga mat and water bottle"]}}, intent="What did I buy?")
    caller = judge(write_script, "The answer is correct.", "It is partially correct.", "incorrect", "correct")
    assert (await ev.string_match(task, "A yoga mat plus a bottle", caller)).passed is True
    [call] = judged_calls(caller)[:1]
    assert [m.type for m in call["messages"]] == ["system", "human"]
    assert call["messages"][0].content == "You are a helpful assistant"
    assert call["messages"][1].content == FUZZY.format(
        q="What did I buy?", ref="yoga mat and water bottle", pred="a yoga mat plus a bottle"
    )
    assert (await ev.string_match(task, "a mat", caller)).passed is False
    assert (await ev.string_match(task, "a kettle", caller)).passed is False
    # an empty answer is judged too (WebArena asks the model whatever the answer)
    assert (await ev.string_match(task, "", caller)).passed is True
    assert judged_calls(caller)[-1]["messages"][1].content.endswith(
        "student answer: \nConclude the judgement by correct/incorrect/partially correct."
    )


async def test_a_judge_reply_without_a_verdict_is_undecided(write_script) -> None:
    fuzzy = cfg({"reference_answers": {"fuzzy_match": ["yoga mat"]}})
    na = cfg({"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "no sofa"})
    caller = judge(write_script, "I cannot tell.", "Maybe.")
    undecided = await ev.string_match(fuzzy, "a yoga mat", caller)
    assert undecided.passed is None and "no verdict" in undecided.detail
    assert (await ev.string_match(na, "no sofa here", caller)).passed is None


async def test_fuzzy_match_without_a_model_is_undecided_not_passed() -> None:
    task = cfg({"reference_answers": {"fuzzy_match": ["yoga mat"]}})
    outcome = await ev.string_match(task, "yoga mat", None)
    assert outcome.passed is None and "needs a model" in outcome.detail


async def test_unachievable_tasks_accept_na_and_judge_other_reports(write_script) -> None:
    task = cfg(
        {"reference_answers": {"fuzzy_match": "N/A"}, "string_note": "no sofa was bought"},
        intent="What colour is the sofa I bought?",
    )
    assert (await ev.string_match(task, "N/A", None)).passed is True
    assert (await ev.string_match(task, "I never bought a sofa", None)).passed is None
    caller = judge(write_script, "[same]", "They are different.")
    assert (await ev.string_match(task, "I never bought a sofa", caller)).passed is True
    assert judged_calls(caller)[0]["messages"][1].content == UA.format(
        q="What colour is the sofa I bought?", ref="no sofa was bought", pred="i never bought a sofa"
    )
    assert (await ev.string_match(task, "It is red", caller)).passed is False


# --- url_match ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "page", "ok"),
    [
        ("http://h:1/sales/order/view/order_id/170/", "http://h:1/sales/order/view/order_id/170", True),
        ("http://h:1/sales/order/view/order_id/170/", "http://h:1/sales/order/view/order_id/171/", False),
        # GOLD in PRED is a substring test: 1700 contains 170 (WebArena passes it too)
        ("http://h:1/sales/order/view/order_id/170/", "http://h:1/sales/order/view/order_id/1700/", True),
        ("http://h:1/catalogsearch/result/?q=yoga+mat", "http://h:1/catalogsearch/result/?q=yoga+mat&p=1", True),
        ("http://h:1/catalogsearch/result/?q=yoga+mat", "http://h:1/catalogsearch/result/?q=mat", False),
        ("http://h:1/catalogsearch/result/?q=yoga+mat", "http://h:1/catalogsearch/result/", False),
        ("http://h:1/a |OR| http://h:1/b", "http://h:1/b/", True),
        ("http://h:1/a", "http://other:1/a", False),
        # task 590: the milestone created under the reference page
        ("http://g:8023/primer/design/-/milestones", "http://g:8023/primer/design/-/milestones/7", True),
        # task 670: the new issue's own page
        ("http://g:8023/byteblaze/dotfiles/-/issues", "http://g:8023/byteblaze/dotfiles/-/issues/31", True),
        # task 682: the post made in one of the subreddits (case matters, as in WebArena)
        ("http://r:9999/f/machinelearning |OR| http://r:9999/f/singularity", "http://r:9999/f/singularity/118/x", True),
        (
            "http://r:9999/f/machinelearning |OR| http://r:9999/f/singularity",
            "http://r:9999/f/MachineLearning/1",
            False,
        ),
        # task 45: only the whole URL loses its trailing "/", so "issues/" is not in "issues"
        (
            "http://g:8023/a/b/-/issues/?sort=created_asc&state=opened",
            "http://g:8023/a/b/-/issues?sort=created_asc&state=opened",
            False,
        ),
        (
            "http://g:8023/a/b/-/issues/?sort=created_asc&state=opened",
            "http://g:8023/a/b/-/issues/?state=opened&sort=created_asc",
            True,
        ),
        # query values are pooled over the alternatives, key by key
        ("http://h:1/a?x=1 |OR| http://h:1/b?x=2", "http://h:1/b?x=1", True),
        ("http://h:1/a?x=1 |OR| http://h:1/b?y=2", "http://h:1/b?x=1", False),
    ],
)
def test_url_match_is_gold_in_pred(reference: str, page: str, ok: bool) -> None:
    assert ev.url_matches(reference, page) is ok
    outcome = ev.url_match({"eval": {"reference_url": reference, "url_note": "GOLD in PRED"}}, page)
    assert outcome.passed is ok


def url_match_configs() -> list[dict[str, Any]]:
    """Every url_match task of the 812, its placeholders resolved to made-up site URLs."""
    environ = {
        var: f"http://{site.replace('_', '-')}.test:{7000 + i}"
        for i, (site, var) in enumerate(webarena_tasks.WEBARENA_SITES.values())
    }
    out = []
    for task_id in webarena_tasks.task_ids("webarena"):
        raw = webarena_tasks.config(task_id)
        if "url_match" in raw["eval"]["eval_types"]:
            out.append(webarena_tasks.resolve(raw, webarena_tasks.site_urls(raw, environ=environ)))
    return out


def url_cases(reference_url: str) -> list[tuple[str, bool]]:
    """Pages and the verdict WebArena's rule gives them, built from one task's reference."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    alternatives = reference_url.split(" |OR| ")
    cases: list[tuple[str, bool]] = []
    for ref in alternatives:
        parts = urlsplit(ref)
        pairs = parse_qsl(parts.query)
        cases.append((ref, True))
        cases.append((ref + "/", True))
        cases.append((urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/42/")), True))  # a page under it
        extra = urlencode([*pairs, ("utm_extra", "1")])
        cases.append((urlunsplit(parts._replace(query=extra)), True))
        if len(pairs) > 1:
            cases.append((urlunsplit(parts._replace(query=urlencode(pairs[::-1]))), True))
        if len(alternatives) > 1:
            continue  # the failing variants below could match another alternative
        cases.append((urlunsplit(parts._replace(netloc="elsewhere.test:1")), False))
        segments = parts.path.rstrip("/").split("/")
        if len(segments) > 1 and segments[-1]:
            cases.append((urlunsplit(parts._replace(path="/".join(segments[:-1]), query="")), False))
        for key in dict(pairs):
            kept = [(k, v) for k, v in pairs if k != key]
            cases.append((urlunsplit(parts._replace(query=urlencode(kept))), False))
            changed = [(k, "zz-other" if k == key else v) for k, v in pairs]
            cases.append((urlunsplit(parts._replace(query=urlencode(changed))), False))
    return cases


def test_url_match_on_every_url_match_config_of_webarena() -> None:
    """Each of the 205 url_match tasks: its own reference passes, and so do pages under it, extra
    query keys and reordered keys; another host, the parent page and a missing or changed query
    value fail (the cases WebArena's URLEvaluator decides the same way)."""
    configs = url_match_configs()
    assert len(configs) == 205
    checked = 0
    for task in configs:
        for page, ok in url_cases(task["eval"]["reference_url"]):
            outcome = ev.url_match(task, page)
            assert outcome.passed is ok, (task["task_id"], page, ok)
            checked += 1
    assert checked > 1200


# --- func: helpers --------------------------------------------------------------------------------


def test_helpers_are_parsed_not_evaluated() -> None:
    assert helpers.parse_call("shopping_get_sku_latest_review_author('B00J8RZL7I')") == (
        "shopping_get_sku_latest_review_author",
        ["B00J8RZL7I"],
    )
    assert helpers.parse_call("gitlab_get_project_memeber_role(__page__, 'yjlou')")[1] == [None, "yjlou"]
    post = helpers.call_url("reddit_get_post_url('__last_url__')", "http://r:9/f/books/12/some-title/c/3")
    assert post == "http://r:9/f/books/12/"
    assert helpers.reddit_get_post_url("http://r:9/forums") == "http://r:9/forums"
    with pytest.raises(helpers.HelperUnavailable):
        helpers.call_url("__import__('os')", "http://x/")
    with pytest.raises(helpers.HelperUnavailable):
        helpers.parse_call("reddit_get_post_url(open('/etc/passwd'))")


def test_every_func_helper_in_the_webarena_configs_parses() -> None:
    known = {
        "reddit_get_post_url",
        "shopping_get_latest_order_url",
        "gitlab_get_project_memeber_role",
        "shopping_get_sku_latest_review_author",
        "shopping_get_sku_latest_review_rating",
    }
    seen = 0
    for task_id in webarena_tasks.task_ids("webarena"):
        for target in webarena_tasks.config(task_id)["eval"].get("program_html") or []:
            for value in (target["url"], target["locator"]):
                if value.startswith("func:"):
                    assert helpers.parse_call(value[5:])[0] in known
                    seen += 1
    assert seen > 80


# --- program_html on the local shop ----------------------------------------------------------------


@pytest.mark.browser
async def test_program_html_reads_form_fields_on_the_last_page_and_other_urls() -> None:
    url = shared_site("shop").url
    task = webarena_tasks.resolve(webarena_tasks.config("shop-10"), {"__SHOP__": url})
    signed_in = await webarena_login.local_state("shop", url)
    session = await BrowserSession.open(
        UrlPolicy(origins=(url,)), viewport={"width": 1280, "height": 720}, allow_tabs=True, storage_state=signed_in
    )
    try:
        await session.goto(url + "/contact/")
        page = session.page
        await page.fill("#order", "000000174")
        await page.fill("#comment", "My candles arrived broken, please send a replacement.")
        outcome = await ev.program_html(task, page, session.context)
        assert outcome.passed is True, outcome.detail
        await page.fill("#comment", "My candles arrived late.")
        outcome = await ev.program_html(task, page, session.context)
        assert outcome.passed is False and "FAIL" in outcome.detail
        elsewhere = {
            "eval": {
                "program_html": [
                    {
                        "url": url + "/sales/order/view/order_id/175/",
                        "locator": "document.querySelector('.order-status').textContent",
                        "required_contents": {"exact_match": "Canceled"},
                    },
                    {
                        "url": "last",
                        "locator": "document.querySelector('#missing').value",
                        "required_contents": {"must_include": ["x"]},
                    },
                ]
            }
        }
        outcome = await ev.program_html(elsewhere, page, session.context)
        assert outcome.passed is False  # the first target passes, the missing element fails
        assert outcome.detail.startswith("ok exact_match 'Canceled'")
        assert page.url == url + "/contact/" and len(session.context.pages) == 1
    finally:
        await session.close()


@pytest.mark.browser
async def test_program_html_with_an_unreachable_rest_helper_is_undecided(monkeypatch) -> None:
    monkeypatch.delenv("WEBARENA_SHOPPING", raising=False)
    url = shared_site("shop").url
    session = await BrowserSession.open(
        UrlPolicy(origins=(url,)), viewport={"width": 1280, "height": 720}, allow_tabs=True
    )
    try:
        await session.goto(url + "/")
        task = {
            "eval": {
                "program_html": [
                    {
                        "url": "last",
                        "locator": "func:shopping_get_sku_latest_review_rating('B00J8RZL7I')",
                        "required_contents": {"must_include": ["80"]},
                    }
                ]
            }
        }
        outcome = await ev.program_html(task, session.page, session.context)
        assert outcome.passed is None and "WEBARENA_SHOPPING" in outcome.detail
        success, outcomes = await ev.evaluate(
            {**task, "intent": "x", "eval": {**task["eval"], "eval_types": ["program_html"]}},
            "",
            session.page,
            session.context,
        )
        assert success is False and outcomes[0].passed is None
    finally:
        await session.close()


@pytest.mark.browser
async def test_program_html_reads_a_page_opened_for_the_check_after_webarenas_wait(monkeypatch) -> None:
    """WebArena sleeps 3 s after opening a target's url (KnockoutJS and Vue pages render after
    ``load``); the wait is shortened here, never to less than what the page needs."""
    assert ev.SETTLE_SECONDS == 3.0  # WebArena's time.sleep(3)
    monkeypatch.setattr(ev, "SETTLE_SECONDS", 2.0)
    url = shared_site("shop").url
    session = await BrowserSession.open(
        UrlPolicy(origins=(url,)), viewport={"width": 1280, "height": 720}, allow_tabs=True
    )
    late = (
        "<html><body><div id='status'>loading</div><script>window.addEventListener('load', () => "
        "setTimeout(() => { document.getElementById('status').textContent = 'Complete'; }, 200));"
        "</script></body></html>"
    )
    try:
        await session.context.route(
            url + "/rendered-late/", lambda route: route.fulfill(body=late, content_type="text/html")
        )
        await session.goto(url + "/")
        task = {
            "eval": {
                "program_html": [
                    {
                        "url": url + "/rendered-late/",
                        "locator": "document.querySelector('#status').textContent",
                        "required_contents": {"exact_match": "Complete"},
                    }
                ]
            }
        }
        outcome = await ev.program_html(task, session.page, session.context)
        assert outcome.passed is True, outcome.detail
    finally:
        await session.close()
