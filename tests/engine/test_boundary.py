"""The engine runs without a UI: importing and training never pulls in textual, typer or rich."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def test_engine_imports_and_trains_without_a_ui() -> None:
    """Every module of engine/, found by walking the package (as harlequin's test_import_hygiene.py does),
    imported, then a short run trained: none of it pulls in a UI. One fresh interpreter for both (each
    costs a torch import, about 2 CPU-s)."""
    code = (
        "import importlib, pkgutil, sys, engine\n"
        "names = [m.name for m in pkgutil.walk_packages(engine.__path__, 'engine.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "assert len(names) > 40 and 'engine.sweep.pool' in names, names\n"
        "bad = [m for m in ('textual', 'typer', 'rich', 'grok_tui') if m in sys.modules]\n"
        "assert not bad, ('importing', bad)\n"
        "from engine.config import RunConfig, apply_overrides\n"
        "from engine.train.trainer import Trainer\n"
        "cfg = apply_overrides(RunConfig(), {'data.p': 7, 'model.d_embed': 4, 'train.max_steps': 5})\n"
        "list(Trainer(cfg))\n"
        "bad = [m for m in ('textual', 'typer', 'rich', 'grok_tui') if m in sys.modules]\n"
        "assert not bad, ('training', bad)\n"
        "print(len(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert int(out.stdout) == sum(1 for p in ENGINE.rglob("*.py") if p.name != "__init__.py") + sum(
        1 for p in ENGINE.rglob("__init__.py") if p.parent != ENGINE
    )


def test_sweep_process_modules_import_no_torch() -> None:
    """`grok sweep` and `grok report` run in a process that never imports torch: only the members' workers do."""
    code = (
        "import sys\n"
        "import engine.sweep.pool, engine.sweep.ray, engine.sweep.report.tables, engine.sweep.spec\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_and_presets_import_no_torch() -> None:
    """`grok presets` and `grok --help` must not pay for importing torch."""
    code = (
        "import sys, engine.config, engine.config.presets\n"
        "engine.config.presets.all_presets()\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
