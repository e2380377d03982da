"""Web app latency: cold start to the first answer, and turns under 20 concurrent sessions.

    .venv/bin/python -m benchmarks.app_latency [--data-dir DIR] [--sessions 20] [--turns 3]

1. Cold start: `python app.py --port P` is started as a new process; the clock runs until the
   first chat turn sent with gradio_client over HTTP has come back complete. The data folder
   should hold a built knowledge index (`gpu-advisor kb build`); without one the app builds it
   first. Target: <= 10 s.
2. Concurrency: against the same server, N gradio_client sessions (threads) each run a scripted
   conversation at once; every turn is timed from submit to its final message. The offline
   policy answers. Two load shapes: *burst* (every session sends its next message as soon as the
   last answer is in: N turns always queued) and *paced* (each session pauses a seeded 2-6 s
   "reading time" before its next message, as people do). Target: p95 <= 1 s at 20 sessions.
3. Server CPU per turn (from /proc, Linux only): what a turn costs the app process, the figure
   that decides how many turns per second one Python process can serve.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIRST_QUESTION = "QLoRA fine-tune of Llama 3.1 8B on 100M tokens. Which GPU?"
# One conversation per session, cycling through the languages: a job, an amendment, another.
SCRIPTS: list[tuple[str, list[str]]] = [
    ("en", ["LoRA on Llama 3.1 8B, 200M tokens", "and with full fine-tuning?", "only spot"]),
    ("nl", ["QLoRA op een model van 7 miljard parameters, 50 miljoen tokens",
            "sequentielengte 4096", "geen spot"]),
    ("fr", ["Affinage complet d'un modèle de 8 milliards de paramètres",
            "maximum 30 $ par heure", "sans spot"]),
    ("tr", ["7 milyar parametreli modelde LoRA, 100 milyon token",
            "peki tam ince ayar ile?", "sadece spot"]),
    ("de", ["LoRA für Llama 3.1 8B mit 300 Millionen Tokens", "Sequenzlänge 4096", "nur Spot"]),
    ("es", ["Ajuste fino QLoRA de un modelo de 13B con 100 millones de tokens",
            "y con ajuste fino completo?", "solo spot"]),
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _client(url: str, deadline: float) -> Any:
    from gradio_client import Client

    while True:
        try:
            return Client(url, verbose=False)
        except Exception:
            if time.perf_counter() > deadline:
                raise
            time.sleep(0.05)


def start_app(port: int, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], float]:
    """Start `python app.py` and return the process and its start time (perf_counter)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py"), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, start


def cold_start(url: str, start: float, timeout: float, pid: int) -> dict[str, float]:
    """Seconds from process start until the server answers and until the first answer (sent
    the moment the server answers, so it waits for the app's warm-up), the first turn's own
    seconds from send to answer, and the CPU seconds the app process used by then (a
    load-independent figure)."""
    client = _client(url, start + timeout)
    ready = time.perf_counter() - start
    client.predict(FIRST_QUESTION, "en", api_name="/chat")
    answered = time.perf_counter() - start
    result = {"server_ready_s": ready, "first_answer_s": answered, "first_turn_s": answered - ready}
    cpu = process_cpu_s(pid)
    return result if cpu is None else {**result, "first_answer_cpu_s": cpu}


THINK_S = (2.0, 6.0)  # paced mode: seconds a person reads before writing again


def run_session(
    url: str, lang: str, turns: list[str], out: list[float], think: random.Random | None
) -> None:
    client = _client(url, time.perf_counter() + 60)
    for text in turns:
        if think is not None:
            time.sleep(think.uniform(*THINK_S))
        t0 = time.perf_counter()
        client.predict(text, lang, api_name="/chat")
        out.append(time.perf_counter() - t0)


def concurrent_turns(url: str, sessions: int, turns: int, paced: bool = False) -> list[float]:
    """Turn latencies (s) of `sessions` conversations run at once."""
    latencies: list[float] = []
    threads = []
    for i in range(sessions):
        lang, script = SCRIPTS[i % len(SCRIPTS)]
        think = random.Random(i) if paced else None
        args = (url, lang, script[:turns], latencies, think)
        threads.append(threading.Thread(target=run_session, args=args))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` so far (None off Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_s": round(statistics.median(latencies), 3),
        "p95_s": round(percentile(latencies, 0.95), 3),
        "max_s": round(max(latencies), 3),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="GPU_ADVISOR_DATA_DIR for the app")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=3, help="turns per session (1-3)")
    parser.add_argument("--timeout", type=float, default=600.0, help="cold start limit, s")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", ORT_DISABLE_TELEMETRY="1",
               ANONYMIZED_TELEMETRY="False")  # fmt: skip
    if args.data_dir is not None:
        env["GPU_ADVISOR_DATA_DIR"] = str(args.data_dir)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    proc, start = start_app(port, env)
    try:
        cold = cold_start(url, start, args.timeout, proc.pid)
        concurrent_turns(url, 2, 1)  # warm the shared caches once, untimed
        cpu0 = process_cpu_s(proc.pid)
        burst = concurrent_turns(url, args.sessions, args.turns)
        cpu1 = process_cpu_s(proc.pid)
        paced = concurrent_turns(url, args.sessions, args.turns, paced=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    cpu = None if cpu0 is None or cpu1 is None else round(1000 * (cpu1 - cpu0) / len(burst))
    result = {
        **{k: round(v, 2) for k, v in cold.items()},
        "sessions": args.sessions,
        "turns": len(burst),
        **{f"burst_{k}": v for k, v in summary(burst).items()},
        **{f"paced_{k}": v for k, v in summary(paced).items()},
        "server_cpu_ms_per_turn": cpu,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
