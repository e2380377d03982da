"""`gpu-advisor ask` (one turn) and `gpu-advisor chat` (a terminal conversation).

    gpu-advisor ask "QUESTION" [--session FILE] [--lang xx] [--llm SPEC] [--json]
    gpu-advisor chat [--session FILE] [--lang xx] [--llm SPEC]

`--session FILE` loads the conversation from FILE (a new one when FILE does not exist) and saves
it after the turn, so several `ask` calls make one conversation. `--llm SPEC` picks the chat
model for this run ('offline' or an init_chat_model spec such as 'openai:gpt-4o'); the default
comes from Settings (GPU_ADVISOR_LLM), and without one the offline policy answers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from assistant.agent.conversation import Assistant, Session
    from assistant.agent.events import TurnResult

JSON_KEYS = (
    "intent",
    "language",
    "answer",
    "tool_calls",
    "citations",
    "state",
    "grounded",
    "ungrounded_numbers",
    "notices",
    "brain",
    "error_id",
)
EXIT_COMMANDS = frozenset({"/quit", "/exit", "/q"})
NEW_COMMAND = "/new"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--session",
        type=Path,
        default=None,
        metavar="FILE",
        help="conversation file: loaded before the turn (if it exists) and saved after it",
    )
    parser.add_argument(
        "--lang",
        default=None,
        metavar="xx",
        help="answer language: en, nl, fr, tr, de or es (default: the message's language)",
    )
    parser.add_argument(
        "--llm",
        default=None,
        metavar="SPEC",
        help="'offline' or an init_chat_model spec such as 'openai:gpt-4o' (default: Settings)",
    )


def register(subparsers: Any) -> None:
    ask = subparsers.add_parser(
        "ask",
        help="ask the advisor one question (one conversation turn)",
        description="Ask which GPU instance to rent for a training job, or a guidance question.",
    )
    ask.add_argument("question", nargs="+", help="the question, in any of the six languages")
    _common(ask)
    ask.add_argument("--json", action="store_true", help="print the turn's result as JSON")
    ask.set_defaults(handler=run_ask)

    chat = subparsers.add_parser(
        "chat",
        help="talk with the advisor in the terminal",
        description=f"A conversation in the terminal; {NEW_COMMAND} starts over, /quit ends.",
    )
    _common(chat)
    chat.set_defaults(handler=run_chat)


def _assistant(llm: str | None) -> Assistant:
    from assistant.agent.conversation import Assistant
    from assistant.settings import Settings

    settings = Settings()
    if llm is not None:
        settings = settings.model_copy(update={"llm": llm})
    return Assistant(settings)


def _session(path: Path | None) -> Session:
    from assistant.agent.conversation import Session

    return Session.load(path) if path is not None else Session()


def result_json(result: TurnResult) -> dict[str, Any]:
    """The JSON object `ask --json` prints."""
    data = result.model_dump(mode="json")
    data["tool_calls"] = [
        {"name": c["name"], "args": c["args"], "result": c["result"]} for c in data["tool_calls"]
    ]
    return {key: data[key] for key in JSON_KEYS}


def run_ask(args: argparse.Namespace) -> int:
    assistant = _assistant(args.llm)
    session = _session(args.session)
    result = assistant.respond(" ".join(args.question), session, lang=args.lang).result
    if args.json:
        print(json.dumps(result_json(result), indent=2, ensure_ascii=False))
    else:
        print(result.answer)
    if args.session is not None:  # after the answer: a failed save never loses it
        _save(session, args.session)
    return 0


def _save(session: Session, path: Path) -> None:
    """Save the session; a folder it cannot write is one error line naming the folder."""
    from tools.errors import needs_write_access

    with needs_write_access(path.parent, "saving the session"):
        session.save(path)


def _print_turn(
    assistant: Assistant, text: str, session: Session, lang: str | None, out: TextIO, err: TextIO
) -> None:
    from assistant.agent.events import AnswerChunk, Notice, ToolEnd, ToolStart, summarize_result

    for event in assistant.respond(text, session, lang=lang):
        if isinstance(event, ToolStart):
            print(f"  · {event.name} …", file=err, flush=True)
        elif isinstance(event, ToolEnd):
            outcome = summarize_result(event.artifact) if event.status == "success" else "error"
            print(f"  · {event.name}: {outcome} ({event.duration_s:.2f} s)", file=err, flush=True)
        elif isinstance(event, Notice):
            print(event.text, file=out, flush=True)
        elif isinstance(event, AnswerChunk):
            print(event.text, end="", file=out, flush=True)
    print(file=out)


def run_chat(args: argparse.Namespace) -> int:
    assistant = _assistant(args.llm)
    session = _session(args.session)
    print(
        f"GPU Advisor. Describe a training job or ask a question; {NEW_COMMAND} starts over, "
        "/quit ends.",
        file=sys.stderr,
    )
    while True:
        try:
            text = input("› ").strip()
        except (EOFError, KeyboardInterrupt):
            print(file=sys.stderr)
            break
        if text in EXIT_COMMANDS:
            break
        if text == NEW_COMMAND:
            session = _session(None)
        elif text:
            _print_turn(assistant, text, session, args.lang, sys.stdout, sys.stderr)
        if args.session is not None:
            _save(session, args.session)
    return 0
