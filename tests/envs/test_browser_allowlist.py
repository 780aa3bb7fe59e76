"""Nothing a page does reaches a server outside its task's allowlist, whatever part of Chromium
sends it.

A page on an allowed local origin tries every way a page has to send something to a server on
another local port (one "sink" per way: a TCP and a UDP listener on the same port number, which
record every connection and datagram). Each way is first tried in a plain Playwright context,
where it must reach its sink (so the probe really sends), then in a BrowserSession, where its
sink must receive nothing at all: not a byte, not even a TCP connection.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import WSMsgType, web

from envs import browser
from envs.browser import BrowserSession, UrlPolicy

pytestmark = pytest.mark.browser

# name -> script run in the page; S is the sink's http:// base, W its ws:// base, P its port.
IN_PAGE = {
    "fetch": "fetch(S + '/fetch', {mode: 'no-cors'}).catch(() => {})",
    "xhr": "(() => { const x = new XMLHttpRequest(); x.open('GET', S + '/xhr'); x.send(); })()",
    "beacon": "navigator.sendBeacon(S + '/beacon', 'data')",
    "prefetch": "(() => { const l = document.createElement('link'); l.rel = 'prefetch';"
    " l.href = S + '/prefetch'; document.head.appendChild(l); })()",
    "image": "(() => { new Image().src = S + '/img'; })()",
    "iframe": "(() => { const f = document.createElement('iframe'); f.src = S + '/frame';"
    " document.body.appendChild(f); })()",
    "ping": "(() => { const a = document.createElement('a'); a.href = '#x'; a.ping = S + '/ping';"
    " document.body.appendChild(a); a.click(); })()",
    "eventsource": "new EventSource(S + '/events')",
    "websocket": "(() => { const w = new WebSocket(W + '/ws'); w.onopen = () => w.send('secret'); })()",
    "worker": "new Worker('/worker.js?port=' + P)",
    "shared_worker": "new SharedWorker('/worker.js?port=' + P + '&shared=1')",
    "service_worker": "navigator.serviceWorker && navigator.serviceWorker.register('/sw.js?port=' + P).catch(() => {})",
    "webrtc_stun": "(() => { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:' + P}]});"
    " pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); })()",
    "webrtc_turn_tcp": "(() => { const pc = new RTCPeerConnection({iceServers: [{urls: 'turn:127.0.0.1:' + P"
    " + '?transport=tcp', username: 'u', credential: 'c'}]}); pc.createDataChannel('x');"
    " pc.createOffer().then((o) => pc.setLocalDescription(o)); })()",
    "webrtc_fresh_frame": "(() => { const f = document.createElement('iframe'); document.body.appendChild(f);"
    " const pc = new f.contentWindow.RTCPeerConnection({iceServers: [{urls:"
    " 'stun:127.0.0.1:' + P}]}); pc.createDataChannel('x');"
    " pc.createOffer().then((o) => pc.setLocalDescription(o)); })()",
    "webtransport": "(() => { try { new WebTransport('https://127.0.0.1:' + P + '/wt').ready"
    ".catch(() => {}); } catch (e) {} })()",
    # Playwright's routing sees only the first URL of a redirect chain.
    "redirected_fetch": "fetch('/redirect?port=' + P, {mode: 'no-cors'}).catch(() => {})",
}
# These take the page away, so each runs in a page of its own.
NAVIGATING = {
    "location": "location.href = S + '/away'",
    "form_post": "(() => { const f = document.createElement('form'); f.method = 'post';"
    " f.action = S + '/form'; document.body.appendChild(f); f.submit(); })()",
    "popup": "window.open(S + '/popup')",
    "redirected_navigation": "location.href = '/redirect?port=' + P",
}
PROBES = {**IN_PAGE, **NAVIGATING}

WORKER_JS = """
const port = new URL(location.href).searchParams.get('port');
fetch('http://127.0.0.1:' + port + '/from-worker', {mode: 'no-cors'}).catch(() => {});
const ws = new WebSocket('ws://127.0.0.1:' + port + '/worker-ws');
ws.onopen = () => ws.send('secret');
onconnect = () => {};
"""
SW_JS = """
const port = new URL(location.href).searchParams.get('port');
self.addEventListener('install', () => fetch('http://127.0.0.1:' + port + '/sw-install').catch(() => {}));
"""


class Sink:
    """Records every TCP connection (with what it sent first) and UDP datagram on one port."""

    def __init__(self) -> None:
        self.hits: list[str] = []

    async def start(self) -> Sink:
        async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                data = await asyncio.wait_for(reader.read(200), 1.0)
            except (TimeoutError, OSError):
                data = b""
            self.hits.append(f"tcp {data[:60]!r}")
            writer.close()

        self.server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        sink = self

        class Udp(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: Any) -> None:
                sink.hits.append(f"udp {data[:20]!r}")

        self.udp, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            Udp, local_addr=("127.0.0.1", self.port)
        )
        return self

    def close(self) -> None:
        self.server.close()
        self.udp.close()


@dataclass
class Outcome:
    unguarded: dict[str, list[str]] = field(default_factory=dict)
    guarded: dict[str, list[str]] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)


def script(probe: str, sink: Sink) -> str:
    base = f"const S = 'http://127.0.0.1:{sink.port}', W = 'ws://127.0.0.1:{sink.port}', P = {sink.port};"
    return f"(() => {{ {base} try {{ {PROBES[probe]}; }} catch (e) {{}} }})()"  # one failing probe stops no other


async def run_probes(page_factory, origin: str, sinks: dict[str, Sink], wait_s: float) -> None:
    page = await page_factory()
    await page.goto(origin + "/")
    await page.evaluate(";".join(script(name, sinks[name]) for name in IN_PAGE))
    for name in NAVIGATING:
        other = await page_factory()
        await other.goto(origin + "/")
        await other.evaluate(script(name, sinks[name]))
    deadline = asyncio.get_running_loop().time() + wait_s
    while asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
async def site():
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><head></head><body><p>allowed</p></body></html>", content_type="text/html")

    async def echo(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                await ws.send_str("echo " + message.data)
        return ws

    async def data(request: web.Request) -> web.Response:
        return web.Response(text="same-origin data")

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://127.0.0.1:{request.query['port']}/redirected")

    async def worker(request: web.Request) -> web.Response:
        return web.Response(text=WORKER_JS, content_type="text/javascript")

    async def service_worker(request: web.Request) -> web.Response:
        return web.Response(text=SW_JS, content_type="text/javascript")

    app.router.add_get("/", page)
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/worker.js", worker)
    app.router.add_get("/sw.js", service_worker)
    app.router.add_get("/echo", echo)
    app.router.add_get("/data", data)
    runner = web.AppRunner(app)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    yield f"http://127.0.0.1:{tcp._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    await runner.cleanup()


@pytest.fixture(scope="module")
async def outcome(site: str) -> Outcome:
    """Every probe, first in a plain context, then in a BrowserSession allowed only ``site``."""
    result = Outcome()
    sinks = {name: await Sink().start() for name in PROBES}
    try:
        plain = await (await browser.get_browser()).new_context()
        await run_probes(plain.new_page, site, sinks, wait_s=2.5)
        await plain.close()
        result.unguarded = {name: list(sink.hits) for name, sink in sinks.items()}
        for sink in sinks.values():
            sink.hits.clear()

        sessions: list[BrowserSession] = []

        async def guarded_page():
            sessions.append(await BrowserSession.open(UrlPolicy(origins=(site,))))
            return sessions[-1].page

        await run_probes(guarded_page, site, sinks, wait_s=2.5)
        result.guarded = {name: list(sink.hits) for name, sink in sinks.items()}
        result.blocked = [url for s in sessions for url in s.blocked]
        for session in sessions:
            await session.close()
    finally:
        for sink in sinks.values():
            sink.close()
    return result


@pytest.mark.parametrize("probe", list(PROBES))
async def test_the_probe_reaches_a_server_when_nothing_guards_the_page(outcome: Outcome, probe: str) -> None:
    assert outcome.unguarded[probe], f"{probe} sent nothing even without a guard: the probe is broken"


@pytest.mark.parametrize("probe", list(PROBES))
async def test_nothing_reaches_a_server_outside_the_allowlist(outcome: Outcome, probe: str) -> None:
    assert outcome.guarded[probe] == [], f"{probe} reached the server on another port"


async def test_refusals_are_listed(outcome: Outcome) -> None:
    blocked = " ".join(outcome.blocked)
    for path in ("/fetch", "/xhr", "/beacon", "/events", "/from-worker", "/away", "/form"):
        assert path in blocked, f"{path} not among the refusals"


async def test_the_allowed_origin_still_works_over_http_and_websocket(site: str) -> None:
    session = await BrowserSession.open(UrlPolicy(origins=(site,)))
    try:
        ok, feedback = await session.goto(site + "/")
        assert ok, feedback
        text = await session.page.evaluate("fetch('/data').then((r) => r.text())")
        assert text == "same-origin data"
        reply = await session.page.evaluate(
            """(url) => new Promise((resolve, reject) => {
                 const ws = new WebSocket(url);
                 ws.onopen = () => ws.send('hi');
                 ws.onmessage = (e) => resolve(e.data);
                 ws.onerror = () => reject(new Error('websocket failed'));
               })""",
            site.replace("http://", "ws://") + "/echo",
        )
        assert reply == "echo hi"
        assert session.blocked == []
    finally:
        await session.close()


async def test_a_redirect_off_the_allowlist_lands_on_a_page_that_says_why(site: str) -> None:
    sink = await Sink().start()
    session = await BrowserSession.open(UrlPolicy(origins=(site,)))
    try:
        await session.goto(f"{site}/redirect?port={sink.port}")
        assert "outside this task's allowed sites" in await session.page.inner_text("body")
        assert sink.hits == [] and any("/redirected" in url for url in session.blocked)
    finally:
        await session.close()
        sink.close()
