"""The status page's verdict words and the strongest one a claim's kept data allow (docs/REPRODUCTION.md).

A claim is read as parts. Each part is mechanical (a direction per seed, k of n, a bound at the
budget) or judged (the page says which criterion and why). A mechanical part holds when every seed
agrees (k = n, the strongest level n allows), is *unread* when some seed cannot tell (a member that
never reached 95% on the side the claim needs reached, so the difference is only a bound that does not
decide), is *opposite* when every seed shows the opposite, and fails otherwise. The words follow the
page's criteria:

- reproduced (supported, for our own questions): every part holds;
- partly: some part holds, and at least one does not or could not be read;
- inconclusive: no part could be read;
- contradicted: every part shows the opposite in every seed;
- not reproduced (not supported): otherwise.

A judged part counts as *unread* for the ceiling, so a claim with one is at most "partly" unless its
mechanical parts alone fail; the judgement is the page's, with its reason, and the verdict shows it unread.

Two roles beside a claim's own parts. A **guard** (a premise, or a no-harm condition: "costs the common
tokens less than 0.01") can keep a claim from its strongest word when it does not hold, but lifts none: a
claim whose only holding parts are guards reads as if none held. A **control** is a check the design
cannot fail (a random direction gives chance accuracy): the page shows it, the verdict does not count it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

HOLDS, FAILS, UNREAD, OPPOSITE = "holds", "fails", "unread", "opposite"
GUARD, CONTROL = "guard", "control"  # a part's role beside the claim's own parts ("")
PENDING = "pending rerun"  # no kept data from the current engine: no verdict is computed or given
# strength of a verdict for the claim; a page may say a weaker word than its data allow, never a stronger one
RANK = {
    "reproduced": 4,
    "supported": 4,
    "partly": 3,
    "not reproduced": 2,
    "not supported": 2,
    "inconclusive": 2,
    "contradicted": 1,
    PENDING: 0,
}
OURS = {"reproduced": "supported", "not reproduced": "not supported"}  # our extensions' words


@dataclass(frozen=True)
class Part:
    """One part of a claim and how the kept data read it."""

    text: str  # the part in a few words: "small init converges faster"
    state: str  # HOLDS, FAILS, UNREAD or OPPOSITE
    evidence: str  # the numbers that decide it: "10 of 10 seeds fewer steps"
    judged: str = ""  # non-empty: a judgement, and why (the state is then UNREAD for the ceiling)
    role: str = ""  # "" a part of the claim; GUARD a premise or no-harm condition; CONTROL a check that cannot fail

    @property
    def shown(self) -> str:
        """The state the verdict shows: a judged part is unread, whatever its numbers say."""
        return UNREAD if self.judged else self.state


@dataclass(frozen=True)
class Outcome:
    """Per seed (or pair), whether it agrees with a direction: True, False, or None (cannot tell: a bound)."""

    agree: Sequence[bool | None]
    opposite: Sequence[bool] = field(default_factory=tuple)  # per seed: strictly the other way

    @property
    def state(self) -> str:
        a = list(self.agree)
        if a and all(x is True for x in a):
            return HOLDS
        if a and len(self.opposite) == len(a) and all(self.opposite):
            return OPPOSITE
        if any(x is None for x in a) and not any(x is False for x in a):
            return UNREAD
        return FAILS

    def k_of_n(self, what: str = "", shared: int = 1) -> str:
        """ "7 of 10" (+ " what"), and how many could not tell. `shared`: how many arms share each seed's split
        (Adam and SGD pooled: 2), so the pairs hold that many times fewer independent draws, which it says."""
        k = sum(x is True for x in self.agree)
        unread = sum(x is None for x in self.agree)
        text = f"{k} of {len(self.agree)}" + (f" {what}" if what else "")
        if shared > 1:
            text += f" ({len(self.agree) // shared} independent: {shared} optimizers share each seed's split)"
        return text + (f" ({unread} undecided: neither side reached 95% val by the budget)" if unread else "")


def ceiling(parts: Sequence[Part], ours: bool = False) -> str:
    """The strongest verdict the parts allow (the module's rules): controls are not counted, and a guard
    that holds lifts nothing."""
    states = [p.shown for p in parts if not p.role]
    guards = [p.shown for p in parts if p.role == GUARD]
    if not states:
        word = "inconclusive"
    elif all(s == HOLDS for s in states + guards):
        word = "reproduced"
    elif any(s == HOLDS for s in states):
        word = "partly"
    elif all(s == UNREAD for s in states):
        word = "inconclusive"
    elif all(s == OPPOSITE for s in states):
        word = "contradicted"
    else:
        word = "not reproduced"
    return OURS.get(word, word) if ours else word


def allowed(word: str, top: str) -> bool:
    """Whether a page may give `word` where the data allow at most `top`: the same word, or a weaker one
    (never "contradicted" unless the data contradict, never a different word of the same strength)."""
    if word not in RANK:
        return False
    if word == top:
        return True
    return RANK[word] < RANK[top] and word != "contradicted"
