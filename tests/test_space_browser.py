"""End to end in a real browser: the Space served on 127.0.0.1, driven by headless Chromium
(Debian's ``chromium`` through Playwright from PyPI): score the bundled model on an
allow-listed local dataset (live progress, the report against results.json, the predictions
on a few images), find the leaderboard row, show one image in every variant (Explore).

Needs ``apt-get install chromium`` and ``pip install playwright`` (no Playwright browser
download); skipped, saying which is missing, otherwise. ``BGBENCH_SCREENSHOT_DIR`` keeps the
screenshots somewhere to look at.
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
import urllib.request
from pathlib import Path

import pytest

from tests.in9_fixture import VARIANTS

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(in9_release, tmp_path):
    """``python spaces/app.py`` with the synthetic IN-9 as the only allowed dataset."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    port = _free_port()
    env = os.environ | {
        "BGBENCH_SPACE_DATASETS": f"in9-local={in9_release}",
        "BGBENCH_LEADERBOARD_DIR": str(tmp_path / "leaderboard"),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
        "TMPDIR": str(tmp_path / "tmp"),  # the app is stopped with SIGTERM: no atexit cleanup
    }
    (tmp_path / "tmp").mkdir()
    log = (tmp_path / "app.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "spaces" / "app.py")], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(240):
            if proc.poll() is not None:
                pytest.fail("the app exited:\n" + (tmp_path / "app.log").read_text()[-3000:])
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the app did not start:\n" + (tmp_path / "app.log").read_text()[-3000:])
        yield url, tmp_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _shot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
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


def test_score_the_bundled_model_in_a_browser(served):
    from playwright.sync_api import expect, sync_playwright

    url, tmp_path = served
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url)
            page.get_by_role("button", name="Score").click()
            # live progress: the task's own bars (one per variant) while the job runs
            expect(page.get_by_text(re.compile(r"in9/\w+")).first).to_be_visible(timeout=420_000)
            _shot(page, tmp_path, "space_progress.png")
            report = page.locator("#report")
            expect(report).to_contain_text("BG-GAP =", timeout=420_000)
            href = page.locator("a[href*='results.json']").first.get_attribute("href")
            results = json.loads(page.request.get(href).body())
            text = report.inner_text()
            gap = 100 * results["bg_gap"]
            assert f"BG-GAP = {gap:.1f} points" in text
            for variant, r in results["variants"].items():
                assert f"{100 * r['accuracy']:.1f}" in text, variant
            assert "Added to the leaderboard" in text
            assert str(Path(results["data"]["location"]).parent) not in text
            samples = page.locator("#samples")
            expect(samples.locator("img")).to_have_count(6 * len(results["variants"]))
            expect(samples.locator("tr")).to_have_count(1 + len(results["variants"]))
            for variant in results["variants"]:
                expect(samples.get_by_role("row").filter(has_text=variant)).to_have_count(1)
            _shot(page, tmp_path, "space_score.png")

            page.get_by_role("tab", name="Leaderboard").click()
            board = page.locator("#leaderboard")
            expect(board).to_contain_text("tf_efficientnet_lite0", timeout=60_000)
            expect(board).to_contain_text("in9-local")
            expect(board).to_contain_text("measured")
            (stored,) = [
                json.loads(line)
                for line in (tmp_path / "leaderboard" / "rows.jsonl").read_text().splitlines()
            ]
            assert stored["scores"]["BG-GAP"] == pytest.approx(round(gap, 2))
            assert stored["model"] == "tf_efficientnet_lite0"
            expect(board).to_contain_text("published")
            _shot(page, tmp_path, "space_leaderboard.png")

            page.get_by_role("tab", name="Explore").click()
            page.get_by_role("button", name="Show every variant").click()
            gallery = page.locator("#explore-gallery")
            expect(gallery.locator("img")).to_have_count(len(VARIANTS), timeout=300_000)
            for variant in VARIANTS:
                expect(gallery).to_contain_text(f"{variant}:")
            expect(page.locator("#explore-summary")).to_contain_text(f"of {len(VARIANTS)} variants")
            _shot(page, tmp_path, "space_explore.png")

            page.get_by_role("tab", name="Score a model").click()
            page.locator("#score-model textarea").fill("/etc/passwd")
            page.get_by_role("button", name="Score").click()
            expect(page.get_by_text("paths and links are refused").first).to_be_visible(
                timeout=60_000
            )
            _shot(page, tmp_path, "space_refusal.png")
        finally:
            browser.close()
