"""What build a gateway runs: the package version and the source commit, for
``memgate_build_info`` and the start line. The commit comes from ``MEMGATE_COMMIT`` (set by the
container build: ``--build-arg MEMGATE_COMMIT=$(git rev-parse --short HEAD)``), else from git
when running from a checkout, else "unknown"."""

from __future__ import annotations

import functools
import os
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


@functools.cache
def package_version() -> str:
    try:
        return version("memgate")
    except PackageNotFoundError:
        return "unknown"


@functools.cache
def commit() -> str:
    given = os.environ.get("MEMGATE_COMMIT", "").strip()
    if given:
        return given[:40]
    source = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    head = done.stdout.strip()
    return head if done.returncode == 0 and head else "unknown"
