"""`grok split`: per-token frequencies of a config's train/test split, the data behind Fig. 8."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.errors import user_errors

BARS = " ▏▎▍▌▋▊▉█"


def _bar(v: float, vmax: float, width: int) -> str:
    if vmax <= 0:
        return ""
    units = v / vmax * width * 8
    full, rem = divmod(int(round(units)), 8)
    return "█" * full + (BARS[rem] if rem else "")


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def split(
        preset: o.Preset = None,
        config: o.ConfigFile = None,
        set_: o.Set = None,
        seed: o.Seed = None,
        csv: Annotated[bool, typer.Option("--csv", help="Print token,train,test counts as CSV.")] = False,
        width: Annotated[int, typer.Option("--width", help="Bar width in characters.")] = 50,
    ) -> None:
        """Show how often each operand token occurs in the training and test sets (Fig. 8)."""
        import numpy as np

        from engine import data as D
        from engine.config import parse_set
        from engine.presets import resolve_config

        cfg, _ = resolve_config(preset, config, parse_set(set_ or []), seed=seed)
        s = D.make_split(cfg.data, cfg.train.seed)
        pairs = D.operand_pairs(cfg.data)
        p = cfg.data.p

        def counts(idx: np.ndarray, col: int | None = None) -> np.ndarray:
            sel = pairs[idx] if col is None else pairs[idx, col]
            return np.bincount(sel.ravel(), minlength=p)

        tr, te = counts(s.train), counts(s.test)
        ta, tb = counts(s.train, 0), counts(s.train, 1)
        if csv:
            typer.echo("token,train_a,train_b,train,test")
            for t in range(p):
                typer.echo(f"{t},{ta[t]},{tb[t]},{tr[t]},{te[t]}")
            return
        typer.echo(
            f"{cfg.data.split} split of {cfg.data.op} mod {p}, seed {cfg.train.seed}: "
            f"{len(s.train)} train / {len(s.test)} test pairs; operand-token occurrences in the training set"
        )
        typer.echo(
            f"min {tr.min()}  max {tr.max()}  mean {tr.mean():.1f}  cv {tr.std() / max(tr.mean(), 1e-9):.2f}  "
            f"tokens absent from train: {int((tr == 0).sum())}"
        )
        typer.echo(f"{'token':>5} {'as a':>5} {'as b':>5} {'total':>5} {'test':>5}  (bar: train total)")
        for t in range(p):
            typer.echo(f"{t:>5} {ta[t]:>5} {tb[t]:>5} {tr[t]:>5} {te[t]:>5}  {_bar(tr[t], tr.max(), width)}")
