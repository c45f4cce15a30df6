"""First launch: one line under the status bar saying what a flagship preset shows and what to try next.

The numbers are the measured ones of docs/REPRODUCTION.md (the presets' comments quote them): on the
token-skewed split (`skewed_mul`, Fig. 4) val accuracy plateaus at 0.909-0.958 over seeds 0-4 and never
reaches G, while the same run on a random split (`random_mul`) reaches 95% at steps 5,200-6,200.
"""

from __future__ import annotations

GUIDES = {
    # the plateau is val's (0.909-0.958 at seeds 0-4): the rare tokens, ▲ in the Tokens view, are the part left
    "skewed_mul": "Fig. 4: val plateaus at 0.91-0.96, no G: {rare} rare tokens ▲ lag · try random_mul",
    "random_mul": "random split: groks, G near step 5,200-6,200 · try next: skewed_mul, progress_mul",
    "progress_mul": "t to Circuit: C, then U, then G (Nanda et al. 2023) · try next: skewed_mul",
}


def guide(preset: str, n_rare: int | None = None) -> str:
    """The first-launch line for `preset`, or "" for a preset with none; `n_rare`: how many rare tokens the
    run's split has (RunStarted's token sets), "the" before it is known."""
    return GUIDES.get(preset, "").replace("{rare}", "the" if n_rare is None else str(n_rare))
