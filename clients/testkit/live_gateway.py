"""Live embedded gateways for the TypeScript and Go client suites (and any other language's).

``python clients/testkit/live_gateway.py`` starts two real gateways from this checkout
(``python -m gateway.cli serve``, embedded SQLite stores, the deterministic ``hash`` embedder, a
free 127.0.0.1 port each, a temp data dir), prints ONE JSON line saying how to reach them, and
stops them (and removes the temp dir) when its stdin closes or it gets SIGTERM/SIGINT:

* ``plain``: plaintext with API keys (``keys``: agent id -> key; ``master`` is the master) and a
  per-agent bound of ``reads_per_agent`` reads in flight, so a burst of recalls from one agent
  is answered RESOURCE_EXHAUSTED with ``retry-after-ms`` (``retry_after_ms``).
* ``mtls``: TLS whose server certificate (127.0.0.1/localhost) a throwaway CA (``ca``) signed,
  requiring a client certificate from that CA (``client_cert``/``client_key``, CN
  ``tls_agent``) and taking the agent id from it.

The certificates are made at start-up with ``cryptography`` (tests/e2e/certs.py).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.e2e.certs import Authority  # noqa: E402

KEYS = {"master": "key-master", "sub-a": "key-sub-a", "burst": "key-burst"}
READS_PER_AGENT = 1
RETRY_AFTER_MS = 50
TLS_AGENT = "tls-agent"
START_TIMEOUT_S = 60.0
COMMON = """
embedder = "hash"
recall_processes = 0
master_agent = "master"
"""


def _toml_table(values: dict[str, str]) -> str:
    return "\n".join(f'"{k}" = "{v}"' for k, v in values.items())


def _configs(work: Path) -> dict[str, Path]:
    ca = Authority()
    (work / "ca.crt").write_bytes(ca.pem)
    server_cert, server_key = ca.issue("127.0.0.1", server=True).write(work, "server")
    ca.issue(TLS_AGENT).write(work, "client")
    plain = work / "plain.toml"
    plain.write_text(
        "[memgate]"
        + COMMON
        + f"max_inflight_reads_per_agent = {READS_PER_AGENT}\n"
        + "admission_queue_reads = 0\n"
        + f"overload_retry_after_ms = {RETRY_AFTER_MS}\n"
        + "[memgate.api_keys]\n"
        + _toml_table(KEYS)
        + "\n"
    )
    mtls = work / "mtls.toml"
    mtls.write_text(
        "[memgate]"
        + COMMON
        + f'tls_cert = "{server_cert}"\ntls_key = "{server_key}"\n'
        + f'tls_client_ca = "{work / "ca.crt"}"\ntls_agent_from_cert = true\n'
    )
    return {"plain": plain, "mtls": mtls}


def _start(name: str, config: Path, work: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env = {k: v for k, v in env.items() if not k.startswith("MEMGATE_")}  # the config decides
    env["GRPC_VERBOSITY"] = "ERROR"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "--log-level", "WARNING", "serve"]
        + ["--config", str(config), "--port", "0", "--data-dir", str(work / f"data-{name}")],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
            print(f"[{name}] {line.rstrip()}", file=sys.stderr)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=START_TIMEOUT_S)
        if not line:
            raise SystemExit(f"gateway {name} exited before listening (code {proc.wait()})")
        if line.startswith("memgate: listening on "):
            return proc, line.rsplit(" ", 1)[-1].strip()


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="memgate-live-"))
    procs: list[subprocess.Popen[str]] = []
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    try:
        configs = _configs(work)
        addresses = {}
        for name, config in configs.items():
            proc, address = _start(name, config, work)
            procs.append(proc)
            addresses[name] = address
        info = {
            **addresses,
            "keys": KEYS,
            "master": "master",
            "reads_per_agent": READS_PER_AGENT,
            "retry_after_ms": RETRY_AFTER_MS,
            "ca": str(work / "ca.crt"),
            "client_cert": str(work / "client.crt"),
            "client_key": str(work / "client.key"),
            "tls_agent": TLS_AGENT,
        }
        print(json.dumps(info), flush=True)

        def until_stdin_closes() -> None:
            sys.stdin.read()
            done.set()

        threading.Thread(target=until_stdin_closes, daemon=True).start()
        done.wait()
        return 0
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
