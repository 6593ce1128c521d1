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


def test_status_is_a_table_and_json(tmp_path: Path) -> None:
    import json

    from gateway.client import GatewayClient
    from tests.e2e.conftest import gateway_settings, running_gateway

    keys = {"master": "k-m", "helper": "k-h"}
    with running_gateway(gateway_settings(tmp_path, api_keys=keys)) as gw:
        with GatewayClient(gw.address, "master", api_key="k-m") as m:
            m.write("user/s", "semantic", "The user lives in Oslo", wait=True, confidence=0.9)
            m.write("user/s", "semantic", "The user lives in Bergen", wait=True, confidence=0.2)
        with GatewayClient(gw.address, "helper", api_key="k-h") as h:
            assert h.write_result("user/s", "semantic", "The user sings").proposal_id
        base = ("status", "--target", gw.address, "--api-key", "k-m")
        table = _memgate(*base)
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        assert any("health" in x and "SERVING" in x for x in lines)
        assert any("proposals pending" in x and "1 (oldest" in x for x in lines)
        assert any("quarantine queue" in x and x.rstrip(" │").endswith("1") for x in lines)
        semantic = next(x.split() for x in lines if "semantic" in x)
        assert [c for c in semantic if c.isdigit()] == ["1", "1", "0", "0", "0"]
        assert not table.stdout.lstrip().startswith("{")
        report = json.loads(_memgate(*base, "--json").stdout)
        assert report["health"] == "SERVING" and report["memories"]["semantic/quarantined"] == 1
        assert report["review"]["proposals_pending"] == 1
        assert report["review"]["quarantine_queue"] == 1
        assert set(report["breakers"].values()) == {"closed"}
        helper = _memgate("status", "--target", gw.address, "--agent", "helper", "--api-key", "k-h")
        assert helper.returncode == 0 and "master only" in helper.stdout
        as_json = _memgate(
            "status", "--json", "--target", gw.address, "--agent", "helper", "--api-key", "k-h"
        )
        assert json.loads(as_json.stdout)["stats"] == "master only"


def test_a_busy_port_is_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    """Running the gateway twice (issue 47): one clear line, exit 1, no traceback."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _memgate(
            "serve", "--port", str(port), "--data-dir", str(tmp_path), "--embedder", "hash"
        )
    assert done.returncode == 1, done.stderr
    assert f"127.0.0.1:{port} is in use (is another memgate running?)" in done.stderr
    assert "--port" in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if "memgate:" in line]) == 1


def test_a_certificate_and_key_that_do_not_match_say_so(tmp_path: Path) -> None:
    """Issue 49 N11: a TLS certificate with another certificate's key stopped the gateway with
    'Failed to bind'; now one line says to check the pair."""
    from tests.e2e.certs import Authority, Pem

    ca = Authority()
    one, other = ca.issue("127.0.0.1", server=True), ca.issue("127.0.0.1", server=True)
    cert, _ = one.write(tmp_path / "a", "server")
    _, key = Pem(other.cert, other.key).write(tmp_path / "b", "server")
    done = _memgate(
        "serve", "--port", "0", "--data-dir", str(tmp_path / "data"), "--embedder", "hash",
        "--tls-cert", cert, "--tls-key", key,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "check that --tls-cert and --tls-key are a matching" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
