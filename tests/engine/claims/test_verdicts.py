"""The status page's verdict rules (engine/claims/verdicts.py): parts read per seed, the strongest word."""

from __future__ import annotations

import pytest

from engine.claims.verdicts import FAILS, HOLDS, OPPOSITE, PENDING, UNREAD, Outcome, Part, allowed, ceiling


@pytest.mark.parametrize(
    ("agree", "opposite", "state"),
    [
        ([True, True, True], [False] * 3, HOLDS),  # k = n: the strongest level n allows
        ([True, True, False], [False, False, True], FAILS),  # 2 of 3 is not every seed
        ([True, None, True], [False] * 3, UNREAD),  # a pair neither side decided: a bound that cannot tell
        ([True, None, False], [False, False, True], FAILS),
        ([False, False], [True, True], OPPOSITE),
        ([False, False], [False, True], FAILS),  # a tie is not the opposite
    ],
)
def test_outcome_states(agree: list[bool | None], opposite: list[bool], state: str) -> None:
    assert Outcome(agree, opposite).state == state


def test_k_of_n_names_the_undecided() -> None:
    assert Outcome([True, None, True]).k_of_n("seeds") == (
        "2 of 3 seeds (1 undecided: neither side reached 95% val by the budget)"
    )


def _p(state: str, judged: str = "") -> Part:
    return Part("x", state, "", judged)


@pytest.mark.parametrize(
    ("states", "word"),
    [
        ([HOLDS, HOLDS], "reproduced"),
        ([HOLDS, UNREAD], "partly"),  # claim 8: frozen "not within the budget" cannot tell slow from never
        ([HOLDS, OPPOSITE], "partly"),
        ([UNREAD, UNREAD], "inconclusive"),
        ([OPPOSITE, OPPOSITE], "contradicted"),
        ([FAILS, OPPOSITE], "not reproduced"),
        ([FAILS, UNREAD], "not reproduced"),
    ],
)
def test_ceiling(states: list[str], word: str) -> None:
    assert ceiling([_p(s) for s in states]) == word


def test_a_judged_part_never_makes_a_claim_reproduced() -> None:
    assert ceiling([_p(HOLDS), _p(HOLDS, judged="a shape")]) == "partly"
    assert ceiling([_p(HOLDS)], ours=True) == "supported"
    assert ceiling([_p(FAILS)], ours=True) == "not supported"


@pytest.mark.parametrize(
    ("word", "top", "ok"),
    [
        ("partly", "partly", True),
        ("reproduced", "partly", False),  # stronger than the data
        ("partly", "reproduced", True),  # weaker is allowed
        ("not reproduced", "inconclusive", False),  # same strength, another word: an over-read
        ("contradicted", "not reproduced", False),  # never contradicted unless the data contradict
        ("supported", "supported", True),
        ("maybe", "reproduced", False),
        (PENDING, "partly", True),
    ],
)
def test_allowed(word: str, top: str, ok: bool) -> None:
    assert allowed(word, top) is ok


def test_a_guard_lowers_a_verdict_and_lifts_none() -> None:
    from engine.claims.verdicts import GUARD

    guard = Part("costs nothing", HOLDS, "", role=GUARD)
    assert ceiling([_p(FAILS), guard]) == "not reproduced"  # the cure fails: no harm is no support
    assert ceiling([_p(HOLDS), guard]) == "reproduced"
    assert ceiling([_p(HOLDS), Part("costs nothing", FAILS, "", role=GUARD)]) == "partly"
    assert ceiling([_p(UNREAD), guard]) == "inconclusive"


def test_a_control_is_shown_and_not_counted() -> None:
    from engine.claims.verdicts import CONTROL

    control = Part("random direction falls", HOLDS, "", role=CONTROL)
    assert ceiling([_p(FAILS), control]) == "not reproduced"
    assert ceiling([_p(HOLDS), Part("random direction falls", FAILS, "", role=CONTROL)]) == "reproduced"


def test_a_judged_part_is_shown_unread() -> None:
    assert _p(FAILS, judged="a threshold of ours").shown == UNREAD and _p(FAILS).shown == FAILS


def test_pairs_of_optimizers_sharing_a_split_say_how_many_are_independent() -> None:
    text = Outcome([True] * 10).k_of_n("pairs", shared=2)
    assert text.startswith("10 of 10 pairs") and "5 independent" in text
