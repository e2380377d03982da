"""The app on loopback and Debian's Chromium driven by Playwright, shared by the browser tests.

One server for the whole session (the real assistant with the offline policy, the built-in
catalog and a two-passage knowledge base); a fresh browser context per page, so no saved
conversation leaks between tests. The browser is headless, without sandbox (containers) and with
background networking off. Everything here is skipped, saying why, without /usr/bin/chromium or
the playwright package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import app
from assistant.agent.conversation import Assistant
from assistant.web.blocks import queue_demo
from tests.e2e.pages import CHROMIUM, open_app
from tests.fakes.app import TinyKnowledge, make_settings

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="Debian's chromium is not installed (apt-get install chromium)")
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.slow)
            if not CHROMIUM.exists():
                item.add_marker(skip)


@pytest.fixture(scope="package")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        settings = make_settings(tmp_path_factory.mktemp("data"), mcp=True)
        demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
        queue_demo(demo)
        options = app.launch_options(settings) | {"prevent_thread_lock": True, "quiet": True}
        _, url, _ = demo.launch(**options)
        try:
            yield url
        finally:
            demo.close()


# Package scope, not session: Playwright's sync API keeps an asyncio loop running on this thread
# while it is open, and tests after tests/e2e that call asyncio.run (the MCP client) would fail.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser: Any, app_url: str) -> Iterator[Callable[..., Any]]:
    """Opens the app in a fresh context: open_page(size='desktop'|'phone', locale='en-US')."""
    contexts: list[Any] = []

    def opener(size: str = "desktop", locale: str = "en-US") -> Any:
        page, context = open_app(browser, app_url, size, locale)
        contexts.append(context)
        return page

    yield opener
    for context in contexts:
        context.close()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder for files to upload."""
    return tmp_path
