"""`grok export RUN` with no -o to a terminal: a summary that fits it and says how to write the CSV, not
hundreds of columns of CSV; to a pipe, the CSV as before."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import DATA, grok


def _on_a_terminal(*args: str, cwd: Path) -> str:
    """`grok ARGS` with stdout on a pseudo-terminal of 80 columns; what it printed there."""
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "grok_tui", *args], stdout=child, stderr=child, cwd=cwd, env=env)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=120) == 0, out
    os.close(main)
    return out.decode().replace("\r\n", "\n")


def test_export_to_a_terminal_summarizes_and_to_a_pipe_writes_csv(tmp_path: Path) -> None:
    r = grok("run", "-c", str(DATA / "tiny.toml"), "-q", "--out", "runs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run = str(next((tmp_path / "runs").iterdir()).relative_to(tmp_path))
    shown = _on_a_terminal("export", run, cwd=tmp_path)
    lines = shown.strip().splitlines()
    assert lines[0].startswith("4 rows × ") and "columns of CSV from 1 run(s): run, preset, seed, step" in lines[0]
    assert "write them with -o FILE.csv" in shown and all(len(ln) <= 80 for ln in lines), shown
    piped = grok("export", run, cwd=tmp_path)  # stdout is not a terminal: the CSV
    assert piped.stdout.splitlines()[0].startswith("run,preset,seed,step") and len(piped.stdout.splitlines()) == 5
