"""GPU Advisor's web app: chat with a job panel, catalog, knowledge base and memory estimator.

    python app.py [--host 127.0.0.1] [--port 7860] [--mcp]

The page is built and launched by `assistant.web.blocks` (components and wiring); everything it
shows is computed by the pure modules of `assistant.web`. Basic auth comes from
GPU_ADVISOR_AUTH_USER and GPU_ADVISOR_AUTH_PASSWORD. No telemetry: Gradio analytics are off and
nothing is fetched.
"""

from __future__ import annotations

from assistant.web.blocks import (
    CONCURRENCY,
    QUEUE_SIZE,
    App,
    build_demo,
    launch_options,
    main,
    settings_from_args,
)

__all__ = ["CONCURRENCY", "QUEUE_SIZE", "App", "build_demo", "launch_options", "settings_from_args"]

if __name__ == "__main__":
    main()
