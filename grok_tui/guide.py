"""First launch: one line under the status bar saying what a flagship preset predicts and what to try next;
not on a fork that changed its settings (grok_tui/widgets/status_bar.py), whose run is no longer the preset's.

The lines name what to look for and carry no measured number (a number belongs to the kept data of
docs/REPRODUCTION.md, where a rerun moves it): on the token-skewed split (`skewed_mul`, Fig. 4) val
accuracy plateaus below 95% while the rare tokens lag, and G comes late or not at all (per seed:
docs/claims/token_skew.md); the same run on a random split (`random_mul`) groks within its budget.
"""

from __future__ import annotations

GUIDES = {
    # "predicted": what the preset is built to show, not what this run measured (a seed may differ); the plateau
    # is val's: the rare tokens, ▲ in the Tokens view, are the part left
    "skewed_mul": "predicted: val stays under 95%, {rare} rare tokens ▲ lag (Fig. 4) · try random_mul",
    "random_mul": "predicted: groks within the budget (G) · try next: skewed_mul, progress_mul",
    "progress_mul": "predicted: C, then U, then G in the Circuit view (t) · try next: skewed_mul",
}


def guide(preset: str, n_rare: int | None = None) -> str:
    """The first-launch line for `preset`, or "" for a preset with none; `n_rare`: how many rare tokens the
    run's split has (RunStarted's token sets), "the" before it is known."""
    return GUIDES.get(preset, "").replace("{rare}", "the" if n_rare is None else str(n_rare))
