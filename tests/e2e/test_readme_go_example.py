"""The README's Go example builds exactly as the README says (issue 47): its commands, run in a
fresh module beside its code. Without `go mod tidy` in the README, `go build` stopped at
"missing go.sum entry"."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _go_section() -> tuple[list[str], str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\nGo (module `memgate/client`") :]
    commands = re.search(r"```bash\n(.*?)```", section, re.S)
    code = re.search(r"```go\n(.*?)```", section, re.S)
    assert commands and code
    return [c for c in commands.group(1).splitlines() if c.strip()], code.group(1)


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed")
def test_the_go_example_builds_with_the_documented_commands(tmp_path: Path) -> None:
    commands, code = _go_section()
    (tmp_path / "main.go").write_text(code)
    subprocess.run(["go", "mod", "init", "example.com/agent"], cwd=tmp_path, check=True)
    for line in commands:
        line = line.replace("<path>", str(ROOT)).replace("go run .", "go build -o agent .")
        done = subprocess.run(
            line.split(), cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{line}: {done.stderr[-2000:]}"
    assert (tmp_path / "agent").exists()
