"""M8: TLS and mTLS on a real gateway (127.0.0.1), with certificates made at test time; the
client certificate's identity as the agent id; `memgate status` with a key over TLS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway import client as gc
from gateway.client import GatewayClient
from tests.e2e.certs import Authority, Pem
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway
from tests.tags import fresh_tag


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pki")
    ca, rogue = Authority("memgate test CA"), Authority("rogue CA")
    (root / "ca.crt").write_bytes(ca.pem)
    (root / "rogue.crt").write_bytes(rogue.pem)
    server_cert, server_key = ca.issue("memgate-server", server=True).write(root, "server")
    return {
        "dir": root,
        "ca": ca,
        "rogue": rogue,
        "server": (server_cert, server_key),
        "master": ca.issue("master"),
        "researcher": ca.issue("researcher-cn", sans=("researcher",)),
        "rogue_master": rogue.issue("master"),
    }


def _client(gw: RunningGateway, agent: str, ca: bytes | None, cert: Pem | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    return GatewayClient(
        gw.address,
        agent,
        retries=0,
        timeout=10,
        root_certificates=ca,
        private_key=cert.key if cert else None,
        certificate_chain=cert.cert if cert else None,
        **kw,
    )


def test_tls_serves_only_clients_that_trust_its_ca(tmp_path: Path, pki: dict[str, Any]) -> None:
    cert, key = pki["server"]
    with running_gateway(gateway_settings(tmp_path, tls_cert=cert, tls_key=key)) as gw:
        with _client(gw, "master", pki["ca"].pem) as ok:
            assert ok.stats().shards == 8 and ok.health() == "SERVING"
        with _client(gw, "master", pki["rogue"].pem) as wrong, pytest.raises(gc.Unavailable):
            wrong.stats()  # the server's certificate is not signed by the CA the client trusts
        plain = GatewayClient(gw.address, "master", retries=0, timeout=10)
        with plain, pytest.raises(gc.Unavailable):
            plain.stats()  # plaintext never reaches the API of a TLS server


def test_mtls_requires_a_client_certificate_from_the_client_ca(
    tmp_path: Path, pki: dict[str, Any]
) -> None:
    cert, key = pki["server"]
    settings = gateway_settings(
        tmp_path, tls_cert=cert, tls_key=key, tls_client_ca=str(pki["dir"] / "ca.crt")
    )
    with running_gateway(settings) as gw:
        ca = pki["ca"].pem
        with _client(gw, "master", ca, pki["master"]) as ok:
            assert ok.stats().shards == 8
        with _client(gw, "master", ca) as anonymous, pytest.raises(gc.Unavailable):
            anonymous.stats()  # no client certificate
        with (
            _client(gw, "master", ca, pki["rogue_master"]) as forged,
            pytest.raises(gc.Unavailable),
        ):
            forged.stats()  # a certificate from another CA


def test_the_client_certificate_names_the_agent(tmp_path: Path, pki: dict[str, Any]) -> None:
    cert, key = pki["server"]
    settings = gateway_settings(
        tmp_path,
        tls_cert=cert,
        tls_key=key,
        tls_client_ca=str(pki["dir"] / "ca.crt"),
        tls_agent_from_cert=True,
        api_keys={"master": "m-key", "researcher": "r-key", "researcher-cn": "r-key"},
    )
    ca = pki["ca"].pem
    ns = f"user/u-{fresh_tag(8)}"
    with running_gateway(settings) as gw:
        with _client(gw, "", ca, pki["master"], api_key="m-key") as master:
            mid = master.write(ns, "semantic", "likes tea", wait=True)  # the master: direct
            assert mid and master.proposals() == []
        # no header: the certificate's CN is the agent; a SAN may be named instead
        with _client(gw, "", ca, pki["researcher"], api_key="r-key") as r:
            assert r.write(ns, "semantic", "likes coffee") == ""  # a sub-agent: a proposal
            with pytest.raises(gc.PermissionDenied):
                r.forget_namespace(ns)
        with _client(gw, "researcher", ca, pki["researcher"], api_key="r-key") as by_san:
            assert by_san.write("agent/researcher", "semantic", "mine", wait=True)
        # a header that disagrees with the certificate is refused, whatever the key
        with _client(gw, "master", ca, pki["researcher"], api_key="m-key") as liar:
            with pytest.raises(gc.Unauthenticated, match="does not match the client certificate"):
                liar.stats()
            with pytest.raises(gc.Unauthenticated):
                liar.forget_namespace(ns)
        with _client(gw, "", ca, pki["master"], api_key="m-key") as master:
            assert master.get(mid).content == "likes tea"
            proposers = {p.proposer for p in master.proposals()}
            assert proposers == {"researcher-cn"}


def _status(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "status", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_status_sends_a_key_over_tls(tmp_path: Path, pki: dict[str, Any]) -> None:
    cert, key = pki["server"]
    settings = gateway_settings(tmp_path, tls_cert=cert, tls_key=key, api_keys={"ops": "k-1"})
    with running_gateway(settings) as gw:
        ca = str(pki["dir"] / "ca.crt")
        ok = _status(
            "--target", gw.address, "--agent", "ops", "--api-key", "k-1", "--tls-ca", ca, "--json"
        )
        assert ok.returncode == 0, ok.stderr
        assert json.loads(ok.stdout)["health"] == "SERVING"
        by_env = _status(
            "--target", gw.address, "--agent", "ops", "--tls-ca", ca, env={"MEMGATE_API_KEY": "k-1"}
        )
        assert by_env.returncode == 0, by_env.stderr
        no_key = _status("--target", gw.address, "--agent", "ops", "--tls-ca", ca)
        assert no_key.returncode == 1 and "credentials refused" in no_key.stderr
        assert "--api-key" in no_key.stderr
        no_ca = _status("--target", gw.address, "--agent", "ops", "--api-key", "k-1")
        assert no_ca.returncode == 1 and "--tls-ca" in no_ca.stderr


def test_status_sends_a_key_in_plaintext(tmp_path: Path) -> None:
    with running_gateway(gateway_settings(tmp_path, api_keys={"master": "s3cret"})) as gw:
        ok = _status("--target", gw.address, "--api-key", "s3cret", "--json")
        assert ok.returncode == 0, ok.stderr
        assert json.loads(ok.stdout)["target"] == gw.address


def _memgate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMGATE_")},
            **(env or {}),
        },
    )


def test_every_tool_reaches_a_tls_gateway(tmp_path: Path, pki: dict[str, Any]) -> None:
    """The operators' commands, replay, the console and MCP take --tls-ca (or MEMGATE_TLS_CA),
    and mTLS with --tls-cert/--tls-key; without the CA they say to pass it."""
    from gateway.console.server import Console
    from gateway.integrations.mcp import Bridge

    cert, key = pki["server"]
    settings = gateway_settings(tmp_path, tls_cert=cert, tls_key=key, api_keys={"master": "k-m"})
    ca = str(pki["dir"] / "ca.crt")
    with running_gateway(settings) as gw:
        base = ("--target", gw.address, "--api-key", "k-m")
        listed = _memgate("proposals", "list", "--json", *base, "--tls-ca", ca)
        assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
        by_env = _memgate("proposals", "list", "--json", *base, env={"MEMGATE_TLS_CA": ca})
        assert by_env.returncode == 0, by_env.stderr
        plain = _memgate("proposals", "list", *base)
        assert plain.returncode == 1 and "is `memgate serve` running" in plain.stderr
        missing = _memgate("proposals", "list", *base, "--tls-ca", str(tmp_path / "nope.crt"))
        assert missing.returncode == 2 and "--tls-ca" in missing.stderr
        chat = tmp_path / "chat.json"
        chat.write_text(
            json.dumps(
                {
                    "namespace": "user/tls",
                    "sessions": [
                        {
                            "id": "s1",
                            "turns": [
                                {
                                    "role": "user",
                                    "content": "I live in Lisbon",
                                    "at": "2024-05-01T10:00:00Z",
                                }
                            ],
                        }
                    ],
                }
            )
        )
        replayed = _memgate("replay", str(chat), "--json", "--quiet", *base, "--tls-ca", ca)
        assert replayed.returncode == 0 and json.loads(replayed.stdout)["appended"] == 1
        exported = _memgate("export", "user/tls", "--quiet", *base, "--tls-ca", ca)
        assert exported.returncode == 0 and "Lisbon" in exported.stdout, exported.stderr
        # the console logs in over TLS; MCP's bridge carries the same arguments
        console = Console(gw.address, "master", tls={"root_certificates": pki["ca"].pem})
        assert console.login("k-m") is not None and console.login("wrong") is None
        assert Bridge(gw.address, "master", "k-m", {"root_certificates": b"x"}).tls == {
            "root_certificates": b"x"
        }


def test_every_tool_presents_a_client_certificate_for_mtls(
    tmp_path: Path, pki: dict[str, Any]
) -> None:
    cert, key = pki["server"]
    ca = str(pki["dir"] / "ca.crt")
    settings = gateway_settings(
        tmp_path, tls_cert=cert, tls_key=key, tls_client_ca=ca, api_keys={"master": "k-m"}
    )
    client_cert, client_key = pki["master"].write(tmp_path / "client", "master")
    with running_gateway(settings) as gw:
        base = ("--target", gw.address, "--api-key", "k-m", "--tls-ca", ca)
        mtls = ("--tls-cert", client_cert, "--tls-key", client_key)
        for command in (("proposals", "list", "--json"), ("export", "user/none", "--quiet")):
            ok = _memgate(*command, *base, *mtls)
            assert ok.returncode == 0, (command, ok.stderr)
            refused = _memgate(*command, *base)  # no client certificate
            assert refused.returncode == 1, (command, refused.stderr)
        by_env = _memgate(
            "proposals",
            "list",
            *base,
            env={"MEMGATE_CLIENT_CERT": client_cert, "MEMGATE_CLIENT_KEY": client_key},
        )
        assert by_env.returncode == 0, by_env.stderr
        status = _memgate("status", "--json", *base, *mtls)
        assert status.returncode == 0 and json.loads(status.stdout)["health"] == "SERVING"


def test_mtls_without_keys_takes_the_agent_from_the_certificate(
    tmp_path: Path, pki: dict[str, Any]
) -> None:
    """Issue 33 L7: mTLS, no API keys, no tls_agent_from_cert: a header alone never names the
    agent — a researcher certificate with ``x-agent-id: master`` is refused, not the master."""
    cert, key = pki["server"]
    settings = gateway_settings(
        tmp_path, tls_cert=cert, tls_key=key, tls_client_ca=str(pki["dir"] / "ca.crt")
    )
    assert settings.agent_from_certificate
    ca = pki["ca"].pem
    with running_gateway(settings) as gw:
        liar = _client(gw, "master", ca, pki["researcher"])
        with liar, pytest.raises(gc.Unauthenticated, match="does not match the client certificate"):
            liar.proposals()
        with _client(gw, "", ca, pki["researcher"]) as r:
            with pytest.raises(gc.PermissionDenied):
                r.proposals()  # the certificate's CN: a sub-agent
            assert r.write("user/l7", "semantic", "likes coffee") == ""  # a proposal
        with _client(gw, "master", ca, pki["master"]) as master:
            assert [p.proposer for p in master.proposals()] == ["researcher-cn"]
