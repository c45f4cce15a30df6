"""A claim's kept data, its reading and the strongest verdict the reading allows.

A study with kept data (docs/data/PRESET/, `grok report GROUP --keep`) is read by its module's reader
(engine/claims/studies/), and its verdict may be no stronger than that reading allows
(engine/claims/verdicts.py). A study without kept data from the current engine is "pending rerun": its row
names the verdict an earlier engine's runs gave, labelled as such, and no number.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.claims.registry import get
from engine.claims.verdicts import PENDING, allowed, ceiling
from engine.config.presets import load_preset
from engine.records.group_dir import Group
from engine.rundir import is_group
from engine.sweep.spec import parse_sweep


def data_dir(root: Path, claim: Claim) -> Path:
    return root / "docs" / "data" / claim.preset


def kept(root: Path, claim: Claim) -> Group | None:
    """The claim's kept group, or None (pending rerun)."""
    d = data_dir(root, claim)
    return Group.open(d) if is_group(d) else None


@functools.lru_cache(maxsize=64)
def _read(root: str, key: str) -> Reading | None:
    claim = get(key)
    g = kept(Path(root), claim)
    if g is None or claim.read is None:
        return None
    r = claim.read(g)
    parts = {f"p{i}": p.evidence for i, p in enumerate(r.parts)}  # a note quotes a part's evidence as {p0}, ...
    return replace(r, values={**parts, **r.values})


def reading(root: Path, claim: Claim) -> Reading | None:
    """The claim's reading from its kept data (cached per root), None while it is pending a rerun."""
    return _read(str(root), claim.key)


def strongest(root: Path, claim: Claim) -> str:
    """The strongest verdict the kept data allow; PENDING without kept data."""
    r = reading(root, claim)
    return PENDING if r is None else ceiling(r.parts, claim.ours)


def check(root: Path, claim: Claim) -> str | None:
    """Why the claim's verdict is stronger than its data allow, or None when it is not."""
    top = strongest(root, claim)
    if top == PENDING:
        return None if claim.verdict == PENDING else f"{claim.key}: verdict {claim.verdict!r} without kept data"
    if claim.verdict == PENDING or allowed(claim.verdict, top):
        return None
    return f"{claim.key}: the page says {claim.verdict!r}; the data allow at most {top!r}"


def planned(claim: Claim) -> str:
    """ "seeds × tasks" from the preset, for a claim with no kept data yet."""
    p = load_preset(claim.preset)
    spec = parse_sweep(p.sweep, str(p.path))
    ops = spec.grid.get("data.op") or [p.config.data.op]
    return f"{len(spec.seeds)} × {len(ops)} ({', '.join(map(str, ops))})"
