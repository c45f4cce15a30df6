"""fig2_long: a sweep of the paper run with no page yet; its figure is drawn, it has no reading."""

from __future__ import annotations

from engine.claims.claim import Claim

CLAIM = Claim(
    "fig2_long",
    "",
    "Fig. 2 at 40,000 steps, train accuracy shown",
    "fig2_long",
    figure="fig2_long",
    row=15,
    paper=1,
    plan="1: the same at 40,000 steps, train accuracy shown (Fig. 2)",
)
