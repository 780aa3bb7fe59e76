"""The WebArena environment: WebArena task configs and evaluators, Chromium through Playwright.

    env = make_env("webarena")                 # options: viewport_width, viewport_height,
    obs = await env.reset("shop-0")            #   judge (provider:model | run | off),
    res = await env.step("click [18]")         #   load_timeout_ms
    res = await env.step("stop [Walnut]")      # -> reward 1.0, res.success, info["evaluators"]

Tasks: the 812 WebArena configs (ids "0".."811"; their sites come from WEBARENA_SHOPPING,
WEBARENA_SHOPPING_ADMIN, WEBARENA_REDDIT, WEBARENA_GITLAB, WEBARENA_MAP, WEBARENA_WIKIPEDIA,
WEBARENA_HOMEPAGE) and the local shop tasks ("shop-0".., on envs/sites/shop, started in this
process on first use). Splits: "local", "webarena". A task starts signed in, as in WebArena: its
context loads the task's stored login (a Playwright storage state that ``introspect webarena
login`` writes, envs.webarena.login); a local task without one signs in with the site's account.

Observation: envs.webarena.observe (tab header, URL, the viewport's accessibility tree);
obs.info has task_id, goal (the intent; also as intent), intro (the task's sites in the Devil's
Advocate appendix's words, envs.webarena.interface), websites (in the same words, every site the
agent may reach: a WebArena task's own and each WebArena site whose variable is set, as the appendix
lists all six; a local task's own), sites, site_urls, start_url, notes, url, tabs. Actions:
envs.webarena.actions; a step's info adds action (a refused step: valid False, feedback). Those
sites are the navigation allowlist, as WebArena lets an agent reach all of its sites: anything else
(another host, file://) is refused with feedback.
A page that does not answer or finish loading within ``load_timeout_ms``, a dialog it opens, or a
page too large to read ends the step with valid False and a sentence saying what happened
(envs.browser); a step that finds Chromium dead reopens the tabs from the last snapshot and runs.
The final ``stop [answer]`` result has success, and its info adds answer and evaluators (one dict
per evaluator: evaluator, passed True/False/None, detail), gathered with success in evaluation.

fuzzy_match and the N/A check ask a model (``envs.base.JudgedEnv``): as in WebArena, a fixed one
(``JUDGE``, WebArena's ``gpt-4-1106-preview``) whatever model runs the agent, or the model ``judge``
names (``judge_model`` is the same option). ``judge="run"`` lets the run's own model grade its own
answers: allowed, with a one-line warning, since scores judged so do not compare with WebArena's.
The final result's evaluation records the judge option (``judge_model``). The node that steps the
env hands it the judge; a judge that cannot be reached fails the step with an error naming it (the
run stops, to be resumed), and a task stepped with no judge ends with success False and an
evaluator outcome that says a judge was missing, never a silent pass.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from playwright.async_api import Cookie, Page, StorageState, ViewportSize
from playwright.async_api import Error as PlaywrightError

from envs.base import (
    Env,
    EnvError,
    Judge,
    Observation,
    StepResult,
    invalid,
    judge_option,
)
from envs.browser import BrowserDiedError, BrowserSession, CrashGuard, UrlPolicy, reported
from envs.sites.serve import site_url as local_site_url
from envs.webarena import (
    actions as acts,
)
from envs.webarena import (
    evaluate as webarena_eval,
)
from envs.webarena import (
    forms as webarena_forms,
)
from envs.webarena import (
    login as webarena_login,
)
from envs.webarena import (
    tasks as webarena_tasks,
)
from envs.webarena.interface import INTERFACE, sandbox_intro, site_intro
from envs.webarena.journal import Journal
from envs.webarena.observe import (
    Screen,
    client_rects,
    layout_boxes,
    observation_text,
    render_tree,
    tab_header,
    unboxed,
)

JUDGE = "openai:gpt-4-1106-preview"  # WebArena's judge (evaluation_harness/helper_functions.py)
READS = 3  # tries to read a page that navigates while it is read (then its error is the screen)
_log = logging.getLogger(__name__)


@cache
def _warn_run_judge() -> None:
    """Once a process: the run's own model judges fuzzy_match and N/A answers."""
    _log.warning(
        "webarena: judge=run: the run's own model grades fuzzy_match and N/A answers, not WebArena's "
        "fixed judge %s; such scores do not compare with WebArena's",
        JUDGE,
    )


@dataclass
class _Episode:
    task_id: str
    config: dict[str, Any]  # placeholders resolved
    session: BrowserSession
    site_urls: dict[str, str]  # the task's sites: site name ("shopping", "shop", ...) -> base URL
    websites: dict[str, str]  # every site the agent may reach (webarena_tasks.sandbox_urls), by name
    submissions: webarena_forms.Submissions
    screen: Screen = field(default_factory=lambda: Screen(""))
    notes: list[str] = field(default_factory=list)
    answer: str | None = None
    done: bool = False


def _website_at(url: str) -> str:
    """The introduction of a task that names no site: its start URL's origin."""
    parts = urllib.parse.urlsplit(url)
    return f"The website at {parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else INTERFACE.intro


class WebArenaEnv(Env):
    name = "webarena"
    interface = INTERFACE

    def __init__(
        self,
        *,
        viewport_width: int = 1280,
        viewport_height: int = 720,
        judge: str = JUDGE,
        judge_model: str | None = None,
        load_timeout_ms: float = 15000.0,
    ) -> None:
        if viewport_width < 200 or viewport_height < 200:
            raise EnvError("viewport_width and viewport_height must be at least 200")
        if load_timeout_ms <= 0:
            raise EnvError("load_timeout_ms must be positive")
        self.load_timeout_ms = float(load_timeout_ms)
        self.viewport: ViewportSize = {"width": int(viewport_width), "height": int(viewport_height)}
        self.judge_model = judge_option(judge_model or judge, self.name)
        if self.judge_model == "run":
            _warn_run_judge()
        self.judge: Judge | None = None
        self._ep: _Episode | None = None
        self._journal = Journal()  # form submissions, so that a re-run step does not send them again
        self._guard = CrashGuard(
            snapshot=self._snapshot_with_cookies,
            restore=self._restore,
            session=lambda: self._ep.session if self._ep is not None else None,
        )

    # --- protocol ------------------------------------------------------------------------------

    def task_ids(self, split: str | None = None) -> list[str]:
        return webarena_tasks.task_ids(split)

    @classmethod
    def task_fields(cls, task_id: str) -> dict[str, Any]:
        """The task's intent template: WebArena's tasks are instances of templates (near copies
        of one another), so a report averages per template as well as per task."""
        template = webarena_tasks.load_configs().get(task_id, {}).get("intent_template_id")
        return {} if template is None else {"intent_template_id": template}

    @classmethod
    def unreachable(cls, task_ids: list[str]) -> str:
        """The first WebArena site the tasks need whose WEBARENA_* variable is unset (the local
        shop starts itself), with the tasks that run without one."""
        configs = webarena_tasks.load_configs()
        for task in task_ids:
            try:
                webarena_tasks.site_urls(configs.get(task, {}), local_url=lambda site: site)
            except EnvError as exc:
                return f'{exc}; or run the local shop\'s tasks instead (split = "local")'
        return ""

    @classmethod
    def judge_calls(cls, task_id: str) -> int:
        """One fuzzy_match question per reference its string_match gives (one for "N/A")."""
        answers = webarena_tasks.load_configs().get(task_id, {}).get("eval", {}).get("reference_answers") or {}
        fuzzy = answers.get("fuzzy_match") or []
        return 1 if fuzzy == "N/A" else len(fuzzy)

    async def reset(self, task_id: str) -> Observation:
        """The task's start pages in a fresh context; if Chromium died meanwhile, opened once more."""
        return await self._guard.reset(lambda: self._reset(task_id))

    async def _reset(self, task_id: str) -> Observation:
        await self._open(task_id)
        assert self._ep is not None
        pages = webarena_tasks.start_urls(self._ep.config) or ["about:blank"]
        for i, url in enumerate(pages):
            page = self._ep.session.page if i == 0 else await self._ep.session.context.new_page()
            await self._load(page, url)
        await self._focus(0)
        obs = await self._observe()
        self._ep.session.take_reports()  # the first screen is what there is to see
        return obs

    async def step(self, action: str) -> StepResult:
        """One action; if Chromium died meanwhile, the tabs are reopened from a snapshot first."""
        if self._ep is None:
            return invalid(Observation("no task is running: call reset first"), "call reset(task_id) first")
        return await self._guard.step(lambda: self._step(action))

    async def _step(self, action: str) -> StepResult:
        ep = self._require()
        if ep.done:
            return invalid(await self._observe(), "the task has ended (stop was called)")
        try:
            parsed = acts.parse_action(action)
            if parsed.kind == "stop":
                return await self._stop(parsed.text)
            await self._execute(parsed)
        except acts.ActionError as exc:
            obs = await self._observe()
            return reported(invalid(obs, str(exc), **obs.info), ep.session.take_reports())
        except PlaywrightError as exc:  # the page crashed or closed under the action
            obs = await self._observe()
            failed = invalid(obs, f"the action failed: {str(exc).splitlines()[0]}", **obs.info)
            return reported(failed, ep.session.take_reports())
        obs = await self._observe()
        result = StepResult(obs, 0.0, False, {**obs.info, "action": parsed.kind})
        return reported(result, ep.session.take_reports())

    async def screenshot(self) -> bytes:
        """A PNG of the page the agent is on (for people; envs.base.Screenshots); if Chromium
        died meanwhile, of the tabs reopened from the last snapshot."""
        self._require()
        return await self._guard.read(lambda: self._require().session.screenshot())

    async def snapshot(self) -> dict[str, Any]:
        """What ``_snapshot`` says; if Chromium died meanwhile, of the tabs reopened from the
        last snapshot taken while it lived (the pages a dead browser held are gone)."""
        self._require()
        return await self._guard.read(self._snapshot)

    async def _snapshot(self) -> dict[str, Any]:
        """Task, open tabs (URL, scroll offset and the form fields the user changed, each; the
        document of a page a form submission returned), current tab, notes, answer so far.

        Cookies and the page's JS state are not kept: restoring reloads each URL, which is how the
        paper backtracks (navigate back to the URL), then puts back what was typed, ticked or
        chosen (envs.webarena.forms) and the scroll position.
        """
        ep = self._require()
        tabs = []
        for page in ep.session.context.pages:
            scroll = [0, 0]
            try:
                scroll = await page.evaluate("[window.scrollX, window.scrollY]")
            except PlaywrightError:
                pass
            tab: dict[str, Any] = {"url": self._portable(page.url), "scroll": scroll}
            document = await ep.submissions.document(page)
            if document is not None:
                tab["document"] = document  # what a form submission returned: its URL would ask again
            fields = await webarena_forms.capture(page)
            if fields:
                tab["fields"] = fields
            tabs.append(tab)
        return {
            "task_id": ep.task_id,
            "tabs": tabs,
            "current": self._current_index(),
            "notes": list(ep.notes),
            "answer": ep.answer,
            "done": ep.done,
        }

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Reopen the snapshot's tabs at their URLs, refill their changed form fields, scroll;
        if Chromium died meanwhile, the tabs are reopened where they were (with the context's
        cookies) and restored once more, as a live instance is (``_restore``)."""
        return await self._guard.step(lambda: self._restore(snapshot))

    async def _restore(self, snapshot: dict[str, Any]) -> Observation:
        """Reopen the snapshot's tabs (see ``restore``).

        An instance running the same task keeps its browser context (cookies, local storage): a
        backtrack navigates the same browser back, as the paper's does, so a page may have changed
        since (the paper's reason for element mapping). A fresh instance starts a new context with
        the task's login.
        """
        if not isinstance(snapshot, dict) or "task_id" not in snapshot:
            raise EnvError("not a webarena snapshot (it has no task_id)")
        task_id = str(snapshot["task_id"])
        if not await self._one_tab_left(task_id):
            await self._open(task_id, snapshot.get("cookies"))
        ep = self._require()
        for i, tab in enumerate(snapshot.get("tabs") or [{"url": "about:blank", "scroll": [0, 0]}]):
            page = ep.session.page if i == 0 else await ep.session.context.new_page()
            await self._load(page, self._located(str(tab["url"])), tab.get("document"))
            await webarena_forms.apply(page, list(tab.get("fields") or []))
            x, y = (list(tab.get("scroll") or []) + [0, 0])[:2]
            try:
                await page.evaluate("([x, y]) => window.scrollTo(x, y)", [float(x), float(y)])
            except PlaywrightError:
                pass  # the page went on to load something else; it stays where it is
        await self._focus(int(snapshot.get("current", 0)))
        ep.notes = [str(n) for n in snapshot.get("notes", [])]
        ep.answer = snapshot.get("answer")
        ep.done = bool(snapshot.get("done", False))
        obs = await self._observe()
        ep.session.take_reports()
        return obs

    def _portable(self, url: str) -> str:
        """``url`` with a local site's origin written as its placeholder (``__SHOP__/...``): a local
        site is served on a port picked afresh by each process, so a snapshot resumed by another
        process (after a crash) would otherwise point at a port no one serves."""
        for placeholder, site in webarena_tasks.LOCAL_SITES.items():
            base = self._require().site_urls.get(site)
            if base and (url == base or url.startswith(base + "/")):
                return placeholder + url[len(base) :]
        return url

    def _located(self, url: str) -> str:
        """A snapshot's URL on the sites this process serves (``_portable`` undone)."""
        for placeholder, site in webarena_tasks.LOCAL_SITES.items():
            base = self._require().site_urls.get(site)
            if base and url.startswith(placeholder):
                return base + url[len(placeholder) :]
        return url

    async def _snapshot_with_cookies(self) -> dict[str, Any] | None:
        """A snapshot with the context's cookies, for the crash guard alone (it keeps it in
        memory): a context reopened after Chromium died gets them back, so the site sees the
        same visitor (the shop's recently viewed products are a cookie). Snapshots in graph
        state keep none: they would write the task's login into every checkpoint. None when
        no task runs (a fresh env being restored)."""
        if self._ep is None:
            return None
        return {**await self._snapshot(), "cookies": await self._ep.session.context.cookies()}

    async def _one_tab_left(self, task_id: str) -> bool:
        """Close all tabs but the first of a live episode of ``task_id``; False if there is none."""
        ep = self._ep
        browser = ep.session.context.browser if ep is not None else None
        if ep is None or ep.task_id != task_id or browser is None or not browser.is_connected():
            return False
        try:
            pages = ep.session.context.pages
            for page in pages[1:]:
                await page.close()
            ep.session.page = pages[0] if pages else await ep.session.context.new_page()
        except PlaywrightError:
            return False
        return True

    async def close(self) -> None:
        if self._ep is not None:
            await self._ep.session.close()
            self._ep = None

    def at_step(self, thread_id: str, step_id: str) -> None:
        """``envs.base.JournaledEnv``: submissions from now on belong to this graph step."""
        self._journal.at_step(thread_id, step_id)

    async def finish(self) -> None:
        """``envs.base.JournaledEnv``: the run is over; its journal goes."""
        await self._journal.finish()

    # --- episode plumbing ---------------------------------------------------------------------

    def _require(self) -> _Episode:
        if self._ep is None:
            raise EnvError("no webarena task is running: call reset first")
        return self._ep

    async def _open(self, task_id: str, cookies: list[Cookie] | None = None) -> None:
        """A fresh browser context for ``task_id`` (sites resolved, allowlist set, cookies loaded:
        the task's login's, or ``cookies`` when given, with the login's local storage)."""
        raw, urls = await asyncio.to_thread(self._sites, task_id)
        state = await self._login(raw, urls)
        if cookies is not None:
            state = {"cookies": list(cookies), "origins": list((state or {}).get("origins") or [])}
        await self.close()
        every = webarena_tasks.sandbox_urls(raw, urls)  # a WebArena task's agent may reach all its sites
        policy = UrlPolicy(origins=webarena_tasks.origins(every))
        # WebArena has tabs (new_tab, target=_blank links), and its evaluators read other URLs
        # in a page of their own.
        session = await BrowserSession.open(
            policy, viewport=self.viewport, allow_tabs=True, storage_state=state, load_timeout_ms=self.load_timeout_ms
        )
        try:
            session.context.on("page", self._on_new_page)
            await session.context.add_init_script(webarena_forms.EDIT_TRACKER)
            names = webarena_tasks.site_names(urls)
            submissions = webarena_forms.Submissions(session.context)
            self._journal.refused = session.policy.refusal
            await session.context.route("**/*", self._journal.route)  # runs before the allowlist's filter
        except BaseException:  # Chromium died, say: its gate must not stay open for ever
            await session.close()
            raise
        websites = webarena_tasks.site_names(every)
        self._ep = _Episode(task_id, webarena_tasks.resolve(raw, urls), session, names, websites, submissions)

    def _sites(self, task_id: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The task's config and its sites' URLs. Blocking (the task files are read, a local
        site is started on first use): run in a worker thread, off the event loop."""
        self.check_task(task_id)
        raw = webarena_tasks.config(task_id)
        return raw, webarena_tasks.site_urls(raw, local_url=local_site_url)

    @staticmethod
    async def _login(raw: dict[str, Any], urls: dict[str, str]) -> StorageState | None:
        """The storage state the task starts with: its stored login, or for a local site without
        one, a sign-in with the site's demo account (envs.webarena.login)."""
        state = await asyncio.to_thread(webarena_tasks.storage_state, raw)
        if state is None and raw.get("storage_state"):
            site, url = next(
                (s, u) for s, u in webarena_tasks.site_names(urls).items() if s in webarena_tasks.LOCAL_SITES.values()
            )
            state = await webarena_login.local_state(site, url)
        return state

    def _on_new_page(self, page: Page) -> None:
        """A tab opened by the page (target=_blank, window.open) becomes the current tab."""
        if self._ep is not None:
            self._ep.session.page = page

    async def _load(self, page: Page, url: str, document: str | None = None) -> None:
        """Open ``url`` (showing ``document``, a form submission's answer, when given)."""
        ep = self._require()
        if document is None:
            ok, feedback = await ep.session.goto(url, page=page)
            if not ok:
                raise EnvError(feedback)
            return
        reason = ep.session.policy.refusal(url)
        if reason is not None:
            raise EnvError(reason)
        try:
            await ep.submissions.show(page, url, document, ep.session.load_timeout_ms)
        except PlaywrightError as exc:
            raise EnvError(f"could not load {url}: {str(exc).splitlines()[0]}") from None
        await ep.session.settle(page)

    def _current_index(self) -> int:
        ep = self._require()
        pages = ep.session.context.pages
        return pages.index(ep.session.page) if ep.session.page in pages else 0

    async def _focus(self, index: int) -> None:
        ep = self._require()
        pages = ep.session.context.pages
        if not pages:  # a task always keeps one tab open: its context went with the browser
            raise BrowserDiedError("Chromium died: the task's tabs are gone")
        ep.session.page = pages[min(max(index, 0), len(pages) - 1)]
        await ep.session.page.bring_to_front()

    async def _settle(self) -> None:
        """Wait until the current page has loaded (a tab the page just opened may still load),
        within the load timeout (envs.browser: past it loading stops, and a report says so)."""
        await self._require().session.settle()

    async def _observe(self) -> Observation:
        ep = self._require()
        for attempt in range(READS):
            # a navigation an action started after with_navigation's grace (a busy machine)
            # commits while the page is read: it is waited for and the page read again
            await self._settle()
            page = ep.session.page
            try:
                ep.screen = await self._screen(page)
                break
            except PlaywrightError as exc:
                if attempt == READS - 1:
                    ep.screen = Screen(f"(the page could not be read: {str(exc).splitlines()[0]})")
        titles = []
        for p in ep.session.context.pages:
            try:
                titles.append(await p.title())
            except PlaywrightError:
                titles.append("")
        header = tab_header(titles, self._current_index())
        return Observation(observation_text(header, page.url, ep.screen), page.url, self._info(titles))

    async def _screen(self, page: Page) -> Screen:
        """The current page's accessibility tree, laid out as the agent reads it."""
        ep = self._require()
        nodes, snapshot = await ep.session.ax_tree(), await ep.session.dom_snapshot()
        boxes = layout_boxes(snapshot)
        missing = unboxed(nodes, boxes)
        if missing:
            cdp = await ep.session.context.new_cdp_session(page)
            try:
                boxes.update(await client_rects(cdp, missing))
            finally:
                await cdp.detach()
        return render_tree(nodes, boxes, self.viewport["width"], self.viewport["height"])

    def _info(self, titles: list[str] | None = None) -> dict[str, Any]:
        ep = self._require()
        sites = list(ep.config.get("sites", []))
        info: dict[str, Any] = {
            "task_id": ep.task_id,
            "goal": ep.config["intent"],
            "intent": ep.config["intent"],
            "intro": site_intro(sites, ep.site_urls) or _website_at(ep.config.get("start_url", "")),
            "websites": sandbox_intro(ep.websites),
            "sites": sites,
            "site_urls": dict(ep.site_urls),
            "start_url": ep.config.get("start_url", ""),
            "notes": list(ep.notes),
            "url": ep.session.page.url,
        }
        if titles is not None:
            info["tabs"] = titles
        return info

    # --- actions --------------------------------------------------------------------------------

    async def _execute(self, action: acts.Action) -> None:
        ep = self._require()
        page = ep.session.page
        if action.kind in acts.ELEMENT_ACTIONS:
            backend = ep.screen.elements.get(action.element_id)
            if backend is None:
                raise acts.ActionError(f"there is no element [{action.element_id}] on the current screen")
            cdp = await ep.session.context.new_cdp_session(page)
            try:
                target = await acts.locate(cdp, page, backend)
            finally:
                await cdp.detach()
            if action.kind == "click":
                new_tab = await acts.opens_a_tab(target)
                grace = self.load_timeout_ms / 1000 if new_tab else acts.GRACE_S
                await acts.with_navigation(page, acts.click(target), grace)
            elif action.kind == "hover":
                await acts.hover(target)
            elif action.enter:
                await acts.with_navigation(page, acts.type_text(page, target, action.text, True))
            else:
                await acts.type_text(page, target, action.text, False)
        elif action.kind == "press":
            await acts.with_navigation(page, acts.press(page, action.key))
        elif action.kind == "scroll":
            await acts.scroll(page, action.direction)
        elif action.kind == "goto":
            ok, feedback = await ep.session.goto(action.url)
            if not ok:
                raise acts.ActionError(feedback)
        elif action.kind in ("go_back", "go_forward"):
            move = page.go_back if action.kind == "go_back" else page.go_forward
            before = page.url
            try:
                response = await move(wait_until="commit", timeout=self.load_timeout_ms)
            except PlaywrightError as exc:
                raise acts.ActionError(f"{action.kind} failed: {str(exc).splitlines()[0]}") from None
            if response is None and page.url == before:
                raise acts.ActionError(f"there is no page to {action.kind.replace('_', ' ')} to")
        elif action.kind == "new_tab":
            ep.session.page = await ep.session.context.new_page()
        elif action.kind == "tab_focus":
            if not 0 <= action.index < len(ep.session.context.pages):
                raise acts.ActionError(f"there is no tab {action.index}")
            await self._focus(action.index)
        elif action.kind == "close_tab":
            await page.close()
            if not ep.session.context.pages:
                await ep.session.context.new_page()
            await self._focus(len(ep.session.context.pages) - 1)
        elif action.kind == "note_down":
            ep.notes.append(action.text)

    async def _stop(self, answer: str) -> StepResult:
        ep = self._require()
        ep.answer, ep.done = answer, True
        obs = await self._observe()
        page = ep.session.page
        success, outcomes = await webarena_eval.evaluate(ep.config, answer, page, ep.session.context, self.judge)
        ep.session.page = page  # program_html's own pages must not become the current tab
        evaluators = [o.as_dict() for o in outcomes]
        evaluation = {"answer": answer, "success": success, "evaluators": evaluators, "judge_model": self.judge_model}
        info = {
            **obs.info,
            "action": "stop",
            "answer": answer,
            "evaluators": evaluators,
            "judge_model": self.judge_model,
            "evaluation": evaluation,
        }
        return StepResult(obs, 1.0 if success else 0.0, True, info, success=success)
