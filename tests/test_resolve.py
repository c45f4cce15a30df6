"""One resolver (engine/config/resolve.py): every entry point that makes a config from a source, --set and
the shorthands gives the config `resolve` gives for the same overrides. The TUI's start is here; its
restart and picker are checked in tests/tui/test_app.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.config import ConfigError, DataConfig, RunConfig, from_dict
from engine.config.presets import load_file, load_preset
from engine.config.resolve import check_resume, overrides, resolve, source
from tests.conftest import grok

DATA = Path(__file__).parent / "data"
TINY = DATA / "tiny.toml"
SETS = ["optim.lr=0.002", "data.op=mul", "train.seed=9"]  # --seed below wins over the --set of train.seed
SEED, STEPS, DEVICE = 3, 40, "cpu"
FLAGS = [x for s in SETS for x in ("--set", s)] + ["--seed", str(SEED), "--steps", str(STEPS), "--device", DEVICE]


def want(base: Any = None, sets: list[str] = SETS, **short: Any) -> RunConfig:
    short = short or {"seed": SEED, "steps": STEPS, "device": DEVICE}
    return resolve(base if base is not None else load_file(TINY), sets, **short)


def config_of(run_dir: Path) -> RunConfig:
    return from_dict(json.loads((run_dir / "config.json").read_text()))


def test_shorthands_win_and_strings_parse_as_set_does() -> None:
    assert overrides(SETS, seed=SEED) == {"optim.lr": "0.002", "data.op": "mul", "train.seed": 3}
    assert overrides({"optim.lr": 0.5}, steps=7, device="cpu") == {
        "optim.lr": 0.5,
        "train.max_steps": 7,
        "train.device": "cpu",
    }
    cfg = want()
    assert (cfg.optim.lr, cfg.data.op, cfg.train.seed, cfg.train.max_steps) == (0.002, "mul", 3, 40)
    assert resolve(cfg) == cfg  # nothing to apply: the config as it was


def test_sources_and_exclusions_are_written_once() -> None:
    with pytest.raises(ConfigError, match="either --preset or --config, not both"):
        source("tiny", str(TINY))
    with pytest.raises(ConfigError, match="give --preset NAME"):
        source(None, None)
    with pytest.raises(ConfigError, match="drop --preset/--config/--set/--seed"):
        check_resume(["--set"])
    check_resume(["--steps", "--device"])  # a resume may extend or move a run
    with pytest.raises(ConfigError, match=r"--set: optim\.lr: expected a number"):
        resolve(load_file(TINY), ["optim.lr=fast"], where="--set")


def test_grok_run(tmp_path: Path) -> None:
    r = grok("run", "--config", str(TINY), *FLAGS, "--out", str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    (run,) = tmp_path.iterdir()
    assert config_of(run) == want()


def test_grok_split(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.task import data as D

    seen: list[tuple[Any, int]] = []
    real = D.make_split

    def spy(data: DataConfig, seed: int) -> D.Split:
        seen.append((data, seed))
        return real(data, seed)

    monkeypatch.setattr(D, "make_split", spy)
    flags = [x for s in SETS for x in ("--set", s)] + ["--seed", str(SEED)]  # split takes no --steps/--device
    r = grok("split", "--config", str(TINY), *flags)
    assert r.returncode == 0, r.stderr
    cfg = want(seed=SEED)
    assert seen[0] == (cfg.data, cfg.train.seed)


def test_tui_start() -> None:
    from grok_tui.launch import resolve as launch
    from grok_tui.options import RunOptions

    opts = RunOptions(config=str(TINY), sets=SETS, seed=SEED, steps=STEPS, device=DEVICE)
    assert launch(opts).cfg == want() == opts.resolve()


def test_grok_sweep_base() -> None:
    from grok_tui.commands.sweep_group import plan_group
    from grok_tui.options import RunOptions

    sets = ["optim.lr=0.002", "data.p=13"]
    opts = RunOptions(config=str(DATA / "tiny_sweep.toml"), sets=sets, steps=STEPS, device=DEVICE)
    _, base, _, _ = plan_group(opts, seeds=1)
    assert base == want(load_file(DATA / "tiny_sweep.toml"), sets, steps=STEPS, device=DEVICE)


def test_grok_fork_and_resume(tmp_path: Path) -> None:
    from engine.train.fork import fork_run
    from engine.train.run import Run

    r = grok("run", "--config", str(TINY), "--set", "train.keep_every=20", "--out", str(tmp_path / "p"), "-q")
    assert r.returncode == 0, r.stderr
    (parent,) = (tmp_path / "p").iterdir()
    sets = {"optim.lr": "0.002", "optim.weight_decay": "0.5"}
    fork = fork_run(parent, at=40, sets=sets, steps=80, out=tmp_path / "f")
    assert config_of(fork) == want(config_of(parent), [f"{k}={v}" for k, v in sets.items()], steps=80)
    resumed = Run.from_checkpoint(fork, max_steps=100, device="cpu")
    assert resumed.cfg == want(config_of(fork), [], steps=100, device="cpu")


def test_bench_config() -> None:
    from engine.train.bench import bench_config

    got = bench_config("random_mul", "cpu", 1, **{"train.batch_size": 64})
    assert got == want(load_preset("random_mul"), ["train.threads=1", "train.batch_size=64"], device="cpu")


def test_screenshots_train_headless(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots", Path(__file__).parents[1] / "bench/screenshots.py")
    assert spec is not None and spec.loader is not None
    screenshots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshots)
    run = screenshots.train_headless("random_mul", 0, tmp_path)
    assert config_of(run) == want(load_preset("random_mul"), ["train.threads=1"], device="cpu")
