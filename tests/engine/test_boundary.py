"""The engine runs without a UI: importing and training never pulls in textual, typer or rich."""

from __future__ import annotations

import subprocess
import sys


def test_engine_imports_no_ui() -> None:
    code = (
        "import sys, engine, engine.run, engine.trainer, engine.export, engine.presets, engine.probes\n"
        "from engine.config import RunConfig, apply_overrides\n"
        "from engine.trainer import Trainer\n"
        "cfg = apply_overrides(RunConfig(), {'data.p': 7, 'model.d_embed': 4, 'train.max_steps': 5})\n"
        "list(Trainer(cfg))\n"
        "bad = [m for m in ('textual', 'typer', 'rich', 'grok_tui') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_config_and_presets_import_no_torch() -> None:
    """`grok presets` and `grok --help` must not pay for importing torch."""
    code = (
        "import sys, engine.config, engine.presets\nengine.presets.all_presets()\nassert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
