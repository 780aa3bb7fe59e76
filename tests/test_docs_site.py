"""The documentation site builds without a warning and works offline: no page loads a script,
a style sheet or a font from another host, and its Mermaid diagrams are drawn by the shipped
script (docs/javascripts/NOTICE.txt), never by the one mkdocs-material fetches from a CDN."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from envs.browser.launch import chromium_path

ROOT = Path(__file__).resolve().parents[1]
# what a page asks the browser to fetch as it loads: scripts, style sheets, icons, fonts, images
_FETCHED = re.compile(r'<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]+)"', re.IGNORECASE)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    return out


def test_no_page_fetches_anything_from_another_host(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        for url in _FETCHED.findall(page.read_text(encoding="utf-8")):
            assert not re.match(r"(https?:)?//", url), (page.relative_to(site), url)
    laser = (site / "methods" / "laser.html").read_text(encoding="utf-8")
    assert 'src="../javascripts/mermaid.min.js"' in laser
    assert (
        (site / "javascripts" / "mermaid.min.js")
        .read_text(encoding="utf-8")
        .rstrip()
        .endswith('globalThis["mermaid"] = globalThis.__esbuild_esm_mermaid_nm["mermaid"].default;')
    )


_LINK = re.compile(r'<a\b[^>]*?\bhref="([^"#]*)(?:#[^"]*)?"', re.IGNORECASE)


def test_every_link_between_pages_names_a_file(site):
    """Opened from disk (file://), a link to a folder shows a directory listing, not the page:
    every link from one page to another names the page's own file, which exists."""
    checked = 0
    for page in sorted(set(site.rglob("*.html")) - {site / "404.html"}):  # 404.html: only a server shows it
        for href in _LINK.findall(page.read_text(encoding="utf-8")):
            if not href or re.match(r"[a-z]+:", href):
                continue  # an anchor on the page itself, or another site
            target = (page.parent / href).resolve()
            assert target.is_file() and target.suffix != "", (page.relative_to(site), href)
            checked += 1
    assert checked > 100


@pytest.mark.browser
async def test_a_diagram_is_drawn_with_every_other_host_unreachable(site):
    """Chromium opens a method page served from this machine, every request elsewhere refused:
    the theme finds the shipped ``mermaid`` and draws the graph (in a closed shadow root, so its
    drawing shows as the diagram element's height: the source text alone is a few lines)."""
    from playwright.async_api import async_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    elsewhere: list[str] = []

    async def only_here(route):
        if route.request.url.startswith(origin):
            await route.continue_()
        else:
            elsewhere.append(route.request.url)
            await route.abort()

    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
            page = await browser.new_page()
            await page.route("**/*", only_here)
            await page.goto(f"{origin}/methods/laser.html")
            diagram = page.locator("div.mermaid").first
            await diagram.wait_for(state="attached", timeout=30_000)
            for _ in range(100):
                box = await diagram.bounding_box()
                if box and box["height"] > 300:
                    break
                await asyncio.sleep(0.2)
            await browser.close()
    finally:
        server.shutdown()
    assert box and box["height"] > 300, box
    assert elsewhere == []


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass
