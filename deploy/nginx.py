"""The proxy's nginx configuration, rendered from the set's addresses.

Gradio keeps a session's state (and its queue) in the worker process that served it, so every
request of one browser tab must reach the same worker. Open-source nginx has no `sticky`
directive; this configuration does it with a cookie it sets itself:

- A page opened without a (valid) `gpu_advisor_worker` cookie goes to the worker with the fewest
  open connections (each open page holds one heartbeat stream), and the answer sets the cookie to
  that worker's name (w1, w2, ...). Every later request carrying the cookie goes to that worker.
- A request without the cookie that is not a page load (an API client, curl) is routed by a
  consistent hash of the client address, so its queue join and its event stream meet.
- When a pinned worker does not answer, the others stand in (`backup`); the session then starts
  afresh there (the browser's saved conversation is restored on the next page load).
- Answers stream as server-sent events: proxy buffering is off, and stream timeouts are long.

    python -m deploy.nginx --resolve --listen 0.0.0.0:8080 --worker worker1:7860 \\
        --worker worker2:7860 --run-dir /tmp/nginx > /tmp/nginx/nginx.conf   (compose's proxy)
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COOKIE", "NGINX_HINT", "ProxyPlan", "find_nginx", "prepare_dirs", "render"]

COOKIE = "gpu_advisor_worker"
# Debian puts nginx in /usr/sbin, which is not on a normal user's PATH
SBIN_PATH = "/usr/local/sbin:/usr/sbin:/sbin"
NGINX_HINT = "Debian/Ubuntu: apt-get install nginx (.ci/run installs it)"
MAX_BODY = "6m"  # Gradio's own upload cap is 5 MB (assistant.web.blocks.common.UPLOAD_LIMIT)
STREAM_TIMEOUT = "600s"  # heartbeat and event streams stay open while a page is open
# Idle connections to a worker are dropped before uvicorn drops them (its keep-alive timeout is
# 5 s): otherwise nginx may send a request on a connection the worker is closing, and the
# browser gets a 502 (seen once in 500 paced turns).
UPSTREAM_IDLE_S = 3
LOG_FORMAT = (
    '\'$time_iso8601 $remote_addr "$request" $status $body_bytes_sent $request_time '
    f"upstream=$upstream_addr route=$cookie_{COOKIE}'"
)


def find_nginx(program: str = "nginx") -> str | None:
    """The nginx program's path: `program` as given (a path or a name on PATH), else in sbin."""
    return shutil.which(program) or shutil.which(program, path=SBIN_PATH)


@dataclass(frozen=True)
class ProxyPlan:
    """What the configuration needs: where to listen, the workers (host:port, in order) and the
    folder for the pid file, logs and nginx's temporary files."""

    listen: str
    workers: Sequence[str]
    run_dir: Path

    def names(self) -> list[str]:
        """The cookie value naming each worker: w1, w2, ..."""
        return [f"w{i}" for i in range(1, len(self.workers) + 1)]


def _upstream(name: str, servers: Sequence[str], policy: str = "") -> list[str]:
    lines = [f"    upstream {name} {{"]
    if policy:
        lines.append(f"        {policy};")
    lines += [f"        server {server};" for server in servers]
    lines += ["        keepalive 16;", f"        keepalive_timeout {UPSTREAM_IDLE_S}s;", "    }"]
    return lines


def _upstreams(plan: ProxyPlan) -> list[str]:
    """One group per worker (the others as backups), one for new pages, one for the rest."""
    lines: list[str] = []
    for name, worker in zip(plan.names(), plan.workers, strict=True):
        others = [f"{w} backup" for w in plan.workers if w != worker]
        lines += _upstream(f"gpu_advisor_{name}", [worker, *others])
    lines += _upstream("gpu_advisor_new", plan.workers, "least_conn")
    lines += _upstream("gpu_advisor_hash", plan.workers, "hash $remote_addr consistent")
    return lines


def _maps(plan: ProxyPlan) -> list[str]:
    """Cookie -> worker group; upstream address -> worker name -> the cookie to set."""
    pinned = [f"        {n} gpu_advisor_{n};" for n in plan.names()]
    served = [f"        {w} {n};" for n, w in zip(plan.names(), plan.workers, strict=True)]
    return [
        f"    map $cookie_{COOKIE} $gpu_advisor_pinned {{",
        *pinned,
        '        default "";',
        "    }",
        "    map $gpu_advisor_pinned $gpu_advisor_page {",
        '        "" gpu_advisor_new;',
        "        default $gpu_advisor_pinned;",
        "    }",
        "    map $gpu_advisor_pinned $gpu_advisor_other {",
        '        "" gpu_advisor_hash;',
        "        default $gpu_advisor_pinned;",
        "    }",
        "    map $upstream_addr $gpu_advisor_served_by {",
        *served,
        '        default "";',
        "    }",
        '    map "$gpu_advisor_pinned|$gpu_advisor_served_by" $gpu_advisor_set_cookie {',
        f'        "~^\\|(?<worker>w[0-9]+)$" "{COOKIE}=$worker; Path=/; HttpOnly; SameSite=Lax";',
        '        default "";',
        "    }",
        "    map $http_upgrade $gpu_advisor_connection {",
        "        default upgrade;",
        '        "" "";',
        "    }",
    ]


def _server(plan: ProxyPlan) -> list[str]:
    return [
        "    server {",
        f"        listen {plan.listen};",
        "        proxy_http_version 1.1;",
        "        proxy_set_header Host $http_host;",
        "        proxy_set_header X-Forwarded-Host $http_host;",
        "        proxy_set_header X-Forwarded-Proto $scheme;",
        "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "        proxy_set_header Upgrade $http_upgrade;",
        "        proxy_set_header Connection $gpu_advisor_connection;",
        "        proxy_buffering off;  # answers stream as server-sent events",
        "        proxy_cache off;",
        f"        proxy_read_timeout {STREAM_TIMEOUT};",
        f"        proxy_send_timeout {STREAM_TIMEOUT};",
        "        add_header Set-Cookie $gpu_advisor_set_cookie always;",
        "        location = / {",
        "            proxy_pass http://$gpu_advisor_page;",
        "        }",
        "        location / {",
        "            proxy_pass http://$gpu_advisor_other;",
        "        }",
        "    }",
    ]


def render(plan: ProxyPlan) -> str:
    """The whole nginx.conf (run in the foreground with `nginx -c FILE`)."""
    run = plan.run_dir
    temp = [
        f"    {kind}_temp_path {run}/nginx-tmp/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    ]
    lines = [
        "# GPU Advisor's proxy, rendered by deploy/nginx.py: edit the settings, not this file.",
        "worker_processes 1;",
        "daemon off;",
        f"pid {run}/nginx.pid;",
        f"error_log {run}/logs/nginx-error.log warn;",
        "events {",
        "    worker_connections 1024;",
        "}",
        "http {",
        "    default_type application/octet-stream;",
        "    server_tokens off;",
        f"    client_max_body_size {MAX_BODY};",
        f"    client_body_buffer_size {MAX_BODY};  # bodies stay in memory: no temp files",
        *temp,
        f"    log_format gpu_advisor {LOG_FORMAT};",
        f"    access_log {run}/logs/nginx-access.log gpu_advisor;",
        *_upstreams(plan),
        *_maps(plan),
        *_server(plan),
        "}",
    ]
    return "\n".join(lines) + "\n"


def prepare_dirs(run_dir: Path) -> None:
    """The folders the configuration names (logs, temporary files)."""
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / "nginx-tmp").mkdir(parents=True, exist_ok=True)


def resolved(worker: str) -> str:
    """`host:port` with the host's IPv4 address: the cookie is set from `$upstream_addr`, which
    is always an address (nginx itself resolves a name once, at start, too)."""
    host, _, port = worker.rpartition(":")
    return f"{socket.gethostbyname(host)}:{port}"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the configuration for explicit addresses (the container recipe's proxy)."""
    parser = argparse.ArgumentParser(prog="python -m deploy.nginx", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:7860", help="address:port to listen on")
    parser.add_argument("--worker", action="append", required=True, help="a worker's host:port")
    parser.add_argument("--run-dir", type=Path, required=True, help="pid, logs, temp files")
    parser.add_argument("--resolve", action="store_true", help="write workers' names as addresses")
    args = parser.parse_args(argv)
    workers = [resolved(w) for w in args.worker] if args.resolve else args.worker
    prepare_dirs(args.run_dir)
    sys.stdout.write(render(ProxyPlan(args.listen, workers, args.run_dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
