"""Offline-policy turn latency: p50/p95 over scripted multi-turn conversations in six languages.

    .venv/bin/python -m benchmarks.assistant_latency [--data-dir DIR] [--rounds N] [--json]

Every turn runs the whole path the CLI and the app use: language choice, slot extraction, the
agent graph with the offline policy, the tools (estimator, ranking over the built-in catalog,
knowledge-base search with the default embedder), answer composition and the grounding check.
The knowledge base is built (or opened) and every conversation is run once before timing, so
the figures are warm. Target: p50 <= 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Each conversation: a job, amendments, a guidance or mixed question. 6 languages x 2 x 5 = 60.
CONVERSATIONS: dict[str, list[list[str]]] = {
    "en": [
        [
            "I want to fine-tune Llama 3.1 8B with QLoRA on 200M tokens",
            "and with full fine-tuning?",
            "only spot",
            "max $40/h",
            "how often should I checkpoint on spot instances?",
        ],
        [
            "Which GPU do I need to train a 70B model with LoRA?",
            "seq len 4096",
            "what if I only have 24 GB?",
            "on A100s",
            "is spot safe for my 70B QLoRA run?",
        ],
    ],
    "nl": [
        [
            "Ik wil Llama 3.1 8B fine-tunen met QLoRA op 200 miljoen tokens",
            "en met volledige fijn-afstemming?",
            "alleen spot",
            "maximaal $40 per uur",
            "hoe vaak moet ik een checkpoint maken op spot-instanties?",
        ],
        [
            "Welke GPU heb ik nodig voor een model van 70 miljard parameters met LoRA?",
            "sequentielengte 4096",
            "wat als ik maar 24 GB heb?",
            "op A100's",
            "is spot veilig voor mijn QLoRA-run van 70B?",
        ],
    ],
    "fr": [
        [
            "Je veux affiner Llama 3.1 8B avec QLoRA sur 200 millions de tokens",
            "et avec un affinage complet ?",
            "uniquement spot",
            "maximum 40 $ par heure",
            "à quelle fréquence faut-il sauvegarder un checkpoint sur des instances spot ?",
        ],
        [
            "Quel GPU faut-il pour entraîner un modèle de 70 milliards de paramètres en LoRA ?",
            "longueur de séquence 4096",
            "et si je n'ai que 24 Go ?",
            "sur des A100",
            "le spot est-il sûr pour mon entraînement QLoRA de 70B ?",
        ],
    ],
    "tr": [
        [
            "Llama 3.1 8B modelini QLoRA ile 200 milyon token üzerinde ince ayar yapmak istiyorum",
            "peki tam ince ayar ile?",
            "sadece spot",
            "saatte en fazla 40 $",
            "spot sunucularda ne sıklıkla checkpoint almalıyım?",
        ],
        [
            "70 milyar parametreli bir modeli LoRA ile eğitmek için hangi GPU gerekir?",
            "dizi uzunluğu 4096",
            "ya sadece 24 GB'ım varsa?",
            "A100'lerde",
            "70B QLoRA eğitimim için spot güvenli mi?",
        ],
    ],
    "de": [
        [
            "Ich möchte Llama 3.1 8B mit QLoRA auf 200 Millionen Tokens feinabstimmen",
            "und mit vollständigem Fine-Tuning?",
            "nur Spot",
            "höchstens 40 $ pro Stunde",
            "wie oft sollte ich auf Spot-Instanzen einen Checkpoint speichern?",
        ],
        [
            "Welche GPU brauche ich, um ein Modell mit 70 Milliarden Parametern mit LoRA zu "
            "trainieren?",
            "Sequenzlänge 4096",
            "und wenn ich nur 24 GB habe?",
            "auf A100",
            "ist Spot sicher für mein 70B-QLoRA-Training?",
        ],
    ],
    "es": [
        [
            "Quiero ajustar Llama 3.1 8B con QLoRA sobre 200 millones de tokens",
            "¿y con ajuste fino completo?",
            "solo spot",
            "máximo 40 $ por hora",
            "¿cada cuánto debo guardar un checkpoint en instancias spot?",
        ],
        [
            "¿Qué GPU necesito para entrenar un modelo de 70 mil millones de parámetros con LoRA?",
            "longitud de secuencia 4096",
            "¿y si solo tengo 24 GB?",
            "en A100",
            "¿es seguro usar spot para mi entrenamiento QLoRA de 70B?",
        ],
    ],
}
TARGET_P50_MS = 100.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _summary(ms: list[float], cpu_ms: list[float]) -> dict[str, float]:
    return {
        "turns": len(ms),
        "p50_ms": round(_percentile(ms, 0.5), 1),
        "p95_ms": round(_percentile(ms, 0.95), 1),
        "mean_ms": round(statistics.fmean(ms), 1),
        "max_ms": round(max(ms), 1),
        "cpu_p50_ms": round(_percentile(cpu_ms, 0.5), 1),
        "cpu_p95_ms": round(_percentile(cpu_ms, 0.95), 1),
    }


def run(data_dir: Path, rounds: int) -> dict[str, object]:
    """Warm up, then time every scripted turn `rounds` times; latencies in milliseconds."""
    from assistant.conversation import Assistant, Session
    from assistant.settings import Settings

    t0 = time.perf_counter()
    assistant = Assistant(Settings(data_dir=data_dir, llm=None))
    assistant.warm_up()
    warm_up_s = time.perf_counter() - t0
    for conversations in CONVERSATIONS.values():
        for script in conversations:
            session = Session()
            for message in script:
                assistant.respond(message, session).result  # noqa: B018
    wall: dict[str, list[float]] = {lang: [] for lang in CONVERSATIONS}
    cpu: dict[str, list[float]] = {lang: [] for lang in CONVERSATIONS}
    ungrounded = 0
    for _ in range(rounds):
        for lang, conversations in CONVERSATIONS.items():
            for script in conversations:
                session = Session()
                for message in script:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    result = assistant.respond(message, session).result
                    wall[lang].append((time.perf_counter() - start) * 1000)
                    cpu[lang].append((time.process_time() - start_cpu) * 1000)
                    ungrounded += not result.grounded
    return {
        "overall": _summary(
            [ms for v in wall.values() for ms in v], [ms for v in cpu.values() for ms in v]
        ),
        "per_language": {lang: _summary(wall[lang], cpu[lang]) for lang in CONVERSATIONS},
        "ungrounded_turns": ungrounded,
        "warm_up_s": round(warm_up_s, 1),
        "target_p50_ms": TARGET_P50_MS,
        "cpu_count": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the knowledge index lives (default: a temporary folder)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="timed passes over the script")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        report = run(args.data_dir or Path(tmp), args.rounds)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    overall = report["overall"]
    assert isinstance(overall, dict)
    print(
        f"offline-policy turn latency over {overall['turns']} turns (warm): "
        f"p50 {overall['p50_ms']} ms, p95 {overall['p95_ms']} ms, max {overall['max_ms']} ms; "
        f"CPU p50 {overall['cpu_p50_ms']} ms, p95 {overall['cpu_p95_ms']} ms "
        f"(target p50 <= {TARGET_P50_MS:g} ms)"
    )
    for lang, row in report["per_language"].items():  # type: ignore[attr-defined]
        print(
            f"  {lang}: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms; "
            f"CPU p50 {row['cpu_p50_ms']} ms"
        )
    print(f"ungrounded answers: {report['ungrounded_turns']}; warm-up {report['warm_up_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
