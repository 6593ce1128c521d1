"""Runs one embedded test gateway in its own process (so the fuzz run can measure the gateway's
memory apart from hypothesis'): prints its address, serves until stdin closes."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.e2e.conftest import gateway_settings, running_gateway


def main() -> None:
    data = Path(sys.argv[1])
    with running_gateway(gateway_settings(data, wait_timeout_s=20.0)) as gw:
        print(gw.address, flush=True)
        sys.stdin.read()  # the test closes stdin to stop the gateway


if __name__ == "__main__":
    main()
