"""starve: a sweep of the paper run with no page yet; its figure is drawn, it has no reading."""

from __future__ import annotations

from engine.claims.claim import Claim

CLAIM = Claim(
    "starve",
    "",
    "The starved limit: tokens with m = 0..5 training pairs (Fig. 4, §4.2)",
    "starve",
    figure="starve",
    row=165,
    paper=2,
    plan="2: the starved limit, tokens with m = 0..5 training pairs (Fig. 4, §4.2)",
)
