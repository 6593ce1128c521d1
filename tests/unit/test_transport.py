"""M8: transport settings — the start-up warning for an exposed plaintext listener, TLS
settings from TOML/env and their validation, unreadable certificate files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gateway.rpc.transport import exposure_warning, is_loopback, server_credentials
from gateway.settings import Settings, load_settings


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"])
def test_loopback_binds_never_warn(host: str) -> None:
    assert is_loopback(host)
    assert exposure_warning(Settings(host=host)) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "memgate.internal", ""])
def test_an_exposed_plaintext_keyless_bind_warns_loudly(host: str) -> None:
    warning = exposure_warning(Settings(host=host))
    assert warning and "PLAINTEXT WITHOUT API KEYS" in warning and "tls_cert" in warning
    keyed = exposure_warning(Settings(host=host, api_keys={"master": "k"}))
    assert keyed and "unencrypted" in keyed
    protected = Settings(host=host, tls_cert="c", tls_key="k", api_keys={"m": "k"})
    assert exposure_warning(protected) is None


def test_tls_settings_from_toml_and_env(tmp_path: Path) -> None:
    cfg = tmp_path / "memgate.toml"
    cfg.write_text(
        '[memgate]\ntls_cert = "/etc/memgate/server.crt"\ntls_key = "/etc/memgate/server.key"\n'
    )
    s = load_settings(
        cfg,
        env={"MEMGATE_TLS_CLIENT_CA": "/etc/memgate/ca.crt", "MEMGATE_TLS_AGENT_FROM_CERT": "1"},
    )
    assert (s.tls_cert, s.tls_key, s.tls_client_ca, s.tls_agent_from_cert) == (
        "/etc/memgate/server.crt",
        "/etc/memgate/server.key",
        "/etc/memgate/ca.crt",
        True,
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tls_cert": "c"}, "tls_cert and tls_key go together"),
        ({"tls_key": "k"}, "tls_cert and tls_key go together"),
        ({"tls_client_ca": "ca"}, "tls_client_ca needs tls_cert"),
        ({"tls_cert": "c", "tls_key": "k", "tls_agent_from_cert": True}, "needs tls_client_ca"),
    ],
)
def test_incomplete_tls_settings_are_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(Settings(), **changes).validate()  # type: ignore[arg-type]


def test_unreadable_or_non_pem_files_name_the_setting(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="tls_cert"):
        server_credentials(Settings(tls_cert=str(tmp_path / "missing.crt"), tls_key="k"))
    junk = tmp_path / "junk.crt"
    junk.write_text("not a certificate")
    with pytest.raises(OSError, match="not a PEM file"):
        server_credentials(Settings(tls_cert=str(junk), tls_key=str(junk)))
    assert server_credentials(Settings()) is None
