"""engine.rundir is the run directory's facade: its `__all__`, its typed imports and its lazy table agree."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import engine.rundir as rundir

INIT = Path(rundir.__file__)


def _typed_imports() -> dict[str, str]:
    """Name -> module part, from the `if TYPE_CHECKING:` block mypy reads."""
    tree = ast.parse(INIT.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    out = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        out.update({a.name: node.module.removeprefix("engine.rundir.") for a in node.names})
    return out


def test_all_the_typed_imports_and_the_lazy_table_name_the_same_things() -> None:
    assert set(rundir.__all__) == set(rundir._HOME) == set(_typed_imports())
    assert _typed_imports() == rundir._HOME
    assert len(rundir.__all__) == len(set(rundir.__all__))


def test_each_name_is_its_modules_own() -> None:
    for name, part in rundir._HOME.items():
        assert getattr(rundir, name) is getattr(importlib.import_module(f"engine.rundir.{part}"), name), name


def test_an_unknown_name_is_an_attribute_error_and_a_submodule_still_imports() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        rundir.no_such_name  # noqa: B018
    from engine.rundir import files

    assert files.__name__ == "engine.rundir.files"


def test_the_facade_loads_a_name_s_module_only_when_it_is_used() -> None:
    code = (
        "import sys, engine.rundir\n"
        "assert 'engine.rundir.dirs' not in sys.modules\n"
        "from engine.rundir import is_run_dir\n"
        "assert 'engine.rundir.files' in sys.modules and 'engine.rundir.dirs' not in sys.modules\n"
        "import engine.events\n"  # the events first, then a part that imports them (the checkpoints)
        "from engine.rundir import Keeper\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
