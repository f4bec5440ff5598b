"""The Space served on 127.0.0.1 and driven by headless Chromium (Debian's ``chromium``
through Playwright from PyPI) and by plain HTTP requests: the fixtures and page helpers of
``tests/test_space_browser.py`` (every task's report, compare, the flips, a phone) and
``tests/test_space_availability.py`` (the queue under careless and hostile clients). Each test
file starts its own server, so the two run on two workers at once.

Needs ``apt-get install chromium`` and ``pip install playwright`` (no Playwright browser
download); a test that uses the ``launch`` or ``browser`` fixture (tests/conftest.py) is
skipped, saying which is missing, otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hf_bgbench.space.views.display import READABLE_PLOT_PX

CHROMIUM = os.environ.get("BGBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[1]
WIDTH = 1280
PHONE = 390  # px: a phone's width
LONG = 600_000  # ms: a job on a busy 2-core machine
THUMBNAIL_PX = 96  # a prediction's image on a phone: smaller, its object cannot be made out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url: str, folder: Path, proc: subprocess.Popen) -> None:
        self.url, self.folder, self.proc = url, folder, proc

    def log(self) -> str:
        return (self.folder / "app.log").read_text()[-4000:]

    def config(self) -> dict:
        with urllib.request.urlopen(self.url + "config", timeout=30) as r:
            return json.loads(r.read())

    def fn_index(self, api_name: str) -> int:
        for dep in self.config()["dependencies"]:
            if dep.get("api_name") == api_name:
                return dep["id"]
        raise AssertionError(f"no endpoint {api_name!r}")

    def jobs(self) -> list[int]:
        """Pids of the app's job processes: the children of its job server (a multiprocessing
        forkserver, itself a child of the app), or spawned children of the app where the
        platform has no forkserver."""
        processes = {}
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                ppid = int(re.search(r"PPid:\s+(\d+)", status.read_text()).group(1))
                cmdline = (status.parent / "cmdline").read_bytes()
            except (OSError, AttributeError):
                continue
            processes[int(status.parent.name)] = (ppid, cmdline)
        servers = {
            pid
            for pid, (ppid, cmdline) in processes.items()
            if ppid == self.proc.pid and b"forkserver" in cmdline
        }
        return [
            pid
            for pid, (ppid, cmdline) in processes.items()
            if ppid in servers or (ppid == self.proc.pid and b"spawn_main" in cmdline)
        ]

    def join(
        self, api_name: str, data: list, client: str, session: str, forged: str = ""
    ) -> tuple[int, dict]:
        """Queue a job as a script would (POST /queue/join), connecting from the loopback
        address ``client`` (127.x.y.z: every one of them reaches the server), with an
        ``X-Forwarded-For`` header of its own making when ``forged``."""
        import http.client

        body = {"data": data, "fn_index": self.fn_index(api_name), "session_hash": session}
        headers = {"Content-Type": "application/json"}
        if forged:
            headers["X-Forwarded-For"] = forged
        host, port = self.url.split("//")[1].strip("/").split(":")
        connection = http.client.HTTPConnection(
            host, int(port), timeout=60, source_address=(client, 0)
        )
        try:
            connection.request("POST", "/gradio_api/queue/join", json.dumps(body), headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"{}")
        finally:
            connection.close()


@contextlib.contextmanager
def space_launcher(tmp_path_factory) -> Iterator[Callable[..., Server]]:
    """``start(**settings)``: start ``python spaces/app.py`` with the given settings (the
    environment variables of spaces/README.md); every server started is stopped on leaving.
    Skips when Chromium or Playwright is missing (the tests drive the page with them)."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    started: list[tuple[subprocess.Popen, object]] = []

    def start(**settings: str) -> Server:
        folder = tmp_path_factory.mktemp("space")
        port = free_port()
        env = os.environ | {
            "BGBENCH_LEADERBOARD_DIR": str(folder / "leaderboard"),
            # a cache of its own: a server never finds the predictions of another server (or
            # test) of the same worker, so its jobs run -- and show their progress -- cold
            "HF_BGBENCH_CACHE": str(folder / "cache"),
            "GRADIO_SERVER_NAME": "127.0.0.1",
            "GRADIO_SERVER_PORT": str(port),
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "PYTHONPATH": str(ROOT),
            "TMPDIR": str(folder / "tmp"),  # stopped with SIGTERM: no atexit cleanup
            **settings,
        }
        (folder / "tmp").mkdir()
        log = (folder / "app.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "spaces" / "app.py")], env=env, stdout=log, stderr=log
        )
        started.append((proc, log))
        server = Server(f"http://127.0.0.1:{port}/", folder, proc)
        for _ in range(240):
            if proc.poll() is not None:
                pytest.fail("the app exited:\n" + server.log())
            try:
                urllib.request.urlopen(server.url, timeout=2)
                return server
            except OSError:
                time.sleep(0.5)
        pytest.fail("the app did not start:\n" + server.log())

    try:
        yield start
    finally:
        for proc, log in started:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()


@contextlib.contextmanager
def headless_chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright (skips when either is missing)."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
    page.goto(url)
    page.get_by_role("button", name="Score").wait_for()
    return page


def open_advanced(page) -> None:
    """Unfold the Score tab's Advanced options (variants, label map, VLM rule), folded on a
    first visit (gradio renders a folded section's controls only once it is opened)."""
    if not page.locator("#variants").is_visible():
        page.get_by_text("Advanced: variants, label map, generative-VLM rule").click()
        page.locator("#variants").wait_for()


def shot(page, folder: Path, name: str) -> Path:
    path = folder / name
    # images below the fold load lazily: scroll through the page so the shot shows them
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_timeout(800)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=True)
    keep = os.environ.get("BGBENCH_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / name)
    return path


def visible(page, label: str):
    """The control labelled ``label`` on the tab shown."""
    return page.get_by_label(label, exact=True).filter(visible=True)


def choose_task(page, task: str, benchmark: str = "in9") -> None:
    from hf_bgbench.space.settings import task_label

    pick(page, "Task", task_label(task, benchmark))


def pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the dropdown labelled ``label``."""
    box = visible(page, label)
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(500)


def click_score_and_see_the_status(page) -> list[str]:
    """Every text the status line takes from the click on Score until it names a stage,
    recorded in the page by a MutationObserver (so no fast change is missed however busy
    the machine), waiting up to 60 s."""
    page.evaluate(
        """() => {
            const el = document.querySelector('#job-status');
            window.__statusTexts = [];
            new MutationObserver(() => window.__statusTexts.push(el.innerText))
                .observe(el, {childList: true, subtree: true, characterData: true});
        }"""
    )
    page.get_by_role("button", name="Score", exact=True).click()
    page.wait_for_function(
        "() => window.__statusTexts.some(t => /Now:|Stopped/.test(t))", timeout=60_000
    )
    return [t for t in page.evaluate("window.__statusTexts") if t.strip()]


def wait_done(page) -> str:
    from playwright.sync_api import expect

    status = page.locator("#job-status")
    expect(status).to_contain_text(re.compile("Done in|Stopped"), timeout=LONG)
    text = status.inner_text()
    assert "Done in" in text, text
    return text


def check_layout(page) -> None:
    """Nothing cut off at 1280 px: no report table wider than its box, every plot shown at
    its own aspect ratio (no empty bands) and within the page."""
    overflow = page.evaluate(
        """() => [...document.querySelectorAll('#report table')]
            .filter(t => t.scrollWidth > t.clientWidth + 1)
            .map(t => t.rows[0].innerText.slice(0, 80))"""
    )
    assert overflow == [], overflow
    plots = page.evaluate(
        """() => [...document.querySelectorAll('#plots img')].map(i => {
            const r = i.getBoundingClientRect();
            return [i.alt, r.width, r.height, i.naturalWidth, i.naturalHeight];
        })"""
    )
    assert plots, "no plot shown"
    for name, width, height, natural_w, natural_h in plots:
        assert 0 < width <= WIDTH and height > 0, name
        assert abs(width / height - natural_w / natural_h) < 0.02, name
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= WIDTH, page_width


def download_links(page) -> list[str]:
    """The addresses of the files offered for download, decoded."""
    from urllib.parse import unquote

    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    return [unquote(h) for h in hrefs]


def results_of(page) -> dict:
    href = page.locator("a[href*='.json']").first.get_attribute("href")
    return json.loads(page.request.get(href).body())


def at_width(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 1000 if width > PHONE else 844})
    page.wait_for_timeout(600)


def phone_layout_problems(page, where: str) -> list[str]:
    """What is cut off at 390 px: the page itself scrolling sideways (a wide table or grid
    must scroll inside its own box), a table header squeezed to a character per line, a
    table or grid running past the screen's edge, a plot shrunk below a readable width, a
    prediction's thumbnail below :data:`THUMBNAIL_PX`."""
    problems = []
    width = page.evaluate("document.documentElement.scrollWidth")
    if width > PHONE:
        problems.append(f"{where}: the page is {width} px wide")
    squeezed = page.evaluate(
        """() => [...document.querySelectorAll('#report th, #compare-report th, #leaderboard th')]
            .filter(th => th.offsetParent && th.innerText.trim().length > 3)
            .filter(th => th.getBoundingClientRect().width < 2.5 * parseFloat(
                getComputedStyle(th).fontSize))
            .map(th => th.innerText.slice(0, 30))"""
    )
    problems += [f"{where}: header squeezed: {h!r}" for h in squeezed]
    cut = page.evaluate(
        """() => [...document.querySelectorAll(
                '#samples table, #flips .bgbench-flip, #leaderboard table, #report table')]
            .filter(t => t.offsetParent)
            .filter(t => {
                // fine when some box around it scrolls sideways and fits on the screen (a
                // table may sit in nested scrolling boxes, e.g. Gradio's dataframe: an inner
                // one as wide as its columns inside an outer one as wide as the screen)
                for (let e = t; e; e = e.parentElement) {
                    const o = getComputedStyle(e).overflowX;
                    if ((o === 'auto' || o === 'scroll')
                        && e.getBoundingClientRect().right <= window.innerWidth + 1) return false;
                }
                return t.getBoundingClientRect().right > window.innerWidth + 1; })
            .map(t => t.id || t.className || t.tagName)"""
    )
    problems += [f"{where}: cut off: {c}" for c in cut]
    behind = page.evaluate(
        "() => [...document.querySelectorAll('.overflow-dropdown button')].map(b => b.innerText)"
    )
    problems += [f"{where}: tab behind the 'more' menu: {t!r}" for t in behind]
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('#explore-gallery .caption-label')]
            .filter(c => c.offsetParent && c.scrollWidth > c.clientWidth + 1)
            .map(c => c.innerText)"""
    )
    problems += [f"{where}: caption cut: {c!r}" for c in clipped]
    names = page.evaluate(
        """() => [...document.querySelectorAll('.filename .stem')]
            .filter(s => s.offsetParent && s.scrollWidth > s.clientWidth + 1)
            .map(s => s.innerText)"""
    )
    problems += [f"{where}: download name cut: {n!r}" for n in names]
    shrunk = page.evaluate(
        """(least) => [...document.querySelectorAll('.bgbench-plots img')]
            .filter(i => i.offsetParent)
            .filter(i => i.getBoundingClientRect().width + 1 < Math.min(i.naturalWidth, least))
            .map(i => `${i.alt}: ${Math.round(i.getBoundingClientRect().width)} px`)""",
        READABLE_PLOT_PX,
    )
    problems += [f"{where}: plot shrunk past reading: {s}" for s in shrunk]
    thumbnails = page.evaluate(
        """(least) => [...document.querySelectorAll('#samples img')]
            .filter(i => i.offsetParent && i.getBoundingClientRect().width < least)
            .map(i => `${i.alt}: ${Math.round(i.getBoundingClientRect().width)} px`)""",
        THUMBNAIL_PX,
    )
    problems += [f"{where}: prediction thumbnail below {THUMBNAIL_PX} px: {t}" for t in thumbnails]
    return problems


def wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {seconds} s: {what}")
