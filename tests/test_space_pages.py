"""The browser tests' helpers skip, saying what to install, on a machine that lacks Chromium
or Playwright: the README's test command passes on either."""

from __future__ import annotations

import sys

import pytest

from tests.space_pages import headless_chromium


def test_the_browser_skips_without_playwright_even_where_chromium_is(monkeypatch):
    monkeypatch.setitem(sys.modules, "playwright", None)  # an import of it now fails
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(pytest.skip.Exception), headless_chromium():
        pass
