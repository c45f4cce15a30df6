"""Every preset loads, validates and says where in the paper it comes from; presets ship in the wheel."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from engine.config import RunConfig, apply_overrides
from engine.config.presets import load_preset, preset_names, presets_dir

ISSUE2 = [
    "noembed_add", "noembed_mul", "embed_add", "embed_mul",
    "random_add", "uniform_add", "skewed_add", "random_mul", "uniform_mul", "skewed_mul",
    "adam_add", "adam_sub", "adam_mul", "adam_div", "adamlr_add", "adamlr_sub", "adamlr_mul", "adamlr_div",
    "adamlr_adaptive_mul", "balanced_skewed_mul", "gradient_skewed_mul",
]  # fmt: skip


def test_issue_presets_exist() -> None:
    missing = set(ISSUE2) - set(preset_names())
    assert not missing


@pytest.mark.parametrize("name", preset_names())
def test_preset_loads_and_cites_its_source(name: str) -> None:
    p = load_preset(name)
    assert isinstance(p.config, RunConfig) and p.description
    assert p.config.preset == name
    first = (presets_dir() / f"{name}.toml").read_text().splitlines()[0]
    assert first.startswith("#") and re.search(r"(Figs?\.|§|App\.|Prop\.|eq\.|paper|Sec\.|\.md)", first), first
    # the resolved config survives its own validation after a round trip of overrides
    apply_overrides(p.config, {"train.max_steps": p.config.train.max_steps})


ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"[\w./-]+\.md\b")  # a cited file: docs/references/x.md, docs/TRANSFORMER.md, README.md


def cited_files(text: str) -> list[str]:
    return [m.group(0).strip("./") if m.group(0).startswith("./") else m.group(0) for m in CITED.finditer(text)]


def test_cited_files_are_in_the_repository() -> None:
    """Every .md file a preset, a module or a doc cites resolves to a file of the repository: a path from
    the repository root, or from the citing file's own folder (a link between docs)."""
    sources = [
        *presets_dir().glob("*.toml"),
        *(ROOT / "engine").rglob("*.py"),
        *(ROOT / "grok_tui").rglob("*.py"),
        *(ROOT / "docs").rglob("*.md"),
        ROOT / "README.md",
    ]
    dangling = []
    for src in sources:
        for cited in cited_files(src.read_text()):
            if "://" in cited or cited.startswith(("http", "www")):
                continue
            if not any((b / cited).is_file() for b in (ROOT, src.parent)):
                dangling.append(f"{src.relative_to(ROOT)}: {cited}")
    assert not dangling, dangling


def test_a_dangling_citation_is_seen() -> None:
    # the presets once cited bare names of files the repository never had
    assert cited_files("# beyond-progress-measures.md Fig. 3") == ["beyond-progress-measures.md"]
    assert not (ROOT / "beyond-progress-measures.md").is_file() and not (ROOT / "REFERENCES.md").is_file()


def test_paper_settings() -> None:
    assert load_preset("skewed_mul").config.data.split == "skewed"
    for op in ("mul", "add"):  # Fig. 4's plateau needs tokens rare in both positions (issue 11)
        d, a_only = load_preset(f"skewed_{op}").config.data, load_preset(f"skewed_a_{op}").config.data
        assert (d.skew_on, d.skew_order, d.skew) == ("both", "random", 15.0)
        assert (a_only.split, a_only.skew_on, a_only.skew_order, a_only.skew) == ("skewed", "a", "value", 3.0)
    a, b = load_preset("adam_mul").config, load_preset("adamlr_mul").config
    assert a.optim.lr == b.optim.lr == 0.01 and a.train.batch_size == 512
    assert a.optim.lr_ratio == 1.0 and b.optim.lr_ratio == 10.0
    assert load_preset("noembed_mul").config.model.kind == "mlp_raw"
    assert load_preset("random_add").config.optim.lr == 1e-3
    assert load_preset("gradient_skewed_mul").config.train.sampler == "gradient"


def test_presets_ship_in_the_wheel(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("grok_tui-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for n in ISSUE2:
        assert f"grok_presets/{n}.toml" in names
    assert "engine/train/trainer.py" in names and "grok_tui/cli.py" in names
