"""Where the ledger lives: SQLite by default, Redis with the Redis journal (replicas) unless
``ledger_backend`` says otherwise; the settings that turn it and the Redis Cluster client on are
validated with messages naming what to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.settings import load_settings
from gateway.wiring import build_ledger
from stores.redis_ledger import RedisLedger
from stores.sqlite_ledger import SqliteLedger

REDIS = {"MEMGATE_REDIS_URL": "redis://127.0.0.1:1/0"}  # never contacted: nothing is started


def test_the_ledger_follows_the_journal_unless_told(tmp_path: Path) -> None:
    base = {"MEMGATE_DATA_DIR": str(tmp_path)}
    assert isinstance(build_ledger(load_settings(env=base)), SqliteLedger)  # embedded default
    assert isinstance(build_ledger(load_settings(env={**base, **REDIS})), SqliteLedger)
    replicas = {**base, **REDIS, "MEMGATE_JOURNAL_BACKEND": "redis"}
    assert load_settings(env=replicas).ledger() == "redis"
    assert isinstance(build_ledger(load_settings(env=replicas)), RedisLedger)
    own = load_settings(env={**replicas, "MEMGATE_LEDGER_BACKEND": "sqlite"})
    assert isinstance(build_ledger(own), SqliteLedger)
    shared = load_settings(env={**base, **REDIS, "MEMGATE_LEDGER_BACKEND": "redis"})
    assert shared.journal_backend == "sqlite" and isinstance(build_ledger(shared), RedisLedger)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"MEMGATE_LEDGER_BACKEND": "postgres"}, "ledger_backend must be"),
        ({"MEMGATE_LEDGER_BACKEND": "redis"}, "ledger_backend 'redis' needs redis_url"),
        ({"MEMGATE_REDIS_CLUSTER": "1"}, "redis_cluster needs redis_url"),
        (
            {**REDIS, "MEMGATE_REDIS_CLUSTER": "1", "MEMGATE_REDIS_JOURNAL_DURABILITY": "wait"},
            "'wait' is not supported with redis_cluster",
        ),
        ({"MEMGATE_AUDIT_RETENTION_DAYS": "-1"}, "audit_retention_days must be >= 0"),
    ],
)
def test_bad_ledger_settings_name_the_setting(env: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        load_settings(env=env)


async def test_the_index_flag_stays_with_the_replica(tmp_path: Path) -> None:
    """Whether this process's index was closed cleanly is not shared with other replicas."""
    from gateway.core.usecases.runtime import INDEX_CLEAN_KEY

    settings = load_settings(
        env={"MEMGATE_DATA_DIR": str(tmp_path), **REDIS, "MEMGATE_JOURNAL_BACKEND": "redis"}
    )
    ledger = build_ledger(settings)
    await ledger.put_setting(INDEX_CLEAN_KEY, {"clean": True})  # no Redis call: a local file
    assert await ledger.get_setting(INDEX_CLEAN_KEY) == {"clean": True}
    assert (tmp_path / "ledger-local.json").exists()
    other = build_ledger(load_settings(env={**REDIS, "MEMGATE_JOURNAL_BACKEND": "redis",
                                            "MEMGATE_DATA_DIR": str(tmp_path / "b")}))  # fmt: skip
    assert await other.get_setting(INDEX_CLEAN_KEY) is None
