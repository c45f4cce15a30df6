"""is_prime (Miller-Rabin) against trial division, and at the edges data.p can reach."""

from __future__ import annotations

from engine.config.numbers import is_prime


def by_trial_division(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))


def test_agrees_with_trial_division_below_5000() -> None:
    assert [n for n in range(5000) if is_prime(n)] == [n for n in range(5000) if by_trial_division(n)]


def test_large_primes_and_strong_pseudoprimes() -> None:
    assert is_prime(65521) and is_prime(2**31 - 1) and is_prime(2**61 - 1)
    # 3215031751 is a strong pseudoprime to bases 2, 3, 5 and 7; more bases find it composite.
    assert not is_prime(3215031751) and not is_prime(65536) and not is_prime(2**61 + 1)
