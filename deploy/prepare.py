"""What the workers share and must not each make at once, made once before they start:

- the key the browser's saved conversation is encrypted with (every worker must use the same
  one, or a page reload that lands on another worker could not read its conversation back);
- the knowledge index, opened and built when missing or stale (two workers building it at the
  same time would each publish their own and remove the other's).

    python -m deploy.prepare          (the settings come from GPU_ADVISOR_* as for app.py)
"""

from __future__ import annotations

import logging
import os
import time

from assistant.settings import Settings
from assistant.web.state.session import browser_secret

__all__ = ["main", "prepare"]

log = logging.getLogger("deploy.prepare")


def prepare(settings: Settings) -> str:
    """Make the shared browser key and the knowledge index of `settings`; returns a summary."""
    from knowledge.base import KnowledgeBase  # deferred: Chroma and the embedder

    start = time.perf_counter()
    browser_secret(settings.data_dir)
    kb = KnowledgeBase(settings.knowledge_config())
    try:
        index = kb.open()
        chunks = index.manifest.chunk_count
    finally:
        kb.close()
    store = settings.chroma_url or "embedded Chroma"
    seconds = time.perf_counter() - start
    return f"knowledge index ready: {chunks} chunks in {store} ({seconds:.1f} s)"


OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ORT_DISABLE_TELEMETRY": "1",
           "ANONYMIZED_TELEMETRY": "False"}  # fmt: skip


def main() -> int:
    for key, value in OFFLINE.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    log.info("%s", prepare(Settings()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
