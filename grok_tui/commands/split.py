"""`grok split`: per-token frequencies of a config's train/test split, the data behind Figs. 4 and 8.

Counts are of pairs holding a token, a pair (t, t) once (engine/task/data.py pairs_holding), the rule every
metric uses. The draw shares replay the config's sampler for `--draws` steps: these are the draws a run
makes, for every sampler but `gradient`, whose weights then follow the model (a run's own realized shares
are in its summary.json).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from grok_tui import options as o
from grok_tui.commands.width import echo
from grok_tui.errors import user_errors

if TYPE_CHECKING:
    from engine.config import DataConfig, RunConfig

BARS = " ▏▎▍▌▋▊▉█"


def _bar(v: float, vmax: float, width: int) -> str:
    if vmax <= 0:
        return ""
    units = v / vmax * width * 8
    full, rem = divmod(round(units), 8)
    return "█" * full + (BARS[rem] if rem else "")


def _split_name(d: DataConfig) -> str:
    """The split as configured, with the token-level and starvation keys that change it."""
    name = d.split
    if d.split in ("skewed", "skewed_test"):
        name += f" (skew {d.skew:g} on {'both operands' if d.skew_on == 'both' else 'a'}, {d.skew_order} order)"
    if d.starve_k and d.starve_m >= 0:
        name += f" ({d.starve_k} tokens starved to <= {d.starve_m} pairs)"
    elif d.starve_k:
        name += f" ({d.starve_k} target tokens, no cap)"
    return name


app = typer.Typer()  # `grok split`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
@o.with_run_options(fields=("preset", "config", "sets", "seed"))
def split(
    opts: o.RunOptions,
    csv: Annotated[bool, typer.Option("--csv", help="Print the per-token table as CSV.")] = False,
    width: Annotated[int, typer.Option("--width", help="Bar width in characters.")] = 30,  # + " target": 80 columns
    draws: Annotated[
        int, typer.Option("--draws", help="Steps of the sampler to replay for the realized draw shares.")
    ] = 1000,
) -> None:
    """Show how often each operand token occurs in the training and test sets (Figs. 4, 8)."""
    import numpy as np

    from engine.config import ConfigError
    from engine.task import data as D
    from engine.task.metrics import split_tokens

    if draws < 0:
        raise ConfigError(f"--draws: must be >= 0 (got {draws})")
    cfg = opts.resolve()
    s = D.make_split(cfg.data, cfg.train.seed)
    pairs = D.operand_pairs(cfg.data)
    p = cfg.data.p
    tr_pairs, te_pairs = pairs[s.train], pairs[s.test]
    ta = np.bincount(tr_pairs[:, 0], minlength=p)
    tb = np.bincount(tr_pairs[:, 1], minlength=p)
    tr, te = D.pairs_holding(tr_pairs, p), D.pairs_holding(te_pairs, p)  # pairs holding t, (t, t) once
    n = len(s.train)
    batch = min(cfg.train.batch_size or n, n)
    presence = D.batch_presence(n, tr, batch)
    ceiling = D.coverage_ceiling(tr_pairs, te_pairs, p)
    absent = split_tokens(cfg).absent  # the tokens no training pair holds (engine/task/metrics.py)
    sampler, realized = _replay(cfg, D.tokens(cfg.data, pairs[s.train]), draws)
    expected = sampler.expected_share().numpy()
    targets = D.starved_tokens(cfg.data, cfg.train.seed)
    is_target = np.isin(np.arange(p), targets)
    if csv:
        typer.echo("token,train_a,train_b,train,test,batch_presence,target,expected_share,draw_share")
        for t in range(p):
            typer.echo(
                f"{t},{ta[t]},{tb[t]},{tr[t]},{te[t]},{presence[t]:.4f},{int(is_target[t])},"
                f"{expected[t]:.6f},{realized[t]:.6f}"
            )
        return
    echo(
        f"{_split_name(cfg.data)} split of {cfg.data.op} mod {p}, seed {cfg.train.seed}: "
        f"{n} train / {len(s.test)} test pairs"
    )
    lo, hi = int(tr.argmin()), int(tr.argmax())
    echo(
        f"training pairs holding a token, (t, t) once: min {tr.min()} (token {lo})  max {tr.max()} (token {hi})  "
        f"mean {tr.mean():.1f}  cv {tr.std() / max(tr.mean(), 1e-9):.2f}"
    )
    echo(
        f"absent from training: {len(absent)} tokens{' ' + ' '.join(map(str, absent)) if len(absent) else ''}  "
        f"coverage ceiling: {ceiling:.3f} (1 - share of test pairs holding an absent token)"
    )
    echo(
        f"batch {batch}, shuffled epochs: the rarest token is in {presence.min():.1%} of batches; "
        f"{int((presence < 0.5).sum())} tokens are in fewer than half of them"
    )
    shares = realized[tr > 0]
    echo(
        f"sampler {cfg.train.sampler}, {draws} steps replayed: share of draws per trained token "
        f"min {shares.min():.2%}  median {np.median(shares):.2%}  max {shares.max():.2%}  (1/p = {1 / p:.2%})"
        + ("; gradient: at its initial weights" if cfg.train.sampler == "gradient" else "")
        if len(shares) and draws
        else f"sampler {cfg.train.sampler}: no draws replayed"
    )
    if len(targets):
        for line in _target_lines(cfg, targets, tr, expected, realized, sampler.rate, draws):
            echo(line)
    typer.echo(
        f"{'token':>5} {'as a':>5} {'as b':>5} {'train':>5} {'test':>5} {'batch%':>6} {'draw%':>6}  (bar: train)"
    )
    for t in range(p):
        counts = f"{t:>5} {ta[t]:>5} {tb[t]:>5} {tr[t]:>5} {te[t]:>5}"
        mark = " target" if is_target[t] else ""
        typer.echo(f"{counts} {presence[t]:>6.1%} {realized[t]:>6.2%}  {_bar(tr[t], tr.max(), width)}{mark}")


def _replay(cfg: RunConfig, seqs: Any, steps: int) -> tuple[Any, Any]:
    """The config's sampler on its training set, and each operand token's share of its first `steps` draws."""
    import numpy as np
    import torch

    from engine.task.samplers import build_sampler

    sampler = build_sampler(cfg, torch.as_tensor(seqs), torch.device("cpu"))
    for _ in range(steps):
        sampler.next()
    return sampler, np.nan_to_num(np.array(sampler.draw_share()), nan=0.0)


def _target_lines(
    cfg: RunConfig, targets: Any, pairs: Any, expected: Any, realized: Any, rate: float, steps: int
) -> list[str]:
    """The decoupling knobs as realized: each target token's training pairs m and share of draws."""
    import numpy as np

    others = np.setdiff1d(np.flatnonzero(pairs > 0), targets)
    med_e = float(np.median(expected[others])) if len(others) else float("nan")
    med_r = float(np.median(realized[others])) if len(others) else float("nan")
    setting = cfg.train.target_rate
    how = "matched" if setting == 0 else "set"
    m = ", ".join(str(int(pairs[t])) for t in targets)
    out = [
        f"targets: {len(targets)} tokens {' '.join(map(str, targets))}; training pairs m per target: {m}",
        f"draw rate r = {rate:.4g} ({how}): a target's share of draws, mean over targets, "
        f"expected {expected[targets].mean():.3%} vs median other token {med_e:.3%} "
        f"(ratio {expected[targets].mean() / med_e:.3f})",
    ]
    if steps:
        out.append(
            f"realized over {steps} steps: {realized[targets].mean():.3%} vs {med_r:.3%} "
            f"(ratio {realized[targets].mean() / med_r:.3f})"
        )
    return out
