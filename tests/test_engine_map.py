"""docs/ENGINE.md's map names every module of engine/, in its package's line, and no module that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBES = "hessian|spectra|fourier|gradients|norms|med|progress|targets|balance"  # the map names probe files bare


def _map() -> dict[str, set[str]]:
    """The map's engine block: package (relative to engine/, '' for the top) -> the module names it lists."""
    text = (ROOT / "docs/ENGINE.md").read_text()
    block = text[text.index("```\nengine/") + 4 :]
    block = block[: block.index("\ngrok_tui/")]
    out: dict[str, set[str]] = {}
    pkg = ""
    for line in block.splitlines()[1:]:
        head = re.match(r"  (\S+/)\s", line + " ")
        if head:
            pkg = head.group(1).rstrip("/")
        elif not line.startswith("   "):
            pkg = ""
        names = set(re.findall(r"\b(\w+)\.py\b", line))
        names |= set(re.findall(rf"\b({PROBES})\b", line))
        out.setdefault(pkg, set()).update(names)
    return out


def _modules() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in (ROOT / "engine").rglob("*.py"):
        if path.name == "__init__.py":
            continue
        pkg = path.parent.relative_to(ROOT / "engine").as_posix()
        out.setdefault("" if pkg == "." else pkg, set()).add(path.stem)
    return out


REGISTRIES = {"claims/studies"}  # a package whose modules a registry finds: the map names the package, not each


def test_every_engine_module_is_on_the_map() -> None:
    listed, real = _map(), _modules()
    missing = [
        f"engine/{p + '/' if p else ''}{m}.py"
        for p, ms in real.items()
        if p not in REGISTRIES
        for m in sorted(ms - listed.get(p, set()))
    ]
    assert set(listed) >= REGISTRIES, "docs/ENGINE.md's map leaves out a registry's package"
    assert not missing, "docs/ENGINE.md's map leaves out: " + ", ".join(missing)


def test_the_map_names_no_module_that_is_gone() -> None:
    listed, real = _map(), _modules()
    gone = [f"{p}/{m}" for p, ms in listed.items() for m in sorted(ms - real.get(p, set()))]
    assert not gone, "docs/ENGINE.md's map names modules that do not exist: " + ", ".join(gone)


def test_engine_top_level_holds_at_most_ten_modules() -> None:
    top = [p.name for p in (ROOT / "engine").glob("*.py")]
    assert len(top) <= 10, f"engine/ has {len(top)} modules beside its packages: {sorted(top)}"
