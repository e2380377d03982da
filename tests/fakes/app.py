"""The web app for tests: a tiny knowledge base, settings on a free loopback port, and the app
launched with `prevent_thread_lock=True` for as long as a `with` block lasts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import app
from assistant.agent.conversation import Assistant
from assistant.settings import Settings
from assistant.web.blocks import queue_demo
from knowledge.retrieval import Passage
from tests.fakes.chroma import free_port  # re-exported: the app tests take it from here

PASSAGES = {
    "en": ("Spot instances can be reclaimed", "Save a checkpoint often when you run on spot."),
    "tr": ("Spot örnekler geri alınabilir", "Spot üzerinde sık sık checkpoint kaydedin."),
}


class TinyKnowledge:
    """A knowledge base of one topic in two languages (what the tools need: `search`)."""

    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: str | None = None
    ) -> list[Passage]:
        code = lang if lang in PASSAGES else "en"
        title, text = PASSAGES[code]
        passage = Passage(
            topic="provider/spot", lang=code, title=title, text=text,
            source=f"knowledge/docs/{code}/spot.md", score=1.0, chunk_id=f"provider/spot#{code}#0",
            query_lang=lang or "en", lang_fallback=False,
        )  # fmt: skip
        return [passage][:k]


def make_settings(data_dir: Path, **over: Any) -> Settings:
    """Settings with the data in `data_dir` and a free port."""
    return Settings(data_dir=data_dir, port=free_port(), **over)


@contextmanager
def running_app(settings: Settings, *, queue: bool = True) -> Iterator[str]:
    """The app for `settings` (tiny knowledge base) launched on loopback; yields its URL."""
    demo = app.build_demo(settings, assistant=Assistant(settings, knowledge=TinyKnowledge()))
    if queue:
        queue_demo(demo)
    options = app.launch_options(settings) | {"prevent_thread_lock": True, "quiet": True}
    _, url, _ = demo.launch(**options)
    try:
        yield url
    finally:
        demo.close()
