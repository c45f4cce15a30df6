"""fig5_c_long: a sweep of the paper run with no page of its own; claim 4 reads its instability part from it."""

from __future__ import annotations

from engine.claims.claim import Claim

CLAIM = Claim(
    "fig5_c_long",
    "",
    "Fig. 5's large c over 3,000 steps with no stop rule",
    "fig5_c_long",
    row=41,
    paper=4,
    plan="4: large c over 3,000 steps with no stop rule: does a fitted member lose the fit? (Fig. 5)",
)
