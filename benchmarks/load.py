"""Load: many concurrent chat sessions through the served set (nginx, N app workers, one Chroma
server), each checked for cross-talk, at 1 and then 2 workers.

    .venv/bin/python -m benchmarks.load [--workers 1,2] [--sessions 50] [--turns 10]
        [--shape burst|paced] [--browser-events] [--data-dir DIR] [--profile DIR] [--json FILE]
        [--assistant-only]

For each worker count the set is started with `deploy.serve.Stack` on free loopback ports (the
data folder is shared between the runs; its knowledge index is built once). Every session is a
browser tab as `deploy.probe.GradioSession` speaks it: it loads the page (the proxy pins it to a
worker with a cookie), holds a heartbeat stream, and sends its ten messages in one of six
languages, each turn timed from `queue/join` to the event's completion. Shapes: *burst* (the
next message as soon as the answer is in: every session always has a turn queued) and *paced*
(a seeded 2-6 s reading time before each message). By default a turn is the `chat` event alone,
as API clients send it; with `--browser-events` it is the event the page sends (found by the send
button's click), which also returns the form, the panel and the conversation saved in the
browser, and any events the page chains after it, timed as part of the turn; and each tab, as
it opens, runs the page's load event as a browser does before anyone can type (it restores the
saved conversation, here none, and starts the tab's session on the server: Gradio's per-session
state, about 11 ms of CPU, that the first turn would pay otherwise). The tab fills chained
after it (catalog, estimator, tab names) are not sent: turns read nothing they write.

Cross-talk: session i asks about a model of its own size (1.1B, 1.3B, ... in 0.2B steps). Every
returned chat must hold exactly the messages this session sent and no answer may name another
session's size; counted apart, every job answer (all turns but 7 and 10) must name its own
size ("~7.3B", "d'environ 7.3B"): an answer that does not is wrong but not someone else's.

Reported per worker count: p50/p95/max latency (and p95 per turn: the first turns of a burst
queue behind everyone's first), turns/s, errors, cross-talk, server CPU per turn
(all workers, from /proc), nginx, Chroma and client CPU per turn, sessions per worker, the
load average and `python_reference_s` (the machine's pure-Python speed, to compare machines);
then throughput scaling (turns/s at N workers over turns/s at 1). `--profile` samples worker
w1 with py-spy (`pip install py-spy`) during the timed turns and breaks its CPU down
(`benchmarks/load_profile.py`); `--assistant-only` runs the same conversations through
`Assistant.respond` in-process for the assistant's own CPU per turn.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import re
import statistics
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.load_profile import start_profiler, stop_profiler
from deploy.probe import (
    GradioSession,
    JoinRefused,
    chat_text,
    find_fn_index,
    find_load_event,
    find_page_event,
    follow_ups,
    user_messages,
)
from deploy.procs import descendants, free_ports, process_cpu_s
from deploy.serve import Stack
from deploy.settings import ServeSettings

THINK_S = (2.0, 6.0)
# Ten turns per language: the job (the session's own model size), amendments, two questions.
SCRIPTS: dict[str, list[str]] = {
    "en": ["LoRA fine-tune of a {size}B model on 100M tokens", "and with full fine-tuning?",
           "only spot", "sequence length 4096", "at most $40 per hour", "QLoRA instead",
           "How much VRAM does QLoRA save?", "use 2 GPUs", "300M tokens", "Do I need NVLink?"],
    "nl": ["LoRA op een model van {size} miljard parameters, 100 miljoen tokens",
           "en met volledige fine-tuning?", "alleen spot", "sequentielengte 4096",
           "maximaal 40 dollar per uur", "toch QLoRA", "Hoeveel VRAM bespaart QLoRA?",
           "gebruik 2 GPU's", "300 miljoen tokens", "Heb ik NVLink nodig?"],
    "fr": ["LoRA sur un modèle de {size} milliards de paramètres, 100 millions de tokens",
           "et avec un affinage complet ?", "seulement spot", "longueur de séquence 4096",
           "maximum 40 $ par heure", "plutôt QLoRA", "Combien de VRAM QLoRA économise-t-il ?",
           "utilise 2 GPU", "300 millions de tokens", "Ai-je besoin de NVLink ?"],
    "tr": ["{size} milyar parametreli modelde LoRA, 100 milyon token", "peki tam ince ayar ile?",
           "sadece spot", "dizi uzunluğu 4096", "saatte en fazla 40 dolar", "onun yerine QLoRA",
           "QLoRA ne kadar VRAM tasarrufu sağlar?", "2 GPU kullan", "300 milyon token",
           "NVLink gerekli mi?"],
    "de": ["LoRA für ein Modell mit {size} Milliarden Parametern, 100 Millionen Tokens",
           "und mit vollständigem Fine-Tuning?", "nur Spot", "Sequenzlänge 4096",
           "höchstens 40 Dollar pro Stunde", "lieber QLoRA", "Wie viel VRAM spart QLoRA?",
           "2 GPUs verwenden", "300 Millionen Tokens", "Brauche ich NVLink?"],
    "es": ["LoRA de un modelo de {size} mil millones de parámetros con 100 millones de tokens",
           "¿y con ajuste fino completo?", "solo spot", "longitud de secuencia 4096",
           "como máximo 40 dólares por hora", "mejor QLoRA", "¿Cuánta VRAM ahorra QLoRA?",
           "usa 2 GPU", "300 millones de tokens", "¿Necesito NVLink?"],
}  # fmt: skip
LANGS = list(SCRIPTS)
# Turns 7 ("How much VRAM does QLoRA save?") and 10 ("Do I need NVLink?") are guidance questions
# answered from the knowledge base; every other turn is about the job and names its model.
GUIDANCE_TURNS = (7, 10)
MAX_SESSIONS = 200  # sizes stay distinct (1.1B ... 40.9B)


def model_size(index: int) -> float:
    """Session `index`'s own model size in billions: 1.1, 1.3, ... (never a whole number)."""
    return round(1.1 + 0.2 * index, 1)


def marker(index: int) -> str:
    """How answers name session `index`'s model ('~7.3B parameters')."""
    return f"~{model_size(index):.1f}B"


def message(index: int, turn: int) -> tuple[str, str]:
    """The language and text of session `index`'s `turn` (0-based)."""
    lang = LANGS[index % len(LANGS)]
    size = f"{model_size(index):.1f}"
    return lang, SCRIPTS[lang][turn].format(size=size if lang == "en" else size.replace(".", ","))


# a model size as any language writes it: '~1.5B', "d'environ 1.5B", '1,5 B'; never a part of
# another number ('11.5B' is not 1.5B)
SIZE = re.compile(r"(?<![\d.,])(\d{1,2})[.,](\d) ?B\b")


def sizes_named(text: str) -> set[str]:
    """The model sizes `text` names, as '1.5' (one pass over the text, however many sessions)."""
    return {f"{whole}.{tenth}" for whole, tenth in SIZE.findall(text)}


def names_model(index: int, text: str) -> bool:
    """Whether `text` names session `index`'s model size."""
    return f"{model_size(index):.1f}" in sizes_named(text)


def _answer(chat: list[dict[str, Any]]) -> str:
    last_user = max(i for i, m in enumerate(chat) if m.get("role") == "user")
    return "\n".join(chat_text(m) for m in chat[last_user + 1 :])


def cross_talk(index: int, sent: list[str], chat: list[dict[str, Any]], sessions: int) -> list[str]:
    """What in `chat` (returned after `sent`'s last message) is not session `index`'s own."""
    problems = []
    shown = user_messages(chat)
    if shown != sent:
        problems.append(f"the chat holds {len(shown)} user messages, not the {len(sent)} sent")
    named = sizes_named("\n".join(chat_text(m) for m in chat))
    foreign = [marker(j) for j in range(sessions) if j != index and f"{model_size(j):.1f}" in named]
    if foreign:
        problems.append(f"names other sessions' models: {', '.join(foreign[:3])}")
    return problems


def misses_own_model(index: int, sent: list[str], chat: list[dict[str, Any]]) -> str:
    """Why the answer to a job turn (not in `GUIDANCE_TURNS`) does not show session `index`'s
    job, or ''."""
    if len(sent) not in GUIDANCE_TURNS and not names_model(index, _answer(chat)):
        return f"turn {len(sent)}'s answer does not name {marker(index)}"
    return ""


@dataclass(frozen=True)
class Plan:
    """What one measured run sends."""

    sessions: int = 50
    turns: int = 10
    paced: bool = False
    browser_events: bool = False  # turns as the page sends them (with form, panel, saved chat)


@dataclass
class TurnRecord:
    session: int
    turn: int
    seconds: float
    error: str = ""
    cross_talk: list[str] = field(default_factory=list)
    missed_model: str = ""  # a job answer that does not name the session's model (not its job)
    end: float = field(default_factory=time.perf_counter)


def run_session(
    url: str, fn: int, index: int, plan: Plan, start: threading.Barrier,
    out: list[TurnRecord], workers: dict[int, str], chain: list[tuple[int, int]],
    opening: threading.Lock, on_load: tuple[int, int] | None = None,
) -> None:  # fmt: skip
    """One tab: open the page (one tab at a time, as people arrive: the proxy then sees each
    open page's heartbeat when it places the next) and run its `on_load` event as a browser
    does (nothing saved in it), wait for everyone, then send `plan.turns` messages."""
    think = random.Random(index) if plan.paced else None
    session = GradioSession(url, timeout=300.0)
    try:
        try:
            with opening:
                session.open()
                if on_load is not None:
                    session.call(on_load[0], [None] * on_load[1])
        except Exception as exc:  # the page did not load: every turn of the session fails
            start.wait()
            out.extend(TurnRecord(index, t, 0.0, f"page: {exc!r}"[:200]) for t in range(plan.turns))
            return
        workers[index] = session.worker or "?"
        start.wait()
        sent: list[str] = []
        for turn in range(plan.turns):
            if think is not None:
                time.sleep(think.uniform(*THINK_S))
            lang, text = message(index, turn)
            sent.append(text)
            t0 = time.perf_counter()
            try:
                chat = session.call(fn, [text, lang, None])[0]
                for follow_up, inputs in chain:  # as the page does: the panel, the saved chat
                    session.call(follow_up, [None] * inputs)
            except JoinRefused as exc:  # never queued: the session's chat goes on without it
                sent.pop()
                out.append(TurnRecord(index, turn, time.perf_counter() - t0, repr(exc)[:200]))
                continue
            except Exception as exc:  # any failure of the client or server is this turn's error
                out.append(TurnRecord(index, turn, time.perf_counter() - t0, repr(exc)[:200]))
                continue
            seconds = time.perf_counter() - t0
            problems = cross_talk(index, sent, chat, plan.sessions)
            missed = misses_own_model(index, sent, chat)
            out.append(TurnRecord(index, turn, seconds, "", problems, missed))
    finally:
        session.close()


def cpu_by_part(stack: Stack) -> dict[str, float]:
    """CPU seconds so far of the workers (together and each), nginx and Chroma."""
    parts: dict[str, float] = {}
    for child in stack.workers:
        parts[child.name] = process_cpu_s(child.pid)
    parts["workers"] = sum(parts.values())
    if stack.proxy is not None:
        pids = [stack.proxy.pid, *descendants(stack.proxy.pid)]
        parts["nginx"] = sum(process_cpu_s(p) for p in pids)
    if stack.chroma is not None:
        parts["chroma"] = process_cpu_s(stack.chroma.pid)
    return parts


def python_reference_s(repeat: int = 5) -> float:
    """This machine's speed for pure Python, to compare runs made on different machines (CI
    machines differ, and a shared one changes with its neighbours): the best of `repeat` CPU
    times of 10^6 integer additions in a loop, in seconds, measured before the set starts."""
    best = math.inf
    for _ in range(repeat):
        t0, total = time.process_time(), 0
        for i in range(1_000_000):
            total += i
        best = min(best, time.process_time() - t0)
    return round(best, 4)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# -- one measured run ------------------------------------------------------------------------


def warm_up(url: str, fn: int, workers: int) -> None:
    """Two untimed turns on each worker (first answers pay one-off costs)."""
    sessions = [GradioSession(url) for _ in range(2 * workers)]
    for session in sessions:
        session.open(heartbeat=False)
    for index, session in enumerate(sessions):
        for turn in range(2):
            session.call(fn, [message(MAX_SESSIONS - 1 - index, turn)[1], "auto", None])
    for session in sessions:
        session.close()


def timed(stack: Stack, url: str, fn: int, plan: Plan, profile: Path | None) -> dict[str, Any]:
    """Run `plan` against the started `stack`; the figures of that run."""
    records: list[TurnRecord] = []
    pinned: dict[int, str] = {}
    start = threading.Barrier(plan.sessions + 1, timeout=600)
    chain = follow_ups(url, fn) if plan.browser_events else []
    on_load = find_load_event(url) if plan.browser_events else None
    opening = threading.Lock()
    threads = [
        threading.Thread(
            target=run_session,
            args=(url, fn, i, plan, start, records, pinned, chain, opening, on_load),
        )
        for i in range(plan.sessions)
    ]
    for thread in threads:
        thread.start()
    start.wait()  # every page loaded and its heartbeat open
    load0, cpu0, client0 = os.getloadavg()[0], cpu_by_part(stack), time.process_time()
    spy = start_profiler(stack.workers[0].pid, profile) if profile else None
    t0 = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = max((r.end for r in records), default=t0) - t0  # to the last answer, not the closes
    cpu1, client1, load1 = cpu_by_part(stack), time.process_time(), os.getloadavg()[0]
    done = [r for r in records if not r.error]
    per_turn = {k: round(1000 * (cpu1[k] - cpu0[k]) / max(1, len(done))) for k in cpu1}
    on_w1 = sum(1 for r in done if pinned.get(r.session) == "w1")
    result = summary(records, plan, wall)
    result.update(
        server_cpu_ms_per_turn=per_turn.pop("workers"),
        nginx_cpu_ms_per_turn=per_turn.pop("nginx", None),
        chroma_cpu_ms_per_turn=per_turn.pop("chroma", None),
        client_cpu_ms_per_turn=round(1000 * (client1 - client0) / max(1, len(done))),
        sessions_per_worker=dict(sorted(collections.Counter(pinned.values()).items())),
        load_average_1min=[round(load0, 2), round(load1, 2)],
    )
    if spy is not None and profile is not None:
        result["w1_cpu_ms_per_turn_by_part"] = stop_profiler(
            spy, profile, on_w1, cpu1["w1"] - cpu0["w1"]
        )
    return result


def summary(records: list[TurnRecord], plan: Plan, wall: float) -> dict[str, Any]:
    done = [r.seconds for r in records if not r.error]
    crossed = [r for r in records if r.cross_talk]
    missed = collections.Counter(r.missed_model.split("'")[0] for r in records if r.missed_model)
    return {
        "sessions": plan.sessions,
        "turns_sent": len(records),
        "answered": len(done),
        "errors": len(records) - len(done),
        "cross_talk": len(crossed),
        "error_examples": sorted({r.error for r in records if r.error})[:3],
        "cross_talk_examples": [asdict(r) for r in crossed[:3]],
        "missed_own_model": sum(missed.values()),
        "missed_own_model_by_turn": dict(sorted(missed.items())),
        "p50_s": round(statistics.median(done), 2) if done else None,
        "p95_s": round(percentile(done, 0.95), 2) if done else None,
        "max_s": round(max(done), 2) if done else None,
        "p95_s_by_turn": {
            turn + 1: round(percentile(times, 0.95), 2)
            for turn, times in sorted(_times_by_turn(records).items())
        },
        "wall_s": round(wall, 1),
        "turns_per_s": round(len(done) / wall, 2) if wall else None,
    }


def _times_by_turn(records: list[TurnRecord]) -> dict[int, list[float]]:
    by_turn: dict[int, list[float]] = collections.defaultdict(list)
    for record in records:
        if not record.error:
            by_turn[record.turn].append(record.seconds)
    return by_turn


def measure(workers: int, plan: Plan, data_dir: Path, profile: Path | None) -> dict[str, Any]:
    """Start the set with `workers` workers on free ports, run `plan`, stop the set."""
    base = free_ports(workers + 2)
    settings = ServeSettings(
        data_dir=data_dir, port=base, worker_port=base + 1, workers=workers,
        chroma_port=base + workers + 1, run_dir=data_dir / f"serve-{workers}w",
    )  # fmt: skip
    stack = Stack(settings, say=lambda line: print(f"  [{workers} workers] {line}", flush=True))
    stack.start()
    try:
        url = settings.public_url()
        fn = find_page_event(url, "send") if plan.browser_events else find_fn_index(url, "chat")
        warm_up(url, fn, workers)
        shape = "paced" if plan.paced else "burst"
        print(f"  [{workers} workers] {plan.sessions} sessions x {plan.turns} turns, {shape}")
        result = timed(stack, url, fn, plan, profile / f"w1-{workers}w.txt" if profile else None)
    finally:
        stack.stop()
    return {"workers": workers, "shape": shape, "browser_events": plan.browser_events, **result}


def assistant_only(plan: Plan, data_dir: Path) -> dict[str, Any]:
    """The same conversations through `Assistant.respond` in this process, one after another:
    the assistant's own CPU per turn, without the web app, HTTP or the proxy."""
    from assistant.agent.conversation import Assistant, Session
    from assistant.settings import Settings

    # its own folder: an embedded index must not replace the served set's pointer
    assistant = Assistant(Settings(data_dir=data_dir / "assistant-only"))
    for turn in range(2):  # warm: first answers pay one-off costs
        list(assistant.respond(message(MAX_SESSIONS - 1, turn)[1], Session()))
    cpu_ms: list[float] = []
    for index in range(plan.sessions):
        session = Session()
        for turn in range(plan.turns):
            lang, text = message(index, turn)
            t0 = time.process_time()
            list(assistant.respond(text, session, lang=lang))
            cpu_ms.append(1000 * (time.process_time() - t0))
    return {
        "assistant_turns": len(cpu_ms),
        "assistant_cpu_ms_mean": round(statistics.fmean(cpu_ms), 1),
        "assistant_cpu_ms_p50": round(statistics.median(cpu_ms), 1),
        "assistant_cpu_ms_p95": round(percentile(cpu_ms, 0.95), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, e.g. 1,2")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10, help="turns per session (1-10)")
    parser.add_argument("--shape", choices=["burst", "paced"], default="burst")
    parser.add_argument(
        "--browser-events",
        action="store_true",
        help="send each turn as the page does (the send button's event: chat, form, panel and"
        " saved conversation, and any event chained after it), timed as a whole",
    )
    parser.add_argument("--data-dir", type=Path, help="shared data folder (default: a new one)")
    parser.add_argument("--profile", type=Path, help="folder for py-spy profiles of worker w1")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--assistant-only",
        action="store_true",
        help="only the assistant's CPU per turn, in this process (no server)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= MAX_SESSIONS or not 1 <= args.turns <= len(SCRIPTS["en"]):
        parser.error(f"--sessions 1-{MAX_SESSIONS}, --turns 1-{len(SCRIPTS['en'])}")
    plan = Plan(args.sessions, args.turns, args.shape == "paced", args.browser_events)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    counts = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-load-") as scratch:
        data_dir = args.data_dir or Path(scratch)
        if args.assistant_only:
            print(json.dumps(assistant_only(plan, data_dir.resolve()), indent=2))
            return 0
        runs = []
        for n in counts:
            reference = python_reference_s()
            runs.append(measure(n, plan, data_dir.resolve(), args.profile))
            runs[-1]["python_reference_s"] = reference
    base = runs[0]["turns_per_s"]
    for run in runs:
        run["scaling_vs_first"] = round(run["turns_per_s"] / base, 2) if base else None
    text = json.dumps(runs, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    failed = any(run["errors"] or run["cross_talk"] or run["missed_own_model"] for run in runs)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
