"""The container recipe cannot be built here (no container engine on the development machine),
so these checks keep deploy/Dockerfile and deploy/compose.yaml in step with the code: the files
they copy and the modules they run exist, the proxy lists the worker services, only loopback is
published, and the image sets the same offline switches as the launcher."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy.nginx import main as nginx_main
from deploy.serve import OFFLINE_ENV

pytestmark = pytest.mark.reliability

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
COMPOSE = ROOT / "deploy" / "compose.yaml"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return dict(compose["services"])


def _command(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return shlex.split(command[-1]) if command[:2] == ["sh", "-c"] else list(command)


def test_every_service_runs_the_one_image(services: dict[str, Any]) -> None:
    assert set(services) == {"chroma", "prepare", "worker1", "worker2", "proxy"}
    for name, service in services.items():
        assert service["image"] == "gpu-advisor", name
        assert (COMPOSE.parent / service["build"]["context"] / service["build"]["dockerfile"]) \
            .resolve() == DOCKERFILE  # fmt: skip


def test_only_the_proxy_is_published_and_on_loopback(services: dict[str, Any]) -> None:
    published = {name: s["ports"] for name, s in services.items() if "ports" in s}
    assert published == {"proxy": ["127.0.0.1:7860:8080"]}


def test_the_proxy_lists_every_worker_service(services: dict[str, Any]) -> None:
    words = _command(services["proxy"])
    listed = [words[i + 1] for i, word in enumerate(words) if word == "--worker"]
    workers = {
        f"{name}:{_command(s)[_command(s).index('--port') + 1]}"
        for name, s in services.items()
        if name.startswith("worker")
    }
    assert set(listed) == workers
    assert set(services["proxy"]["depends_on"]) == {n for n in services if n.startswith("worker")}


def test_the_proxy_command_renders_a_configuration(tmp_path: Path, capsys: Any) -> None:
    """The proxy's own command, with names that resolve here."""
    code = nginx_main(["--resolve", "--listen", "0.0.0.0:8080", "--worker", "localhost:7860",
                       "--worker", "localhost:7861", "--run-dir", str(tmp_path)])  # fmt: skip
    conf = capsys.readouterr().out
    assert code == 0 and "listen 0.0.0.0:8080;" in conf
    assert "127.0.0.1:7860 w1;" in conf and "127.0.0.1:7861 w2;" in conf, "addresses, not names"


def test_what_the_recipe_runs_exists(services: dict[str, Any]) -> None:
    for name, service in services.items():
        words = _command(service)
        for module in (words[i + 1] for i, w in enumerate(words) if w == "-m"):
            assert (ROOT / f"{module.replace('.', '/')}.py").exists(), f"{name}: {module}"
        for script in (w for w in words if w.endswith(".py")):
            assert (ROOT / script).exists(), f"{name}: {script}"


def test_the_image_copies_what_exists_and_runs_offline() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    for source in re.findall(r"^COPY (.+) \S+$", text, flags=re.MULTILINE):
        for path in source.split():
            assert (ROOT / path).exists(), f"COPY {path}"
    env = dict(re.findall(r"^\s+([A-Z_]+)=(\S+?)\s*\\?$", text, flags=re.MULTILINE))
    missing = {k: v for k, v in OFFLINE_ENV.items() if env.get(k) != v}
    assert missing == {}, f"the image must set the launcher's offline switches: {missing}"
    assert "EXPOSE 8080" in text and '"--port", "8080"' in text
    assert "USER advisor" in text, "the image does not run as root"
