"""`grok split`: per-token frequencies of a config's train/test split, the data behind Figs. 4 and 8."""

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


def _split_name(d: object) -> str:
    """The split as configured, with the token-level and starvation keys that change it."""
    from engine.config import DataConfig

    assert isinstance(d, DataConfig)
    name = d.split
    if d.split in ("skewed", "skewed_test"):
        name += f" (skew {d.skew:g} on {'both operands' if d.skew_on == 'both' else 'a'}, {d.skew_order} order)"
    if d.starve_k:
        name += f" ({d.starve_k} tokens starved to <= {d.starve_m} pairs)"
    return name


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def split(
        preset: o.Preset = None,
        config: o.ConfigFile = None,
        set_: o.Set = None,
        seed: o.Seed = None,
        csv: Annotated[bool, typer.Option("--csv", help="Print the per-token table as CSV.")] = False,
        width: Annotated[int, typer.Option("--width", help="Bar width in characters.")] = 40,
    ) -> None:
        """Show how often each operand token occurs in the training and test sets (Figs. 4, 8)."""
        import numpy as np

        from engine import data as D
        from engine.config import parse_set
        from engine.presets import resolve_config

        cfg, _ = resolve_config(preset, config, parse_set(set_ or []), seed=seed)
        s = D.make_split(cfg.data, cfg.train.seed)
        pairs = D.operand_pairs(cfg.data)
        p = cfg.data.p
        tr_pairs, te_pairs = pairs[s.train], pairs[s.test]
        ta = np.bincount(tr_pairs[:, 0], minlength=p)
        tb = np.bincount(tr_pairs[:, 1], minlength=p)
        tr, te = ta + tb, np.bincount(te_pairs.ravel(), minlength=p)  # occurrences over both positions
        n = len(s.train)
        batch = min(cfg.train.batch_size or n, n)
        presence = D.batch_presence(n, D.pairs_holding(tr_pairs, p), batch)
        ceiling = D.coverage_ceiling(tr_pairs, te_pairs, p)
        absent = np.flatnonzero(tr == 0)
        if csv:
            typer.echo("token,train_a,train_b,train,test,batch_presence")
            for t in range(p):
                typer.echo(f"{t},{ta[t]},{tb[t]},{tr[t]},{te[t]},{presence[t]:.4f}")
            return
        typer.echo(
            f"{_split_name(cfg.data)} split of {cfg.data.op} mod {p}, seed {cfg.train.seed}: "
            f"{n} train / {len(s.test)} test pairs"
        )
        lo, hi = int(tr.argmin()), int(tr.argmax())
        typer.echo(
            f"training occurrences over both operands: min {tr.min()} (token {lo})  max {tr.max()} (token {hi})  "
            f"mean {tr.mean():.1f}  cv {tr.std() / max(tr.mean(), 1e-9):.2f}"
        )
        typer.echo(
            f"absent from training: {len(absent)} tokens{' ' + ' '.join(map(str, absent)) if len(absent) else ''}  "
            f"coverage ceiling: {ceiling:.3f} (1 - share of test pairs holding an absent token)"
        )
        typer.echo(
            f"batch {batch}: the rarest token is in {presence.min():.1%} of batches; "
            f"{int((presence < 0.5).sum())} tokens are in fewer than half of them"
        )
        typer.echo(f"{'token':>5} {'as a':>5} {'as b':>5} {'train':>5} {'test':>5} {'batch%':>6}  (bar: train)")
        for t in range(p):
            counts = f"{t:>5} {ta[t]:>5} {tb[t]:>5} {tr[t]:>5} {te[t]:>5}"
            typer.echo(f"{counts} {presence[t]:>6.1%}  {_bar(tr[t], tr.max(), width)}")
