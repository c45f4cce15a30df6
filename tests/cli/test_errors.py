"""User errors: exit code 2, one clear line on stderr, no traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.conftest import DATA, grok


def assert_user_error(r, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    err = r.stderr.strip()
    lines = err.splitlines()
    message = " ".join(ln.strip() for ln in lines)  # one message, folded to the terminal (errors.error_text)
    for n in needles:
        assert n in message, err
    if err.startswith("error:"):
        assert all(ln.startswith("  ") for ln in lines[1:]) and all(len(ln) <= 200 for ln in lines), err


def test_unknown_preset_suggests_close_names(tmp_path: Path) -> None:
    r = grok("run", "--preset", "skewd_mul", "--out", str(tmp_path))
    assert_user_error(r, "unknown preset 'skewd_mul'", "skewed_mul")


def test_unknown_set_key(tmp_path: Path) -> None:
    r = grok("run", "--preset", "skewed_mul", "--set", "optim.lrr=1", "--out", str(tmp_path))
    assert_user_error(r, "unknown config key 'optim.lrr'", "optim.lr")


def test_set_without_equals(tmp_path: Path) -> None:
    assert_user_error(grok("run", "--preset", "skewed_mul", "--set", "optim.lr", "--out", str(tmp_path)), "--set")


def test_wrong_type(tmp_path: Path) -> None:
    r = grok("run", "--preset", "skewed_mul", "--set", "train.batch_size=big", "--out", str(tmp_path))
    assert_user_error(r, "train.batch_size: expected an integer")


@pytest.mark.parametrize(
    ("setting", "needle"),
    [
        ("data.frac_train=1.2", "data.frac_train: must be in (0, 1)"),
        ("data.frac_test=-0.1", "data.frac_test: must be in (0, 1)"),
        ("data.frac_train=0.85", "frac_train + frac_test must be <= 1"),
        ("data.p=2", "data.p: must be >= 3"),
        ("data.p=91", "data.p: must be prime for op=mul"),
        ("train.batch_size=-4", "train.batch_size: must be >= 1"),
    ],
)
def test_out_of_range(tmp_path: Path, setting: str, needle: str) -> None:
    assert_user_error(grok("run", "--preset", "skewed_mul", "--set", setting, "--out", str(tmp_path)), needle)


def test_bad_seed_type(tmp_path: Path) -> None:
    r = grok("run", "--preset", "skewed_mul", "--seed", "x", "--out", str(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        ("unknown_key.toml", ("unknown_key.toml", "unknown config key 'data.modulus'")),
        ("unknown_group.toml", ("unknown_group.toml", "unknown config key 'dataset'")),
        ("malformed.toml", ("malformed.toml", "malformed TOML")),
        ("bad_value.toml", ("bad_value.toml", "data.p: must be prime")),
        ("wrong_type.toml", ("wrong_type.toml", "train.batch_size: expected an integer")),
        ("missing.toml", ("missing.toml", "does not exist")),
    ],
)
def test_bad_config_files(tmp_path: Path, name: str, needles: tuple[str, ...]) -> None:
    assert_user_error(grok("run", "--config", str(DATA / name), "--out", str(tmp_path)), *needles)


def test_unwritable_output_dir(tmp_path: Path, tiny_toml: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert_user_error(grok("run", "--config", tiny_toml, "--out", str(blocker / "runs")), "cannot write run directory")
    if os.geteuid() != 0:  # root ignores permission bits
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert_user_error(grok("run", "--config", tiny_toml, "--out", str(ro)), "cannot write run directory")


def test_preset_and_config_together(tmp_path: Path, tiny_toml: str) -> None:
    assert_user_error(grok("run", "--preset", "skewed_mul", "--config", tiny_toml), "either --preset or --config")


def test_nothing_to_run() -> None:
    assert_user_error(grok("run"), "--preset")


def test_unknown_device(tmp_path: Path, tiny_toml: str) -> None:
    assert_user_error(grok("run", "--config", tiny_toml, "--device", "tpu", "--out", str(tmp_path)), "train.device")


def test_show_and_export_of_missing_run(tmp_path: Path) -> None:
    # a path that does not exist says so, in every command, as `grok ls` does
    for command in ("show", "export", "tokens", "plot", "circuit", "report"):
        assert_user_error(grok(command, str(tmp_path / "nope")), f"{tmp_path / 'nope'}: no such directory")
    assert_user_error(grok("show", str(tmp_path)), "not a run directory")  # there, but not a run


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("show",), "missing argument"),
        (("run", "--seed", "x"), "invalid value for '--seed'"),
        (("ls", "--bogus"), "no such option: --bogus"),
        (("nosuch",), "no such command 'nosuch'"),
    ],
)
def test_usage_errors_are_one_line(args: tuple[str, ...], needle: str) -> None:
    """Typer's boxed panel becomes the project's one `error:` line, exit 2."""
    r = grok(*args)
    assert_user_error(r, needle)
    assert r.stderr.startswith("error: ") and "╭" not in r.stderr and "--help" in r.stderr


def test_resume_without_checkpoint(tmp_path: Path) -> None:
    assert_user_error(grok("run", "--resume", str(tmp_path)), "not a run directory")


def test_unknown_presets_name() -> None:
    assert_user_error(grok("presets", "nope_nope"), "unknown preset")
