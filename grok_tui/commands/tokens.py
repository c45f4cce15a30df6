"""`grok tokens RUN_DIR`: each token's learned step against its training pairs, the per-token form of Fig. 4.

§4.2 predicts that a token in few training pairs gets few embedding updates and is learned late. Here each
operand token's learned step (the first evaluation from which the val_acc of the test pairs holding it
stays >= the threshold to the end, engine/rundir/columns.py learned_step) stands beside the training pairs that
hold it (a pair (t, t) once) and, where the run logged it, its realized share of the sampler's draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grok_tui.commands.width import echo
from grok_tui.errors import user_errors


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None or (isinstance(v, float) and v != v) else format(v, spec)


app = typer.Typer()  # `grok tokens`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def tokens(
    run_dir: Annotated[str, typer.Argument(help="A run directory.")],
    csv: Annotated[bool, typer.Option("--csv", help="Print the table as CSV.")] = False,
    plot: Annotated[bool, typer.Option("--plot", help="Also draw learned step against training pairs.")] = False,
) -> None:
    """Per token: the step it was learned at against its training pairs (the per-token form of Fig. 4)."""
    from engine.rundir import clean_text, is_run_dir

    d = Path(run_dir)
    if not is_run_dir(d):
        from engine.config import ConfigError

        raise ConfigError(f"{clean_text(d)}: not a run directory (no config.json)")
    from grok_tui.token_facts import token_table

    rows, threshold, facts = token_table(d)
    if csv:
        typer.echo("token,train_pairs,draw_share,learned_step,final_val_acc,role")
        for r in rows:
            typer.echo(
                f"{r['token']},{r['train_pairs']},{_fmt(r['draw_share'], '.6f').replace('-', '')},"
                f"{'' if r['learned_step'] is None else r['learned_step']},"
                f"{_fmt(r['final_val_acc'], '.4f').replace('-', '')},{r['role']}"
            )
        return
    n_learned = sum(r["learned_step"] is not None for r in rows)
    echo(
        f"{clean_text(d)}: {facts['op']} mod {facts['p']}, seed {facts['seed']}; a token is learned at the "
        f"first evaluation from which the val_acc of its test pairs stays >= {threshold:g}"
    )
    rho = facts.get("spearman")
    corr = "" if rho is None else f"; Spearman rank correlation of learned step with training pairs: {rho:+.2f}"
    echo(f"learned: {n_learned} of {len(rows)} tokens{corr}")
    typer.echo(f"{'token':>5} {'pairs':>5} {'draw%':>6} {'learned':>8} {'val_acc':>7}  role")
    for r in rows:
        typer.echo(
            f"{r['token']:>5} {r['train_pairs']:>5} {_fmt(r['draw_share'] * 100, '6.2f'):>6} "
            f"{_fmt(r['learned_step'], 'd'):>8} {_fmt(r['final_val_acc'], '.3f'):>7}  {r['role']}"
        )
    if plot:
        _plot(rows)


def _plot(rows: list[dict[str, Any]]) -> None:
    import plotext as plt

    pts = [(r["train_pairs"], r["learned_step"]) for r in rows if r["learned_step"] is not None]
    plt.clear_figure()
    plt.theme("clear")
    plt.plot_size(72, 20)
    if pts:
        plt.scatter([x for x, _ in pts], [y for _, y in pts], marker="dot")
    plt.title("learned step against training pairs (one dot per token)")
    plt.xlabel("training pairs holding the token")
    plt.ylabel("learned step")
    typer.echo(plt.build())
