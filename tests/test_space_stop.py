"""Stop, when the page still receives a running job's updates after Stop's own message.

The page applies a job's updates until Gradio's cancel has returned. Under load that is
after Stop's message, and an update in flight overwrote "Stopped" (the CI saw the status
stay at "loading … 20 s"). Here the race is made certain: the server's cancel waits 2 s
while the job keeps reporting every 50 ms."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from tests.space_pages import WIDTH

pytestmark = pytest.mark.slow  # a Gradio server and a browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def slow_cancel_page(browser, monkeypatch):
    import gradio as gr
    import gradio.routes

    from hf_bgbench.space.jobs import queueing

    cancel_now = gradio.routes.cancel_tasks

    async def cancel_late(task_ids):
        await asyncio.sleep(2.0)
        return await cancel_now(task_ids)

    monkeypatch.setattr(gradio.routes, "cancel_tasks", cancel_late)

    def job():
        for tick in range(1200):
            yield f"running, update {tick}", gr.update(value="Running…", interactive=False)
            time.sleep(0.05)

    with gr.Blocks() as demo:
        status = gr.Markdown("Press Run", elem_id="job-status")
        run = gr.Button("Run")
        stop = gr.Button("Stop")
        # as every job of the Space (queueing.queued_job): a quick check at the click, then the job
        running = run.click(lambda: None, None, None, queue=False).success(job, None, [status, run])
        queueing.stop_button(stop, running, status, run, "Run")
    demo.queue().launch(
        server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True
    )
    page = browser.new_page(viewport={"width": WIDTH, "height": 600})
    try:
        page.goto(demo.local_url)
        yield page
    finally:
        page.close()
        demo.close()


def test_stopped_stays_said_when_updates_arrive_after_stop(slow_cancel_page):
    from playwright.sync_api import expect

    page = slow_cancel_page
    status = page.locator("#job-status")
    page.get_by_role("button", name="Run").click()
    expect(status).to_contain_text("running, update", timeout=30_000)
    page.get_by_role("button", name="Stop").click()
    # Stop's own message shows at once; the job's updates keep landing for the next 2 s
    # (the slow cancel); once the cancel returns, the page says Stopped again, for good
    expect(status).to_contain_text("Stopped", timeout=30_000)
    page.wait_for_timeout(2_500)
    expect(status).to_contain_text("Stopped at your request", timeout=30_000)
    page.wait_for_timeout(1_000)
    assert "Stopped at your request" in status.inner_text()
    expect(page.get_by_role("button", name="Run")).to_be_enabled()
