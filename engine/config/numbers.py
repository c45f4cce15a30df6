"""Number theory the tasks need: primality of the modulus p (mul and div need a field, §3.3; data.p's check
in fields.py) and a primitive root (the discrete-log axis, engine/task/dlog.py)."""

from __future__ import annotations


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin: exact for every n < 3.3e24 with these bases, in microseconds."""
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    if n in bases:
        return True
    if any(n % b == 0 for b in bases):
        return False
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def primitive_root(p: int) -> int:
    """The smallest generator g of the multiplicative group mod a prime p: g^((p-1)/q) ≠ 1 for every prime q | p-1."""
    n, factors, q = p - 1, set(), 2
    while q * q <= n:
        while n % q == 0:
            factors.add(q)
            n //= q
        q += 1
    if n > 1:
        factors.add(n)
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // f, p) != 1 for f in factors)) if p > 2 else 1
