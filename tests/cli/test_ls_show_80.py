"""`grok ls` and `grok show` at 80 columns on a fork with a long name: the └ marker and the date stay,
`show`'s header does not wrap, and the reason a run cannot be read follows the table."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.conftest import grok

TINY = ["--set", "data.p=11", "--set", "model.d_embed=8", "--set", "train.device=cpu", "--set", "train.threads=1"]
TINY += ["--set", "train.eval_every=20", "--set", "train.keep_every=20", "--steps", "60"]
NARROW = {"COLUMNS": "80"}


def test_ls_and_show_of_a_long_named_fork_fit_80_columns(tmp_path: Path) -> None:
    r = grok("run", "--preset", "skewed_mul", *TINY, "-q", "--out", "runs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    parent = next((tmp_path / "runs").iterdir())
    r = grok("fork", str(parent.relative_to(tmp_path)), "--at", "40", "--steps", "80", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "runs" / "broken").mkdir()
    (tmp_path / "runs" / "broken" / "config.json").write_text("{")
    lines = grok("ls", "runs", cwd=tmp_path, env=NARROW).stdout.splitlines()
    assert all(len(ln) <= 80 for ln in lines), "\n".join(lines)
    assert any(ln.startswith(parent.name) for ln in lines)  # the parent whole, its date first
    assert any(ln.startswith("└ …-fork40 ") for ln in lines), "\n".join(lines)  # under it, by what follows its name
    assert any(re.match(r"broken +unreadable", ln) for ln in lines) and any(ln.startswith("broken: ") for ln in lines)
    r = grok("fork", str(parent), "--at", "40", "--prepare", "--out", "forks-of-the-skewed-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fork = next((tmp_path / "forks-of-the-skewed-run").iterdir()).relative_to(tmp_path)
    show = grok("show", str(fork), cwd=tmp_path, env=NARROW).stdout.splitlines()
    assert all(len(ln) <= 80 for ln in show), "\n".join(show)
    assert show[0] == str(fork) and show[1].startswith("  preset skewed_mul  seed 0  device -")
