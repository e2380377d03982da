"""What a chat turn costs the server as the page sends it, against the same turn as API clients
send it, in one process (no HTTP): `App.answer` (the `chat` event) against `App.page_answer`
(the page's event: also the form, the panel and the saved record), each followed by Gradio's
post-processing of its outputs (`Blocks.postprocess_data`), over `benchmarks.load`'s 50
conversations of 10 turns. A first untimed pass warms the caches (e5 queries, searches); the two
kinds then alternate, `--rounds` times each, every round with new sessions.

    python -m benchmarks.page_cost [--rounds 2]

Prints CPU ms per turn for each part and each round.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.load import message

SESSIONS, TURNS = 50, 10  # as benchmarks.load runs them


def build(data_dir: Path) -> tuple[Any, Any, Any, Any]:
    """The app's Blocks, its `App`, and the page's and the API's turn events: the real assistant,
    its knowledge index built in `data_dir` (from the shipped vectors, on first use)."""
    import app
    from assistant.agent.conversation import Assistant
    from assistant.settings import Settings

    settings = Settings(data_dir=data_dir)
    demo = app.build_demo(settings, assistant=Assistant(settings))
    fns = list(demo.fns.values())
    page = next(f for f in fns if getattr(f.fn, "__name__", "") == "page_answer")
    chat = next(f for f in fns if f.api_name == "chat")
    return demo, page.fn.__self__, page, chat


def one_pass(built: tuple[Any, Any, Any, Any], kind: str, sessions: int) -> tuple[float, float]:
    """CPU ms per turn of the handler and of Gradio's post-processing, `kind` 'answer' or
    'page_answer', over `sessions` new conversations."""
    from gradio.state_holder import SessionState

    from assistant.web.state.session import WebSession

    demo, ui, page, chat = built
    fn = page if kind == "page_answer" else chat
    state = SessionState(demo)
    handler = post = 0.0
    for index in range(sessions):
        web = WebSession()
        for turn in range(TURNS):
            lang, text = message(index, turn)
            start = time.process_time()
            outputs = getattr(ui, kind)(text, lang, web)
            middle = time.process_time()
            asyncio.run(demo.postprocess_data(fn, list(outputs), state))
            handler, post = handler + middle - start, post + time.process_time() - middle
    turns = sessions * TURNS
    return handler / turns * 1000, post / turns * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="page-cost-") as folder:
        built = build(Path(folder))
        one_pass(built, "answer", args.sessions)  # warm: e5 queries, kept searches, figures
        for round_ in range(1, args.rounds + 1):
            for kind in ("answer", "page_answer"):
                handler, post = one_pass(built, kind, args.sessions)
                print(
                    f"round {round_} {kind:12s} handler {handler:6.2f} ms  postprocess"
                    f" {post:6.2f} ms  together {handler + post:6.2f} ms a turn",
                    flush=True,
                )


if __name__ == "__main__":
    main()
