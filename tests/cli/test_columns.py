"""Every command's default output fits an 80-column terminal (a pipe: no COLUMNS, no tty), on a small
run and a small sweep group, with paths as a user in the project directory types them (runs/NAME);
`--wide` still gives the whole line, and no probe that did not run prints `nan`."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import DATA, grok

WIDTH = 80


# typer's help is laid out by rich, which asks the terminal behind the real file descriptors: a real
# process on a pipe. Every other command sizes itself from COLUMNS or stdout (grok_tui/commands/width.py),
# which the in-process call sets as a pipe does; `ls` runs as a real process too, as the user's check.
PROCESS = {"help", "run --help", "ls"}


def grok80(*args: str, cwd: Path, process: bool = False) -> subprocess.CompletedProcess[str]:
    """`grok ARGS` with no COLUMNS and stdout not a terminal: its width is the fallback's."""
    return grok(*args, cwd=cwd, timeout=300, process=process, env={"COLUMNS": None, "LINES": None})


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project directory with one finished run (progress, Hessian and rank probes on, so some rows have
    no probe values) and one finished sweep group."""
    root = tmp_path_factory.mktemp("lab")
    run = grok80(
        "run", "--config", str(DATA / "tiny.toml"), "--out", "runs", "--set", "data.op=mul",
        "--set", "probe.progress_every=20", "--set", "probe.hessian_every=40", "--set", "probe.rank_every=40",
        cwd=root,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (root / "run.out").write_text(run.stdout + run.stderr)
    sweep = grok80(
        "sweep", "--config", str(DATA / "tiny_sweep.toml"), "--seeds", "1", "--steps", "20", "--workers", "1",
        "--out", "runs", cwd=root,
    )  # fmt: skip
    assert sweep.returncode == 0, sweep.stderr
    (root / "sweep.out").write_text(sweep.stdout + sweep.stderr)
    return root


def _run(lab: Path) -> str:
    return next(f"runs/{d.name}" for d in (lab / "runs").iterdir() if (d / "metrics.csv").exists())


def _group(lab: Path) -> str:
    return next(f"runs/{d.name}" for d in (lab / "runs").iterdir() if (d / "group.json").exists())


COMMANDS = {
    "presets": lambda lab: ["presets"],
    "presets NAME": lambda lab: ["presets", "skewed_mul"],
    "ls": lambda lab: ["ls", "runs"],
    "ls GROUP": lambda lab: ["ls", _group(lab)],
    "show": lambda lab: ["show", _run(lab)],
    "plot": lambda lab: ["plot", _run(lab)],
    "tokens": lambda lab: ["tokens", _run(lab)],
    "split": lambda lab: ["split", "--preset", "skewed_mul"],
    "split starved": lambda lab: ["split", "--preset", "decouple"],
    "circuit": lambda lab: ["circuit", _run(lab)],
    "fork": lambda lab: ["fork", _run(lab), "--steps", "80", "-i", "rescale:3=x2", "--out", "forks"],
    "report": lambda lab: ["report", _group(lab)],
    "export -o": lambda lab: ["export", _run(lab), "-o", "one.csv"],
    "sweep --plan": lambda lab: ["sweep", "--preset", "paper", "--plan"],
    "doctor": lambda lab: ["doctor", "--device", "cpu", "--seconds", "0.2", "--out", "runs"],
    "help": lambda lab: ["--help"],
    "run --help": lambda lab: ["run", "--help"],
}


def assert_fits(text: str, what: str) -> None:
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, f"{what}: {len(wide)} lines over {WIDTH} columns, e.g. {wide[0]!r}"


@pytest.mark.parametrize("name", COMMANDS)
def test_default_output_fits_80_columns(lab: Path, name: str) -> None:
    r = grok80(*COMMANDS[name](lab), cwd=lab, process=name in PROCESS)
    assert r.returncode == 0, r.stderr
    assert (r.stdout + r.stderr).strip(), "no output"
    assert_fits(r.stdout, name)
    assert_fits(r.stderr, f"{name} (stderr)")
    assert "nan" not in r.stdout.replace("nanGPT", "").lower().split(), r.stdout


def test_run_and_sweep_output_fits_80_columns(lab: Path) -> None:
    assert_fits((lab / "run.out").read_text(), "grok run")
    assert_fits((lab / "sweep.out").read_text(), "grok sweep")


def test_show_marks_a_probe_that_did_not_run_with_a_dash(lab: Path) -> None:
    out = grok80("show", _run(lab), cwd=lab).stdout
    assert "nan" not in out and "–" in out  # the Hessian ran at steps 0 and 40 only
    wide = grok80("show", _run(lab), "--wide", cwd=lab).stdout
    header = next(line for line in wide.splitlines() if line.split()[:1] == ["step"])
    assert "hess_E" in header and "rank_EW" in header  # --wide: every column on one line


def test_wide_gives_whole_lines(lab: Path) -> None:
    lines = grok80("presets", "--wide", cwd=lab).stdout.splitlines()
    assert any(len(line) > WIDTH for line in lines)  # the paper's presets carry long wall-time notes
    assert not any(line.endswith("…") for line in lines)
    ls = grok80("ls", "runs", "--wide", cwd=lab).stdout
    assert "PRESET" in ls.splitlines()[0]


def test_a_folded_preset_reads_back_the_same(lab: Path) -> None:
    """`grok presets NAME` folds a long description into a TOML multi-line string: same value."""
    from engine.config.presets import load_preset

    for name in ("skewed_mul", "decouple", "fig6_optimizers"):
        folded = tomllib.loads(grok80("presets", name, cwd=lab).stdout)
        assert folded["description"] == load_preset(name).description
