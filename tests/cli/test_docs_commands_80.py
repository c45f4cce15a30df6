"""Every `grok` command README.md and docs/*.md show, run at COLUMNS=80 on a tiny run and a tiny sweep: each
line it prints fits 80 columns, error lines included, and none ends in a traceback.

The commands are read from the docs (code blocks and inline code), one of each form (the subcommand and its
options), with the docs' placeholders filled in: a run, a fork and a sweep group made here from
tests/data/tiny.toml and tiny_sweep.toml, named relative to the directory the commands run in, as a user
names `runs/...`. What would train for long runs tiny instead: `grok run --preset X` at p = 11 for 40
steps, `grok sweep --preset X` with --plan. Left out: `grok tui` (the lab: tests/tui/test_fork_80.py drives
it at 80×24) and `grok bench` (minutes even with --quick; its prose goes through width.wrap). Machine
formats written to a pipe (CSV from `grok export` without -o, `--format markdown` tables) are data, wide
by design; `grok export` to a terminal is tests/cli/test_export_tty.py's.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import DATA
from tests.conftest import grok

pytestmark = pytest.mark.xdist_group("docs_commands_80")
ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
WIDTH = 80
TINY_RUN = ["--set", "data.p=11", "--set", "model.d_embed=8", "--set", "train.device=cpu", "--set", "train.threads=1"]
TINY_RUN += ["--set", "train.eval_every=20", "--set", "train.batch_size=16"]


def doc_commands() -> list[str]:
    """One command of each form the docs show: `grok SUB` and its sorted options."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        found += re.findall(r"^\s*\$? *(grok [a-z][^#\n]*)", text, re.M)
        found += [" ".join(m.split()) for m in re.findall(r"`(grok [a-z][^`]*)`", text)]
    forms: dict[str, str] = {}
    for cmd in found:
        cmd = re.sub(r" \[[^\]]*\]", "", cmd.replace("\\|", "|")).replace("...", "").rstrip(" \\")
        words = cmd.split()
        if len(words) < 2 or words[1] in ("tui", "bench"):
            continue
        forms.setdefault(" ".join([words[1], *sorted(w for w in words if w.startswith("-"))]), cmd)
    return sorted(forms.values())


RUN_WORDS = {"RUN", "RUN_DIR", "RUN_A", "PARENT", "DIR", "RUN_B", "FORK", "FORK_DIR"}
GROUP_WORDS = {"GROUP", "GROUP_DIR", "PAPER_DIR", "RUNS_DIR"}


def machine_format(args: list[str]) -> bool:
    """CSV or a markdown table on stdout: data for a file or another program, not lines for a terminal."""
    return (args[0] == "export" and "-o" not in args) or "markdown" in args or "--csv" in args[1:2]


def concrete(cmd: str, root: Path, run: Path, fork: Path, group: Path, out: Path) -> list[str]:
    """The doc's command with its placeholders filled (paths relative to `root`) and its long work made tiny."""
    words = shlex.split(cmd.replace("<", "").replace(">", ""))[1:]
    sub, args = words[0], []
    i = 1
    while i < len(words):
        w = words[i]
        if w in ("-o", "--out", "--csv") and i + 1 < len(words) and not words[i + 1].startswith("-"):
            args += [w, str(out / Path(words[i + 1].replace("{png,svg,pdf}", "png")).name)]
            i += 2
            continue
        if w in ("FORK", "FORK_DIR"):
            w = str(fork)
        elif w in RUN_WORDS or re.fullmatch(r"runs/.*-s\d+|runs/\*.*", w):
            w = str(run)
        elif w in GROUP_WORDS or re.fullmatch(r"runs/.*(sweep|paper|group)|runs/", w):
            w = str(group)
        elif w in ("STEP", "S"):
            w = "40"
        elif w == "T":
            w = "80"
        args.append(w)
        i += 1
    return [sub, *tiny(sub, args, root, fork, group, out)]


def tiny(sub: str, args: list[str], root: Path, fork: Path, group: Path, out: Path) -> list[str]:
    """A command's arguments with its long work made tiny: a short run, a sweep's plan, a prepared fork."""
    if sub == "run" and "--resume" not in args:
        args += [*TINY_RUN, "--steps", "40", "-q", "--out", str(out)]
    if sub == "run" and "--resume" in args:
        args = ["--resume", str(out / "resumed"), "-q"]
        shutil.copytree(root / fork, root / out / "resumed")
    if sub == "sweep" and "--resume" not in args and "--config" not in args:
        args = [a for a in args if a not in ("-q",)] + ["--plan"]
    if sub == "sweep" and "--config" in args:
        args += ["--out", str(out)]
    if sub == "sweep" and "--resume" in args:
        args = ["--resume", str(out / "group"), "-q"]
        shutil.copytree(root / group, root / out / "group")
    if sub == "fork":
        args += ["--out", str(out), "--prepare"]
        if "--at" not in args:
            args += ["--at", "40"]
        if "--steps" not in args:
            args += ["--steps", "80"]
    return args


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """The run, its fork and the group, relative to `root`, where the commands run."""
    root = tmp_path_factory.mktemp("made")
    r = grok("run", "-c", str(DATA / "tiny.toml"), "--set", "train.keep_every=20", "-q", "--out", "runs", cwd=root)
    assert r.returncode == 0, r.stderr
    run = next((root / "runs").iterdir()).relative_to(root)
    r = grok("fork", str(run), "--at", "40", "--steps", "80", "-q", "--out", "forks", cwd=root)
    assert r.returncode == 0, r.stderr
    fork = next((root / "forks").iterdir()).relative_to(root)
    r = grok("sweep", "--config", str(DATA / "tiny_sweep.toml"), "--seeds", "1", "-q", "--out", "sweep", cwd=root)
    assert r.returncode == 0, r.stderr
    group = next(d for d in (root / "sweep").iterdir() if (d / "group.json").is_file()).relative_to(root)
    return root, run, fork, group


COMMANDS = doc_commands()


def test_the_docs_show_every_command() -> None:
    subs = {c.split()[1] for c in COMMANDS}
    assert {"run", "sweep", "show", "ls", "plot", "report", "figure", "export", "fork", "tokens", "split"} <= subs


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_doc_command_fits_80_columns(cmd: str, made: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    root, run, fork, group = made
    out = Path(f"o{COMMANDS.index(cmd)}")  # a short name, as a user's runs/ is
    (root / out).mkdir()
    args = concrete(cmd, root, run, fork, group, out)
    r = grok(*args, cwd=root, env={"COLUMNS": str(WIDTH)}, timeout=300)
    assert "Traceback" not in r.stderr, (args, r.stderr)
    printed = r.stderr if machine_format(args) else r.stdout + r.stderr
    wide = [ln for ln in printed.splitlines() if len(ln) > WIDTH]
    assert not wide, f"{' '.join(args)}: {len(wide)} lines over {WIDTH} columns, e.g.\n" + "\n".join(wide[:3])
