"""WebArena's evaluators, written after evaluation_harness/evaluators.py (semantics, not code).

- string_match: the ``stop`` answer against ``reference_answers``: exact_match, must_include
  (a single one-character reference must be a whole token, by nltk's word_tokenize), fuzzy_match (a model judge, an
  ``envs.base.Judge``, asked with WebArena's current llm_fuzzy_match prompt; "N/A" marks an
  unachievable task: the answer "N/A" passes outright, any other answer is judged against
  ``string_note`` with its llm_ua_match prompt); replies are read as WebArena reads them;
- url_match: "GOLD in PRED": some reference's netloc + path is a substring of the page's (after
  stripping trailing "/" from each whole URL), and every reference query key has one of its
  reference values in the page's query;
- program_html: for each target, open its url ("last" = the page as the agent left it; a page
  opened for the check is read ``SETTLE_SECONDS`` after it loads, as WebArena sleeps 3 s: KnockoutJS
  and Vue pages render after ``load``), run the JS locator and check ``required_contents``
  (exact_match, or must_include with " |OR| " choices).

A task passes when every evaluator passes. An evaluator that cannot decide (a fuzzy_match with no
model to ask or a judge reply without a verdict, where WebArena's code stops on an assertion; a
helper that needs a site's REST API that is unreachable) is reported with
``passed=None`` and a reason, and the task does not pass: never a silent pass.
"""

from __future__ import annotations

import asyncio
import html
import urllib.parse
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

import prompts
from envs.base import Judge
from envs.webarena import helpers as webarena_helpers
from envs.webarena.words import word_tokenize
from errors import IntrospectError


@dataclass
class Outcome:
    """One evaluator's verdict: passed True/False, or None when it could not decide."""

    evaluator: str
    passed: bool | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Undecided(IntrospectError, RuntimeError):
    """A model judge was needed and could not decide: no judge was given, or its reply named no
    verdict (WebArena's own code stops on an assertion there; here the evaluator reports None)."""


# --- string comparison -------------------------------------------------------------------------


def clean_answer(answer: str) -> str:
    """Strip, drop one pair of enclosing quotes, lowercase (as WebArena does: a lone quote
    character both starts and ends the answer, so it goes too)."""
    answer = answer.strip()
    if answer[:1] in ("'", '"') and answer.endswith(answer[:1]):
        answer = answer[1:-1]
    return answer.lower()


def exact_match(ref: str, pred: str) -> bool:
    return clean_answer(pred) == clean_answer(ref)


def must_include(ref: str, pred: str, tokenize: bool = False) -> bool:
    """``ref`` occurs in ``pred``; with ``tokenize``, a one-character ref that is one token must be
    one of the answer's tokens (nltk's word_tokenize, envs.webarena.words): "2" is not in "2,000"."""
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        return clean_ref in word_tokenize(clean_pred)
    return clean_ref in clean_pred


async def _ask(judge: Judge | None, prompt: str, what: str) -> str:
    if judge is None:
        raise Undecided(f"{what} needs a model: the env's judge option is off or no judge was given")
    return (await judge(prompt, system="You are a helpful assistant")).lower()


async def fuzzy_match(pred: str, reference: str, intent: str, judge: Judge | None) -> bool:
    """WebArena's llm_fuzzy_match (prompts/webarena/fuzzy_match.md), asked even for an empty answer.

    The lowercased reply fails on "partially correct" or "incorrect", else passes on "correct".
    """
    reply = await _ask(
        judge, prompts.render("webarena/fuzzy_match", intent=intent, reference=reference, pred=pred), "fuzzy_match"
    )
    if "partially correct" in reply or "incorrect" in reply:
        return False
    if "correct" in reply:
        return True
    raise Undecided(f"the fuzzy_match judge gave no verdict (correct/incorrect/partially correct): {reply[:120]!r}")


async def ua_match(pred: str, reason: str, intent: str, judge: Judge | None) -> bool:
    """WebArena's llm_ua_match (prompts/webarena/ua_match.md): does the agent's report of an
    unachievable task give the annotated reason? The reply fails on "different", else passes on "same"."""
    reply = await _ask(
        judge, prompts.render("webarena/ua_match", intent=intent, reference=reason, pred=pred), "judging an N/A report"
    )
    if "different" in reply:
        return False
    if "same" in reply:
        return True
    raise Undecided(f"the N/A judge gave no verdict (same/different): {reply[:120]!r}")


async def _string_score(cfg: Mapping[str, Any], pred: str, judge: Judge | None) -> tuple[bool, list[str]]:
    """StringEvaluator's score as a verdict and the references that failed.

    As in WebArena the approaches multiply, except that an "N/A" fuzzy_match whose exact check
    fails *replaces* the score so far with the N/A judge's verdict.
    """
    ev = cfg["eval"]
    score = True
    failures: list[str] = []
    for approach, value in (ev.get("reference_answers") or {}).items():
        if approach == "exact_match":
            if not exact_match(value, pred):
                score, failures = False, [*failures, f"exact_match {value!r}"]
        elif approach == "must_include":
            for ref in value:
                if not must_include(ref, pred, tokenize=len(value) == 1):
                    score, failures = False, [*failures, f"must_include {ref!r}"]
        elif approach == "fuzzy_match" and value == "N/A":
            if not (score and exact_match(value, pred)):
                score = await ua_match(pred, ev.get("string_note", ""), cfg["intent"], judge)
                failures = [] if score else ["N/A: the report does not give the reason"]
        elif approach == "fuzzy_match":
            for ref in value:
                if not await fuzzy_match(pred, ref, cfg["intent"], judge):
                    score, failures = False, [*failures, f"fuzzy_match {ref!r}"]
        else:
            score, failures = False, [*failures, f"unknown reference kind {approach!r}"]
    return score, failures


async def string_match(cfg: Mapping[str, Any], answer: str, judge: Judge | None = None) -> Outcome:
    try:
        passed, failures = await _string_score(cfg, clean_answer(answer), judge)
    except Undecided as exc:
        return Outcome("string_match", None, str(exc))
    if not passed:
        return Outcome("string_match", False, f"answer {answer!r} fails: " + "; ".join(failures))
    return Outcome("string_match", True, f"answer {answer!r} matches")


# --- URL ------------------------------------------------------------------------------------------


def _clean_url(url: str) -> str:
    """WebArena's clean_url: trailing "/" stripped from the whole URL (so from the query too), nothing else."""
    return str(url).rstrip("/")


def _base_and_query(url: str) -> tuple[str, dict[str, list[str]]]:
    """netloc + path (the path keeps an inner trailing "/", e.g. before "?"), and the parsed query."""
    parts = urllib.parse.urlparse(url)
    return parts.netloc + parts.path, urllib.parse.parse_qs(parts.query)


def url_matches(reference_url: str, page_url: str) -> bool:
    """WebArena's "GOLD in PRED" rule (URLEvaluator), references joined by " |OR| ".

    The base passes when some reference's netloc + path is a *substring* of the page's (so a
    page under the reference, such as a created item's ``.../-/issues/12``, passes); the query
    passes when, for every key any reference has, the page's values for that key include one of
    the references' values for it (values of all alternatives are pooled, as WebArena pools them).
    """
    refs = [_base_and_query(_clean_url(url)) for url in reference_url.split(" |OR| ")]
    page_base, page_query = _base_and_query(_clean_url(page_url))
    if not any(base in page_base for base, _ in refs):
        return False
    wanted: dict[str, set[str]] = defaultdict(set)
    for _, query in refs:
        for key, values in query.items():
            wanted[key].update(values)
    return all(any(v in page_query.get(key, []) for v in values) for key, values in wanted.items())


def url_match(cfg: Mapping[str, Any], page_url: str) -> Outcome:
    ev = cfg["eval"]
    rule = ev.get("url_note", "GOLD in PRED")
    if rule != "GOLD in PRED":
        return Outcome("url_match", None, f"unknown url rule {rule!r}")
    ok = url_matches(ev.get("reference_url", ""), page_url)
    return Outcome(
        "url_match", ok, f"page {page_url} {'matches' if ok else 'does not match'} {ev.get('reference_url')}"
    )


# --- program_html ---------------------------------------------------------------------------------


def contents_match(required: Mapping[str, Any], selected: str) -> tuple[bool, str]:
    if "exact_match" in required:
        ok = exact_match(required["exact_match"], selected)
        return ok, f"exact_match {required['exact_match']!r}"
    if "must_include" in required:
        missing = [
            c for c in required["must_include"] if not any(must_include(alt, selected) for alt in c.split(" |OR| "))
        ]
        return not missing, f"must_include {missing or required['must_include']!r}"
    return False, f"unknown required_contents {sorted(required)}"


async def _select(page: Page, target: Mapping[str, Any]) -> str:
    locator = str(target.get("locator") or "")
    if not locator.strip():
        return await page.content()
    if locator.startswith("func:"):
        return await webarena_helpers.call_locator(locator[len("func:") :], page)
    for prep in target.get("prep_actions", []) or []:
        try:
            await page.evaluate(f"() => {prep}")
        except PlaywrightError:
            pass
    try:
        value = await page.evaluate(f"() => {locator}")
    except PlaywrightError:
        return ""  # the element is not on the page: nothing to match
    return "" if value is None else str(value)


SETTLE_SECONDS = 3.0  # WebArena's time.sleep(3) after page.goto; a module value tests may shorten


async def program_html(cfg: Mapping[str, Any], page: Page, context: BrowserContext) -> Outcome:
    """Each target is read on the agent's page ("last") or on a fresh page of the same context."""
    details: list[str] = []
    passed: bool | None = True
    for target in cfg["eval"].get("program_html", []):
        url = str(target.get("url", "last"))
        scratch: Page | None = None
        try:
            if url.startswith("func:"):
                url = webarena_helpers.call_url(url[len("func:") :], page.url)
            if url == "last":
                where = page
            else:
                scratch = where = await context.new_page()
                await scratch.goto(url)
                await asyncio.sleep(SETTLE_SECONDS)
            selected = html.unescape(await _select(where, target))
        except webarena_helpers.HelperUnavailable as exc:
            details.append(str(exc))
            passed = None
            continue
        except PlaywrightError as exc:
            selected = ""
            details.append(f"could not load {url}: {str(exc).splitlines()[0]}")
        finally:
            if scratch is not None:
                await scratch.close()
        ok, what = contents_match(target.get("required_contents", {}), selected)
        details.append(f"{'ok' if ok else 'FAIL'} {what} in {selected[:80]!r}")
        if not ok and passed is not None:
            passed = False
    return Outcome("program_html", passed, "; ".join(details))


# --- all of a task's evaluators -------------------------------------------------------------------


async def evaluate(
    cfg: Mapping[str, Any], answer: str, page: Page, context: BrowserContext, judge: Judge | None = None
) -> tuple[bool, list[Outcome]]:
    """(success, outcomes) for the task's ``eval_types``; success needs every one to pass."""
    outcomes: list[Outcome] = []
    for kind in cfg["eval"]["eval_types"]:
        if kind == "string_match":
            outcomes.append(await string_match(cfg, answer, judge))
        elif kind == "url_match":
            outcomes.append(url_match(cfg, page.url))
        elif kind == "program_html":
            outcomes.append(await program_html(cfg, page, context))
        else:
            outcomes.append(Outcome(kind, None, f"unknown evaluator {kind!r}"))
    return all(o.passed is True for o in outcomes), outcomes
