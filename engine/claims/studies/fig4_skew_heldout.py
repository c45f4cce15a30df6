"""fig4_skew_heldout: a sweep of the paper run with no page yet; its figure is drawn, it has no reading."""

from __future__ import annotations

from engine.claims.claim import Claim

CLAIM = Claim(
    "fig4_skew_heldout",
    "",
    "Fig. 4 with the held-out set skewed the other way",
    "fig4_skew_heldout",
    figure="fig4_heldout",
    row=25,
    paper=2,
    plan="2: the held-out set skewed the other way (Fig. 4)",
)
