"""The served set's settings: loopback by default, ports and worker count from the environment
or flags, and ports that would clash are refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from deploy.settings import ServeSettings, serve_settings_from_args

pytestmark = pytest.mark.reliability


def test_defaults_listen_on_loopback_only() -> None:
    settings = ServeSettings()
    assert (settings.host, settings.port, settings.workers) == ("127.0.0.1", 7860, 2)
    assert settings.worker_ports() == [7861, 7862]
    assert settings.chroma_address() == "http://127.0.0.1:8765"
    assert settings.public_url() == "http://127.0.0.1:7860/"


def test_environment_then_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPU_ADVISOR_WORKERS", "3")
    monkeypatch.setenv("GPU_ADVISOR_WORKER_PORT", "9001")
    monkeypatch.setenv("GPU_ADVISOR_PORT", "9000")
    assert ServeSettings().worker_ports() == [9001, 9002, 9003]
    settings = serve_settings_from_args(["--workers", "1", "--run-dir", str(tmp_path)])
    assert (settings.workers, settings.port, settings.serve_dir()) == (1, 9000, tmp_path)


def test_run_dir_defaults_to_the_data_folder(tmp_path: Path) -> None:
    assert ServeSettings(data_dir=tmp_path).serve_dir() == tmp_path / "serve"


def test_an_external_chroma_server_is_used_as_given() -> None:
    settings = ServeSettings(chroma_url="http://10.0.0.5:8000", chroma_port=7861)
    assert settings.chroma_address() == "http://10.0.0.5:8000", "its own port is then unused"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"port": 7862}, r"port 7862 is one of the worker ports 7861-7862"),
        ({"chroma_port": 7861}, r"chroma_port 7861 is one of the worker ports"),
        ({"chroma_port": 7860}, r"chroma_port and port are both 7860"),
        ({"worker_port": 65535}, r"worker ports 65535-65536 go past 65535"),
        ({"workers": 0}, r"workers\n  Input should be greater than or equal to 1"),
    ],
)
def test_clashing_ports_are_refused(fields: dict[str, int], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ServeSettings(**fields)


def test_nginx_is_found_on_path_first_then_in_sbin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import deploy.nginx

    on_path, sbin = tmp_path / "bin", tmp_path / "sbin"
    for folder in (on_path, sbin):
        folder.mkdir()
        (folder / "nginx").write_text("#!/bin/sh\n", encoding="utf-8")
        (folder / "nginx").chmod(0o755)
    monkeypatch.setattr(deploy.nginx, "SBIN_PATH", str(sbin))
    monkeypatch.setenv("PATH", str(on_path))
    assert deploy.nginx.find_nginx() == str(on_path / "nginx")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert deploy.nginx.find_nginx() == str(sbin / "nginx"), "Debian's /usr/sbin, not on PATH"
    assert deploy.nginx.find_nginx("no-such-nginx") is None


def test_a_missing_nginx_stops_the_start_before_anything_runs(tmp_path: Path) -> None:
    from deploy.procs import StartError, free_ports
    from deploy.serve import Stack

    base = free_ports(4)
    settings = ServeSettings(data_dir=tmp_path, nginx="no-such-nginx", port=base,
                             worker_port=base + 1, chroma_port=base + 3)  # fmt: skip
    stack = Stack(settings, say=lambda line: None)
    missing = r"nginx not found \('no-such-nginx', on PATH or in /usr/sbin\): install it"
    with pytest.raises(StartError, match=missing):
        stack.start()
    assert stack.children() == [], "nothing was started"


def test_a_port_in_use_is_named_with_its_part(tmp_path: Path) -> None:
    import socket

    from deploy.procs import StartError, free_ports
    from deploy.serve import Stack

    base = free_ports(4)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", base + 2))
        busy.listen()
        settings = ServeSettings(data_dir=tmp_path, port=base, worker_port=base + 1,
                                 chroma_port=base + 3)  # fmt: skip
        with pytest.raises(StartError, match=rf"port {base + 2} of the worker w2 is already in"):
            Stack(settings, say=lambda line: None).start()
