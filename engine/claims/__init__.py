"""The claims: one study module each (engine/claims/studies/), read from its kept group, and the pages made from them.

A study is a preset, one module exporting its `Claim`, and one page under docs/claims/ (docs/ENGINE.md,
"Adding a study"). The status rows, the readers and the paper run's list of sweeps are read from the
studies (registry.py); docs.py writes every generated region of the pages from them and docs/data/.
"""

from engine.claims.claim import Claim
from engine.claims.registry import claims, every_study, get, paper_sweeps, readers

__all__ = ["Claim", "claims", "every_study", "get", "paper_sweeps", "readers"]
