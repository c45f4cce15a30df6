"""One figure per claim of the paper, in the paper's layout, from the sweep group that backs the claim.

Each claim names the presets whose groups can draw it (docs/REPRODUCTION.md says which preset backs
which claim); `grok figure --claim NAME GROUP` draws one, `grok figure --paper RUNS_DIR` every
claim whose group is present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir import is_group
from engine.sweep.results import ENDED
from engine.sweep.spec import Group
from grok_tui.figures.data import Curve, cell_label, fourier_spectrum, group_curves, member_dirs
from grok_tui.figures.draw import Panel, share_axes


@dataclass(frozen=True)
class Claim:
    name: str
    presets: tuple[str, ...]  # the sweep presets whose groups this figure is drawn from
    what: str  # one line: what the figure shows (the paper's figure)
    build: Callable[[Group], list[Panel]]
    by_op: bool = False  # one column per task (data.op), one row per metric; else one row of panels

    def ncols(self, group: Group) -> int:
        """Columns of the panel grid (0: draw's default, one row of up to style.MAX_COLS)."""
        return len(_facets(group, "data.op")) if self.by_op else 0


def _facets(group: Group, key: str) -> list[Any]:
    """The values of a grid key (one panel each), or [None] when the group does not sweep it."""
    return list(group.spec.grid.get(key, [None]))


def _where(group: Group, curves: list[Curve], key: str, value: Any) -> list[Curve]:
    """The cells with `key` = `value`, labelled without that key."""
    out = []
    for c in curves:
        if value is None or c.values.get(key) == value:
            if c.member is not None:
                c.label = cell_label(group, c.member, drop=(key,))
            out.append(c)
    return out


def _by_op(group: Group, metrics: list[str], title: str = "{op}") -> list[Panel]:
    """Rows of panels by metric, columns by task (data.op); the cells as lines."""
    panels = []
    for m in metrics:
        curves = group_curves(group, m)
        if not curves:
            continue
        for op in _facets(group, "data.op"):
            op_name = op if op is not None else group.base.data.op
            panels.append(Panel(title.format(op=op_name), [m], _where(group, curves, "data.op", op)))
    return panels


def fig4(group: Group) -> list[Panel]:
    """Fig. 4: val accuracy, all test pairs and the rare tokens' pairs, per split arm; a column per task."""
    panels = _by_op(group, ["val_acc", "val_acc_rare"])
    if not panels:
        raise ConfigError(f"{group.dir}: no member has logged val_acc yet")
    return panels


def fig6(group: Group) -> list[Panel]:
    """Fig. 6: Adam against Adam-LR, val accuracy on each of the four tasks."""
    return _by_op(group, ["val_acc"])


def fig7(group: Group) -> list[Panel]:
    """Fig. 7: λmax of the loss Hessian restricted to E and to W, one panel per optimizer."""
    e, w = group_curves(group, "hess_E"), group_curves(group, "hess_W")
    panels = []
    for ce, cw in zip(e, w, strict=False):
        ce.label, cw.label = "E", "W"
        title = ce.member.arm if ce.member is not None and ce.member.arm else ""
        panels.append(Panel(title, ["hess_E", "hess_W"], [ce, cw], ylabel=r"$\lambda_{\max}$"))
    share_axes(panels)  # one scale: the optimizers compare by height and by time
    return panels


def fig10(group: Group) -> list[Panel]:
    """Fig. 10: rank of E, W and EW over training, per optimizer."""
    mats = ("E", "W", "EW")
    return [Panel(f"rank of {x}", [f"rank_{x}"], group_curves(group, f"rank_{x}"), ylabel="rank") for x in mats]


def fig11(group: Group) -> list[Panel]:
    """Fig. 11: the Fourier spectrum of E at the end of training, one panel per task (its first ended seed).

    Bars are each frequency's share of the energy (k >= 1) on one y scale, so a peaked spectrum and
    a flat one read as such side by side.
    """
    dirs = member_dirs(group)
    ended = {mid for mid, r in group.results().items() if r.get("status") in ENDED}
    panels = []
    seen: set[Any] = set()
    for m in group.members:
        op = m.values.get("data.op", group.base.data.op)
        d = dirs.get(m.id)
        if op in seen or d is None or m.id not in ended:
            continue
        spec = fourier_spectrum(d)
        if spec is None:
            continue
        seen.add(op)
        step, ks, share = spec
        curve = Curve(f"seed {m.seed}", [float(k) for k in ks], share)
        title = f"{op} (seed {m.seed}, step {step})"
        panels.append(Panel(title, [], [curve], xlabel="frequency k", kind="bar", ylabel="energy share"))
    top = max((max(p.curves[0].y) for p in panels), default=1.0)
    for p in panels:
        p.ylim = (0.0, top * 1.05)
    return panels


CLAIMS = {
    c.name: c
    for c in (
        Claim(
            "fig4",
            ("fig4_token_skew", "fig4_skew_heldout", "starve"),
            "val accuracy and rare-token val accuracy per split",
            fig4,
            by_op=True,
        ),
        Claim("fig6", ("fig6_optimizers",), "Adam vs Adam-LR val accuracy on add, sub, mul, div", fig6),
        Claim("fig7", ("fig7_hessian",), "λmax of E and W, Adam vs Adam-LR", fig7),
        Claim("fig10", ("fig10_rank",), "rank of E, W and EW per optimizer", fig10),
        Claim("fig11", ("fig11_fourier",), "Fourier spectrum of E per task", fig11),
    )
}


def get_claim(name: str) -> Claim:
    claim = CLAIMS.get(name)
    if claim is None:
        raise ConfigError(f"--claim {name}: unknown claim; known: {', '.join(CLAIMS)}")
    return claim


def claim_panels(name: str, group: Group) -> tuple[Claim, list[Panel]]:
    claim = get_claim(name)
    panels = [p for p in claim.build(group) if p.curves]
    if not panels:
        raise ConfigError(f"{group.dir}: nothing to draw for {name} ({claim.what}): no member has logged it yet")
    return claim, panels


def paper_groups(runs_dir: str | Path) -> list[tuple[Claim, Path]]:
    """Each claim with the newest group under `runs_dir` made from one of its presets."""
    root = Path(runs_dir)
    if not root.is_dir():
        raise ConfigError(f"{runs_dir}: not a directory")
    groups = sorted((p for p in root.iterdir() if is_group(p)), key=lambda p: p.name, reverse=True)  # newest first
    presets = {}
    for g in groups:
        try:
            presets.setdefault(Group.open(g).preset, g)
        except ConfigError:
            continue
    out = []
    for claim in CLAIMS.values():
        for p in claim.presets:
            if p in presets:
                out.append((claim, presets[p]))
                break
    return out
