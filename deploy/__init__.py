"""Running GPU Advisor as several processes: N app workers behind nginx, one Chroma server and
one data folder.

    python -m deploy.serve [--workers 2] [--port 7860]      (or `make serve`)

- `settings`: `ServeSettings`, the app's `Settings` plus the set's ports and worker count.
- `nginx`: the proxy's configuration (sticky sessions, SSE unbuffered), rendered from settings.
- `procs`: starting, watching and stopping child processes, so that none outlives the set.
- `prepare`: the one-shot step before the workers start (knowledge index, browser key).
- `serve`: the launcher that starts the whole set, waits until it answers and stops it.
- `probe`: a small client of Gradio's queue protocol, as a browser speaks it (tests, benchmark).

`Dockerfile` and `compose.yaml` beside these modules are the container recipe of the same set.
"""
