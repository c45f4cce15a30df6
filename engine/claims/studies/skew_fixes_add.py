"""skew_fixes_add: a sweep of the paper run with no page yet; its figure is drawn, it has no reading."""

from __future__ import annotations

from engine.claims.claim import Claim

CLAIM = Claim(
    "skew_fixes_add",
    "",
    "The paper's fixes on the token-starved split, add (ours)",
    "skew_fixes_add",
    figure="fixes_add",
    row=235,
    paper=2,
    plan="2, 3: the same fixes on add (§4.2-4.3, App. A)",
)
