"""How soon the Space's status line answers a click on Score: the promise in
``spaces/README.md`` is "from the first second". Measured here, by hand, because a timed
assertion in the test suite would fail on a busy machine (the browser test checks only that
the first status is the checks stage).

    python bench/space_status_latency.py [--trials 5] [--images 8] [--busy 0]
        [--chromium /usr/bin/chromium]

Starts ``spaces/app.py`` on 127.0.0.1 with one allow-listed synthetic IN-9 ``original``
variant (Hub layout, ``bench/evaluate_memory.py`` writes it to a temporary folder), opens it
in headless Chromium (Debian's, through Playwright), and per trial: loads the page, clicks
Score (the bundled tf_efficientnet_lite0, ``original``), and times, in the page
(``performance.now()``), the click to the first status text naming a stage ("Now: ..."), then
waits for the job to end before the next trial. ``--busy K`` runs K ``while :; do :; done``
loops beside it, as a crowded machine.

Measured on a 2-core CPU, 3 trials each (the first click of a fresh Space the slowest):
quiet, 887, 73 and 112 ms; while the whole test suite ran beside it with two busy loops,
2949, 525 and 236 ms -- the 2 s the browser test used to assert is exceeded on a crowded
machine's first click.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_memory import write_hub_folder  # noqa: E402  (bench/ is not a package)

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

# Installed before the click: the time of the click, and of every change of the status line.
WATCH = """() => {
    const el = document.querySelector('#job-status');
    window.__seen = [];
    new MutationObserver(() => window.__seen.push([performance.now(), el.innerText]))
        .observe(el, {childList: true, subtree: true, characterData: true});
    document.querySelector('#score-button').addEventListener(
        'click', () => { window.__clicked = performance.now(); }, {capture: true, once: true});
}"""
FIRST_STAGE = """() => {
    const hit = window.__seen.find(([, text]) => /Now:/.test(text));
    return hit ? hit[0] - window.__clicked : null;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_space(data: Path, folder: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = os.environ | {
        "BGBENCH_SPACE_DATASETS": f"in9-bench={data}",
        "BGBENCH_LEADERBOARD_DIR": str(folder / "leaderboard"),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    log = (folder / "app.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "spaces" / "app.py")], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the app exited:\n" + (folder / "app.log").read_text()[-3000:])
        try:
            urllib.request.urlopen(url, timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the app did not start within 600 s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--images", type=int, default=8, help="images in the allow-listed dataset")
    ap.add_argument("--busy", type=int, default=0, help="busy loops beside the Space")
    ap.add_argument("--chromium", default=os.environ.get("BGBENCH_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    loops = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(args.busy)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            data = write_hub_folder(folder / "in9", args.images)
            proc, url = start_space(data, folder)
            try:
                delays = run_trials(url, args.trials, args.chromium)
            finally:
                proc.terminate()
                proc.wait(30)
    finally:
        for loop in loops:
            loop.kill()
    print(
        f"click -> first status ({args.trials} trials, {args.busy} busy loops): "
        f"median {statistics.median(delays):.0f} ms, worst {max(delays):.0f} ms "
        f"(all: {', '.join(f'{d:.0f}' for d in delays)})"
    )


def run_trials(url: str, trials: int, chromium: str) -> list[float]:
    from playwright.sync_api import sync_playwright

    delays = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        for _ in range(trials):
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url)
            page.get_by_role("button", name="Score", exact=True).wait_for()
            page.evaluate(WATCH)
            page.get_by_role("button", name="Score", exact=True).click()
            page.wait_for_function(
                "() => window.__seen.some(([, text]) => /Now:/.test(text))", timeout=120_000
            )
            delays.append(page.evaluate(FIRST_STAGE))
            page.wait_for_function(
                "() => /Done in|Stopped/.test(document.querySelector('#job-status').innerText)",
                timeout=900_000,
            )
            page.close()
        browser.close()
    return delays


if __name__ == "__main__":
    main()
