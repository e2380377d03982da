"""The settings of a served set: the app's `Settings` (data folder, host, public port, Chroma
server...) plus how many workers, their ports, the Chroma server's port and the proxy.

Every field is also an environment variable, e.g. GPU_ADVISOR_WORKERS=2,
GPU_ADVISOR_WORKER_PORT=7861; `host` and `port` are where the proxy listens (the address people
open), 127.0.0.1:7860 by default. Workers and the Chroma server always listen on 127.0.0.1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field, model_validator

from assistant.settings import Settings

__all__ = ["LOOPBACK", "ServeSettings", "serve_settings_from_args"]

LOOPBACK = "127.0.0.1"


class ServeSettings(Settings):
    """Settings of `python -m deploy.serve`: the app's settings and the set's own."""

    workers: int = Field(default=2, ge=1, le=32, description="app worker processes")
    worker_port: int = Field(
        default=7861, ge=1, le=65535, description="port of the first worker; the others follow"
    )
    chroma_port: int = Field(
        default=8765,
        ge=1,
        le=65535,
        description="port of the Chroma server the set starts (unless chroma_url names one)",
    )
    nginx: str = Field(default="nginx", description="the nginx program (a name on PATH or a path)")
    run_dir: Path | None = Field(
        default=None,
        description="configuration, logs and temporary files of the set; None = <data_dir>/serve",
    )
    start_timeout_s: float = Field(
        default=180.0, gt=0, description="how long each part may take to start answering"
    )

    @model_validator(mode="after")
    def _ports_apart(self) -> ServeSettings:
        """The proxy, the workers and the Chroma server each need a port of their own."""
        last = self.worker_port + self.workers - 1
        if last > 65535:
            raise ValueError(f"worker ports {self.worker_port}-{last} go past 65535")
        taken = {"port": self.port}
        if self.chroma_url is None:
            taken["chroma_port"] = self.chroma_port
        for name, value in taken.items():
            if self.worker_port <= value <= last:
                raise ValueError(
                    f"{name} {value} is one of the worker ports {self.worker_port}-{last}"
                )
        if self.chroma_url is None and self.chroma_port == self.port:
            raise ValueError(f"chroma_port and port are both {self.port}")
        return self

    def worker_ports(self) -> list[int]:
        """The port of each worker, first to last."""
        return [self.worker_port + i for i in range(self.workers)]

    def serve_dir(self) -> Path:
        """Where the set keeps its configuration, logs and temporary files."""
        return self.run_dir if self.run_dir is not None else self.data_dir / "serve"

    def chroma_address(self) -> str:
        """The Chroma server the workers use: `chroma_url`, else the one the set starts."""
        return self.chroma_url or f"http://{LOOPBACK}:{self.chroma_port}"

    def public_url(self) -> str:
        """The address people open (through the proxy)."""
        host = LOOPBACK if self.host in ("0.0.0.0", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"


def serve_settings_from_args(argv: Sequence[str] | None = None) -> ServeSettings:
    """ServeSettings from the environment, with the command-line flags on top."""
    parser = argparse.ArgumentParser(
        prog="python -m deploy.serve",
        description="GPU Advisor as N workers behind nginx with one Chroma server; Ctrl-C stops"
        " all of it. Every flag is also an environment variable (GPU_ADVISOR_<NAME>).",
    )
    parser.add_argument("--host", help="interface the proxy listens on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port the proxy listens on (default 7860)")
    parser.add_argument("--workers", type=int, help="app worker processes (default 2)")
    parser.add_argument("--worker-port", type=int, help="first worker's port (default 7861)")
    parser.add_argument("--chroma-port", type=int, help="Chroma server's port (default 8765)")
    parser.add_argument("--data-dir", type=Path, help="the shared data folder")
    parser.add_argument("--run-dir", type=Path, help="logs and configuration (<data-dir>/serve)")
    parser.add_argument("--nginx", help="the nginx program (default: nginx on PATH)")
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return ServeSettings(**overrides)
