"""The `memgate` command as a user runs it."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _memgate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_serve_with_unreachable_neo4j_says_so_and_exits(tmp_path: Path) -> None:
    done = _memgate(
        "serve",
        "--port",
        "0",
        "--data-dir",
        str(tmp_path),
        "--embedder",
        "hash",
        "--neo4j-uri",
        f"bolt://127.0.0.1:{_closed_port()}",
    )
    assert done.returncode == 1
    assert "cannot start" in done.stderr and "neo4j is unavailable" in done.stderr
    assert "Traceback" not in done.stderr


def test_status_of_nothing_says_how_to_fix(tmp_path: Path) -> None:
    done = _memgate("status", "--target", f"127.0.0.1:{_closed_port()}")
    assert done.returncode == 1 and "is `memgate serve` running?" in done.stderr


def test_bad_settings_are_reported(tmp_path: Path) -> None:
    cfg = tmp_path / "memgate.toml"
    cfg.write_text("[memgate]\nhalf_life_days = 1\n")
    done = _memgate("serve", "--config", str(cfg), "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "half_life_days must be >= 7" in done.stderr
    assert "Traceback" not in done.stderr
