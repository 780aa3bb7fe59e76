"""The WebArena environment: WebArena task configs and evaluators, Chromium through Playwright.

    env = make_env("webarena")                 # options: viewport_width, viewport_height,
    obs = await env.reset("shop-0")            #   judge (run | off | provider:model),
    res = await env.step("click [18]")         #   action_timeout_ms, load_timeout_ms
    res = await env.step("stop [Walnut]")      # -> reward 1.0, info["success"], info["evaluators"]

Tasks: the 812 WebArena configs (ids "0".."811"; their sites come from WEBARENA_SHOPPING,
WEBARENA_SHOPPING_ADMIN, WEBARENA_REDDIT, WEBARENA_GITLAB, WEBARENA_MAP, WEBARENA_WIKIPEDIA,
WEBARENA_HOMEPAGE, login cookies from WEBARENA_AUTH_DIR) and the local shop tasks ("shop-0"..,
on envs/sites/shop, started in this process on first use). Splits: "local", "webarena".

Observation: envs.webarena_observe (tab header, URL, the viewport's accessibility tree);
obs.info has task_id, intent, sites, site_urls, start_url, notes, url, tabs. Actions:
envs.webarena_actions; step info adds valid, action (and feedback when refused). A task's sites
are its navigation allowlist: anything else (another host, file://) is refused with feedback.
A page that does not answer or finish loading within ``load_timeout_ms``, a dialog it opens, or a
page too large to read ends the step with valid False and a sentence saying what happened
(envs.browser); a step that finds Chromium dead reopens the tabs from the last snapshot and runs.
The final ``stop [answer]`` result adds answer, success and evaluators (one dict per evaluator:
evaluator, passed True/False/None, detail).

fuzzy_match and the N/A check ask a model (``envs.base.JudgedEnv``): by default the run's own
(``judge="run"``), or the model ``judge`` names (``judge_model`` is the same option). The node that
steps the env hands it the judge; a task stepped with no judge ends with success False and an
evaluator outcome that says a judge was missing, never a silent pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError, Page

from envs import webarena_actions as acts
from envs import webarena_eval, webarena_tasks
from envs.base import Env, EnvError, Judge, Observation, StepResult, invalid, judge_option
from envs.browser import BrowserSession, CrashGuard, UrlPolicy, reported
from envs.sites.serve import shared_site
from envs.webarena_observe import Screen, layout_boxes, observation_text, render_tree, tab_header


@dataclass
class _Episode:
    task_id: str
    config: dict[str, Any]  # placeholders resolved
    session: BrowserSession
    site_urls: dict[str, str]  # site name ("shopping", "shop", ...) -> base URL
    screen: Screen = field(default_factory=lambda: Screen(""))
    notes: list[str] = field(default_factory=list)
    answer: str | None = None
    done: bool = False


class WebArenaEnv(Env):
    name = "webarena"

    def __init__(
        self,
        *,
        viewport_width: int = 1280,
        viewport_height: int = 720,
        judge: str = "run",
        judge_model: str | None = None,
        action_timeout_ms: float = 3000.0,
        load_timeout_ms: float = 15000.0,
    ) -> None:
        if viewport_width < 200 or viewport_height < 200:
            raise EnvError("viewport_width and viewport_height must be at least 200")
        if load_timeout_ms <= 0:
            raise EnvError("load_timeout_ms must be positive")
        self.load_timeout_ms = float(load_timeout_ms)
        self.viewport = {"width": int(viewport_width), "height": int(viewport_height)}
        self.timeout_ms = float(action_timeout_ms)
        self.judge_model = judge_option(judge_model or judge, self.name)
        self.judge: Judge | None = None
        self._ep: _Episode | None = None
        self._guard = CrashGuard(self, lambda: self._ep is not None and self._ep.session.alive)

    # --- protocol ------------------------------------------------------------------------------

    def task_ids(self, split: str | None = None) -> list[str]:
        return webarena_tasks.task_ids(split)

    async def reset(self, task_id: str) -> Observation:
        await self._open(task_id)
        assert self._ep is not None
        pages = webarena_tasks.start_urls(self._ep.config) or ["about:blank"]
        for i, url in enumerate(pages):
            page = self._ep.session.page if i == 0 else await self._ep.session.context.new_page()
            await self._load(page, url)
        await self._focus(0)
        obs = await self._observe()
        self._ep.session.take_reports()  # the first screen is what there is to see
        await self._guard.remember()
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
        result = StepResult(obs, 0.0, False, {**obs.info, "valid": True, "action": parsed.kind})
        return reported(result, ep.session.take_reports())

    async def snapshot(self) -> dict[str, Any]:
        """Task, open tabs (URL and scroll offset each), current tab, notes, answer so far.

        Form field contents, cookies set by the page and JS state are not kept: restoring reloads
        each URL, which is how the paper backtracks (navigate back to the URL, then scroll).
        """
        ep = self._require()
        tabs = []
        for page in ep.session.context.pages:
            scroll = [0, 0]
            try:
                scroll = await page.evaluate("[window.scrollX, window.scrollY]")
            except PlaywrightError:
                pass
            tabs.append({"url": page.url, "scroll": scroll})
        return {
            "task_id": ep.task_id,
            "tabs": tabs,
            "current": self._current_index(),
            "notes": list(ep.notes),
            "answer": ep.answer,
            "done": ep.done,
        }

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Reopen the snapshot's tabs at their URLs and scroll offsets (form contents are lost)."""
        if not isinstance(snapshot, dict) or "task_id" not in snapshot:
            raise EnvError("not a webarena snapshot (it has no task_id)")
        await self._open(str(snapshot["task_id"]))
        ep = self._require()
        for i, tab in enumerate(snapshot.get("tabs") or [{"url": "about:blank", "scroll": [0, 0]}]):
            page = ep.session.page if i == 0 else await ep.session.context.new_page()
            await self._load(page, str(tab["url"]))
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
        await self._guard.remember()
        return obs

    async def close(self) -> None:
        if self._ep is not None:
            await self._ep.session.close()
            self._ep = None

    # --- episode plumbing ---------------------------------------------------------------------

    def _require(self) -> _Episode:
        if self._ep is None:
            raise EnvError("no webarena task is running: call reset first")
        return self._ep

    async def _open(self, task_id: str) -> None:
        """A fresh browser context for ``task_id`` (sites resolved, allowlist set, cookies loaded)."""
        self.check_task(task_id)
        raw = webarena_tasks.config(task_id)
        urls = webarena_tasks.site_urls(raw, local_url=lambda site: shared_site(site).url)
        cookies = (webarena_tasks.storage_state(raw) or {}).get("cookies", [])
        await self.close()
        policy = UrlPolicy(origins=webarena_tasks.origins(urls))
        # WebArena has tabs (new_tab, target=_blank links), and its evaluators read other URLs
        # in a page of their own.
        session = await BrowserSession.open(
            policy, viewport=self.viewport, allow_tabs=True, load_timeout_ms=self.load_timeout_ms
        )
        session.context.on("page", self._on_new_page)
        if cookies:
            await session.context.add_cookies(cookies)
        names = webarena_tasks.site_names(urls)
        self._ep = _Episode(task_id, webarena_tasks.resolve(raw, urls), session, names)

    def _on_new_page(self, page: Page) -> None:
        """A tab opened by the page (target=_blank, window.open) becomes the current tab."""
        if self._ep is not None:
            self._ep.session.page = page

    async def _load(self, page: Page, url: str) -> None:
        ep = self._require()
        ok, feedback = await ep.session.goto(url, page=page)
        if not ok:
            raise EnvError(feedback)

    def _current_index(self) -> int:
        ep = self._require()
        pages = ep.session.context.pages
        return pages.index(ep.session.page) if ep.session.page in pages else 0

    async def _focus(self, index: int) -> None:
        ep = self._require()
        pages = ep.session.context.pages
        ep.session.page = pages[min(max(index, 0), len(pages) - 1)]
        await ep.session.page.bring_to_front()

    async def _settle(self) -> None:
        """Wait until the current page has loaded (a tab the page just opened may still load),
        within the load timeout (envs.browser: past it loading stops, and a report says so)."""
        await self._require().session.settle()

    async def _observe(self) -> Observation:
        ep = self._require()
        await self._settle()
        page = ep.session.page
        titles = []
        for p in ep.session.context.pages:
            try:
                titles.append(await p.title())
            except PlaywrightError:
                titles.append("")
        try:
            nodes, snapshot = await ep.session.ax_tree(), await ep.session.dom_snapshot()
            ep.screen = render_tree(nodes, layout_boxes(snapshot), self.viewport["width"], self.viewport["height"])
        except PlaywrightError as exc:  # e.g. the page navigated while it was read
            ep.screen = Screen(f"(the page could not be read: {str(exc).splitlines()[0]})")
        header = tab_header(titles, self._current_index())
        return Observation(observation_text(header, page.url, ep.screen), page.url, self._info(titles))

    def _info(self, titles: list[str] | None = None) -> dict[str, Any]:
        ep = self._require()
        info: dict[str, Any] = {
            "task_id": ep.task_id,
            "intent": ep.config["intent"],
            "sites": list(ep.config.get("sites", [])),
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
                await acts.with_navigation(page, acts.click(target, self.timeout_ms))
            elif action.kind == "hover":
                await acts.hover(target, self.timeout_ms)
            elif action.enter:
                await acts.with_navigation(page, acts.type_text(page, target, action.text, True, self.timeout_ms))
            else:
                await acts.type_text(page, target, action.text, False, self.timeout_ms)
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
        info = {
            **obs.info,
            "valid": True,
            "action": "stop",
            "answer": answer,
            "success": success,
            "evaluators": [o.as_dict() for o in outcomes],
        }
        info["evaluation"] = {key: info[key] for key in ("answer", "success", "evaluators")}
        return StepResult(obs, 1.0 if success else 0.0, True, info)
