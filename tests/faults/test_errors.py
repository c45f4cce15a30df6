"""F1–F9 and the small ones: every bad value, file or device gets one `error:` line naming it, exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from engine.config import ConfigError, RunConfig, apply_overrides
from engine.config.presets import load_file, load_preset, preset_names, preset_toml
from engine.train.footprint import check_fits
from tests.conftest import grok
from tests.faults.conftest import TINY_TOML, interrupted_run, one_error, resume_error


def run_with(tmp_path: Path, *sets: str, timeout: float = 120) -> object:
    args = ["run", "--config", TINY_TOML, "--out", str(tmp_path / "runs"), "--quiet"]
    for s in sets:
        args += ["--set", s]
    return grok(*args, timeout=timeout)


@pytest.mark.parametrize(
    ("sets", "names"),
    [
        (["data.frac_train=1e-9"], ["data.frac_train", "empty training set"]),  # F1
        (["data.frac_test=1e-9"], ["data.frac_test", "empty test set"]),  # also: an empty test set
        (["data.p=100003"], ["data.p", "65536"]),  # F2: bounded
        (["data.p=65521", "data.op=mul"], ["data.p=65521", "needs about", "GiB"]),  # F2: estimated
        (["model.d_embed=100000"], ["model.d_embed=100000", "needs about", "GiB"]),
        (["train.device=cuda:abc"], ["train.device", "cuda:abc"]),  # F3
        (["train.device=cuda:-1"], ["train.device", "cuda:-1"]),
        (["train.device=cuda:"], ["train.device"]),
        (["data.skew=inf"], ["data.skew", "finite"]),  # F6
        (["data.skew=nan"], ["data.skew", "finite"]),
        (["train.seed=-1"], ["train.seed", "-1"]),
        (["train.seed=1e23"], ["train.seed"]),
        (["train.seed=18446744073709551616"], ["train.seed"]),
    ],
)
def test_bad_values_name_their_key(tmp_path: Path, sets: list[str], names: list[str]) -> None:
    r = run_with(tmp_path, *sets, timeout=60)
    one_error(r, *names)  # type: ignore[arg-type]
    assert not list((tmp_path / "runs").glob("*/metrics.csv"))


def test_f2_a_huge_prime_in_toml_is_refused_at_once(tmp_path: Path) -> None:
    f = tmp_path / "big.toml"
    f.write_text('[data]\nop = "mul"\np = 1000000000000000003\n')
    r = grok("run", "--config", str(f), "--out", str(tmp_path / "runs"), timeout=30)
    one_error(r, "data.p", "65536")


def test_f2_the_estimate_is_checked_against_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """p = 20011 needs about 42 GiB: refused on a 16 GiB machine, before any allocation."""
    import engine.train.footprint as fp

    cfg = apply_overrides(RunConfig(), {"data.p": 20011, "train.device": "cpu"})
    monkeypatch.setattr(fp, "host_memory", lambda: 16 * 2**30)
    with pytest.raises(ConfigError, match=r"data.p=20011.*needs about 4\d\.\d GiB.*16.0 GiB"):
        check_fits(cfg)
    monkeypatch.setattr(fp, "host_memory", lambda: 64 * 2**30)
    assert check_fits(cfg).pairs == 20011**2


@pytest.mark.parametrize("kind", ["truncated", "random", "empty"])
def test_f4_a_broken_checkpoint_is_one_line(tmp_path: Path, kind: str) -> None:
    d = interrupted_run(tmp_path / "runs")
    ckpt = d / "checkpoint.pt"
    data = ckpt.read_bytes()
    ckpt.write_bytes({"truncated": data[: len(data) // 2], "random": os.urandom(4096), "empty": b""}[kind])
    resume_error(d, f"error: {ckpt}: not a grok-tui checkpoint (", cli=kind == "truncated")


@pytest.mark.parametrize(
    ("edit", "names"),
    [
        ({"data": {"p": 13}}, ["data.p"]),
        ({"model": {"d_embed": 16}}, ["model.d_embed"]),
        ({"train": {"sampler": "balanced"}}, ["train.sampler"]),
    ],
)
def test_f5_an_edited_config_json_is_refused(
    tmp_path: Path, edit: dict[str, dict[str, object]], names: list[str]
) -> None:
    d = interrupted_run(tmp_path / "runs")
    doc = json.loads((d / "config.json").read_text())
    for group, kv in edit.items():
        doc[group].update(kv)
    (d / "config.json").write_text(json.dumps(doc))
    resume_error(d, "changed since the checkpoint", *names, cli="data.p" in names)


def test_f5_a_checkpoint_without_its_config_still_gets_one_line(tmp_path: Path) -> None:
    """A checkpoint written before configs were saved in it: a shape mismatch is named, not a traceback."""
    d = interrupted_run(tmp_path / "runs")
    state = torch.load(d / "checkpoint.pt", weights_only=True)
    del state["config"]
    torch.save(state, d / "checkpoint.pt")
    doc = json.loads((d / "config.json").read_text())
    doc["model"]["d_embed"] = 16
    (d / "config.json").write_text(json.dumps(doc))
    one_error(grok("run", "--resume", str(d), "--steps", "80"), "checkpoint.pt: does not match", "config.json")


@pytest.mark.parametrize("text", ["[1, 2]", "{not json", "\xff\xfe"])
def test_f5_config_json_that_is_no_object(tmp_path: Path, text: str) -> None:
    d = interrupted_run(tmp_path / "runs")
    (d / "config.json").write_bytes(text.encode("latin-1"))
    for args in (["run", "--resume", str(d), "--steps", "80"], ["show", str(d)], ["export", str(d)]):
        one_error(grok(*args), f"{d}/config.json")


@pytest.mark.parametrize("name", [n for n in preset_names()])
def test_f7_what_presets_prints_loads_as_a_config_file(tmp_path: Path, name: str) -> None:
    p = load_preset(name)
    f = tmp_path / "f.toml"
    f.write_text(preset_toml(p))
    again = load_file(f)
    assert again.config == p.config and again.sweep == p.sweep


@pytest.mark.parametrize("name", ["embed_add", "fig10_rank"])  # a single run and a sweep
def test_f7_grok_presets_output_runs(tmp_path: Path, name: str) -> None:
    r = grok("presets", name)
    assert r.returncode == 0, r.stderr
    f = tmp_path / "f.toml"
    f.write_text(r.stdout)
    r = grok(
        "run", "--config", str(f), "--set", "data.p=11", "--set", "model.d_embed=8", "--steps", "5",
        "--set", "train.device=cpu", "--quiet", "--out", str(tmp_path / "runs"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    (d,) = (tmp_path / "runs").iterdir()
    assert json.loads((d / "config.json").read_text())["preset"] == name


def test_f8_integers_are_parsed_exactly(tmp_path: Path) -> None:
    r = run_with(tmp_path, "train.seed=9007199254740993", "train.max_steps=1")
    assert r.returncode == 0, r.stderr  # type: ignore[attr-defined]
    (d,) = (tmp_path / "runs").iterdir()
    assert json.loads((d / "config.json").read_text())["train"]["seed"] == 9007199254740993
    assert apply_overrides(RunConfig(), {"train.max_steps": "1_000"}).train.max_steps == 1000
    assert apply_overrides(RunConfig(), {"train.max_steps": "2e3"}).train.max_steps == 2000
    with pytest.raises(ConfigError, match=r"train\.seed: expected an integer"):
        apply_overrides(RunConfig(), {"train.seed": 1e23})  # a TOML float past 2^53 names no exact integer


def test_f9_crafted_files_for_show_and_export(tmp_path: Path, run_dir: Path) -> None:
    m = run_dir / "metrics.csv"
    good = m.read_bytes()
    m.write_bytes(os.urandom(2000).replace(b"\n", b"") + b"\n")  # binary
    for args in (["show", str(run_dir)], ["export", str(run_dir)]):
        one_error(grok(*args), f"{m}")
    m.write_bytes(good)

    s = run_dir / "summary.json"
    s.write_text("[1,2]")
    one_error(grok("show", str(run_dir)), f"{s}: expected a JSON object")
    s.write_text("{}")

    lines = good.decode().splitlines()
    m.write_text("\n".join(",".join(c for c in line.split(",")[1:]) for line in lines) + "\n")  # no step column
    one_error(grok("export", "-m", "val_acc", str(run_dir)), f"{m}: no step column")
    m.write_bytes(good)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_f9_export_onto_a_full_disk(tmp_path: Path, run_dir: Path) -> None:
    one_error(grok("export", str(run_dir), "-o", "/dev/full"), "no space left on device writing /dev/full")


def test_f9_export_removes_a_half_written_file(tmp_path: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import csv
    import errno

    from engine.records.export import export_runs

    def full(self: csv.DictWriter[str], rows: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(csv.DictWriter, "writerows", full)
    out = tmp_path / "out.csv"
    with pytest.raises(ConfigError, match=f"no space left on device writing {out}"):
        export_runs([run_dir], out)
    assert not out.exists()


def test_report_does_not_count_a_nan_generalized_step() -> None:
    from engine.records.results import ResultsRow
    from engine.records.stats import summarize

    rows = [
        {"status": "finished", "generalized_step": "nan", "max_steps": 100},
        {"status": "finished", "generalized_step": "", "max_steps": 100},
        {"status": "finished", "generalized_step": "40", "max_steps": 100},
    ]
    assert summarize([ResultsRow.of(r, []) for r in rows])["generalized"] == 1


def test_also_an_empty_test_set_is_refused_in_process() -> None:
    with pytest.raises(ConfigError, match=r"data\.frac_test: gives an empty test set"):
        apply_overrides(RunConfig(), {"data.p": 5, "data.frac_test": 0.01})
