"""S1–S4: a shared run directory or config file can neither run code nor reach a spreadsheet or a terminal raw."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import shlex
from pathlib import Path

import pytest
import torch

from engine.config import ConfigError
from engine.train.run import Run
from tests.conftest import grok, tiny_config
from tests.faults.conftest import TINY_TOML, finished_run, interrupted_run, one_error

ROOT = Path(__file__).resolve().parents[2]


class _Payload:
    """Unpickles by running a shell command: what a crafted checkpoint.pt would carry."""

    def __init__(self, marker: Path) -> None:
        self.cmd = f"touch {shlex.quote(str(marker))}"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (self.cmd,))


def _craft(path: Path, marker: Path, zipped: bool) -> None:
    state = {"step": 0, "model": {}, "opt": {}, "rng": _Payload(marker)}
    if zipped:
        torch.save(state, path)  # torch's own zip format, as a real checkpoint
    else:
        path.write_bytes(pickle.dumps(state))  # a bare pickle


@pytest.mark.parametrize("zipped", [True, False], ids=["torch-zip", "bare-pickle"])
def test_s1_a_crafted_checkpoint_runs_no_code_on_resume(tmp_path: Path, zipped: bool) -> None:
    d = interrupted_run(tmp_path / "runs")
    marker = tmp_path / "pwned"
    _craft(d / "checkpoint.pt", marker, zipped)

    # The file is live: loading it the unsafe way does run the command (a second marker; os.system's shell
    # ends before torch.load returns, and a fresh interpreter would cost a torch import for nothing).
    control = tmp_path / "control"
    _craft(tmp_path / "control.pt", control, zipped)
    with contextlib.suppress(Exception):  # the command runs first; what torch raises after it varies by version
        torch.load(tmp_path / "control.pt", weights_only=False)
    assert control.exists(), "the crafted pickle should run its command when loaded unsafely"

    r = grok("run", "--resume", str(d), "--steps", "80")
    one_error(r, f"error: {d}/checkpoint.pt: not a grok-tui checkpoint (")
    assert not marker.exists()


def test_s1_every_load_path_is_safe(tmp_path: Path) -> None:
    """Run.from_checkpoint (grok run --resume, the TUI, sweep members) refuses the file in-process too."""
    d = interrupted_run(tmp_path / "runs")
    marker = tmp_path / "pwned"
    _craft(d / "checkpoint.pt", marker, True)
    with pytest.raises(ConfigError, match="not a grok-tui checkpoint"):
        Run.from_checkpoint(d, max_steps=80)
    assert not marker.exists()
    # ... and the lock taken for the resume was given back.
    from engine.rundir import lock_holder

    assert lock_holder(d) is None


def test_s1_a_sweep_member_resumed_from_a_crafted_checkpoint_runs_no_code(tmp_path: Path) -> None:
    """`grok sweep --resume` hands an interrupted member to a worker, which resumes it from its checkpoint."""
    from engine.sweep.member import MemberSpec, run_member

    d = interrupted_run(tmp_path / "group")
    marker = tmp_path / "pwned"
    _craft(d / "checkpoint.pt", marker, True)
    row = run_member(MemberSpec("m000", tiny_config(), str(d), has_checkpoint=True), None, lambda: False)
    assert row["status"] == "failed" and "not a grok-tui checkpoint" in row["error"]
    assert not marker.exists()


def test_s1_no_unsafe_torch_load_in_the_code() -> None:
    """Every torch.load in engine/ and grok_tui/ passes weights_only=True."""
    for path in [*ROOT.glob("engine/**/*.py"), *ROOT.glob("grok_tui/**/*.py")]:
        for call in re.findall(r"torch\.load\((.*?)\)", path.read_text(), flags=re.S):
            assert "weights_only=True" in call, f"{path}: torch.load({call})"


def _leaves(obj: object, where: str = "") -> list[tuple[str, object]]:
    if isinstance(obj, dict):
        assert all(isinstance(k, str | int) for k in obj), where
        return [leaf for k, v in obj.items() for leaf in _leaves(v, f"{where}.{k}")]
    if isinstance(obj, list | tuple):
        return [leaf for i, v in enumerate(obj) for leaf in _leaves(v, f"{where}[{i}]")]
    return [(where, obj)]


def test_s1_checkpoint_holds_only_plain_containers_tensors_and_numbers(tmp_path: Path) -> None:
    d = finished_run(
        tmp_path / "runs",
        train__sampler="gradient",
        optim__grokfast_alpha=0.9,
        optim__grokfast_lambda=1.0,
        probe__hessian_every=20,
        probe__rank_every=20,
        probe__norm_every=20,
        probe__update_every=20,
        probe__fourier_every=20,
        probe__grad_every=20,
        probe__med_every=20,
    )
    state = torch.load(d / "checkpoint.pt", map_location="cpu", weights_only=True)
    for where, leaf in _leaves(state):
        assert leaf is None or isinstance(leaf, torch.Tensor | int | float | bool | str), (where, type(leaf))
    assert isinstance(state["rng"], torch.Tensor)  # RNG state as a tensor
    assert isinstance(state["sampler"]["gen"], torch.Tensor)


def _export(*args: str) -> list[list[str]]:
    import csv
    import io

    r = grok("export", *args)
    assert r.returncode == 0, r.stderr
    return list(csv.reader(io.StringIO(r.stdout)))


def test_s2_formula_cells_from_config_json_are_neutralised(run_dir: Path) -> None:
    doc = json.loads((run_dir / "config.json").read_text())
    doc["preset"] = "=cmd|' /C calc'!A0"
    (run_dir / "config.json").write_text(json.dumps(doc))
    rows = _export(str(run_dir))
    preset = rows[0].index("preset")
    assert {r[preset] for r in rows[1:]} == {"'=cmd|' /C calc'!A0"}
    for r in rows[1:]:
        for cell in r:
            assert not cell.startswith(("=", "+", "@")), cell  # numbers may start with -, text may not
            if cell.startswith("-"):
                float(cell)


def test_s2_formula_from_a_config_file_name(tmp_path: Path) -> None:
    cfg = tmp_path / "=1+2.toml"
    cfg.write_text(Path(TINY_TOML).read_text())
    r = grok("run", "--config", str(cfg), "--steps", "20", "--quiet", "--out", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stderr
    rows = _export(str(tmp_path / "runs"))
    assert {r[rows[0].index("preset")] for r in rows[1:]} == {"'=1+2"}


@pytest.mark.parametrize("name", ["/abs/file", "../presets/embed_add", "presets/embed_add", "..", "embed_add.toml"])
def test_s3_preset_takes_names_only(tmp_path: Path, name: str) -> None:
    if name == "/abs/file":
        target = tmp_path / "file.toml"
        target.write_text(Path(TINY_TOML).read_text())
        name = str(tmp_path / "file")
    r = grok("run", "--preset", name, "--out", str(tmp_path / "runs"))
    one_error(r, "--preset takes a preset name, not a path", "--config")
    assert not (tmp_path / "runs").exists()


def test_s4_terminal_escapes_from_a_run_directory_are_stripped(run_dir: Path) -> None:
    doc = json.loads((run_dir / "config.json").read_text())
    doc["preset"] = "\x1b]0;PWNED\x07evil\x1b[2J\u202e"
    (run_dir / "config.json").write_text(json.dumps(doc))
    s = json.loads((run_dir / "summary.json").read_text())
    s["device"] = "cpu\x1b[31m"
    (run_dir / "summary.json").write_text(json.dumps(s))
    for args in (["show", str(run_dir)], ["export", str(run_dir)]):
        r = grok(*args)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert "PWNED" in out or args[0] == "export"  # the text stays, the control characters go
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out.replace("\r\n", "\n")), repr(out)


def test_s4_error_lines_carry_no_escapes(tmp_path: Path) -> None:
    """A shared directory whose name holds an escape sequence, with a crafted summary.json."""
    d = finished_run(tmp_path / "runs")
    evil = d.with_name("run\x1b]0;PWNED\x07")
    d.rename(evil)
    (evil / "summary.json").write_text("[1, 2]")
    r = grok("show", str(evil))
    line = one_error(r, "PWNED", "summary.json: expected a JSON object")
    assert not re.search(r"[\x00-\x1f\x7f]", r.stderr.replace("\n", "")), repr(line)
