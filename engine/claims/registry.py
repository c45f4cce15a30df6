"""The registry of studies: every module of engine/claims/studies/ exports one Claim, and every list of
studies (the status rows, the readers, the paper run's sweeps) is read from them, never kept beside them."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable

import engine.claims.studies as studies_package
from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.config import ConfigError
from engine.records.group_dir import Group


@functools.lru_cache(maxsize=1)
def every_study() -> tuple[Claim, ...]:
    """Every study module's CLAIM, in the order of their rows; a module must be named for its claim's key."""
    found = []
    for mod in pkgutil.iter_modules(studies_package.__path__):
        claim = importlib.import_module(f"{studies_package.__name__}.{mod.name}").CLAIM
        if not isinstance(claim, Claim) or claim.key != mod.name:
            raise ConfigError(f"engine/claims/studies/{mod.name}.py: CLAIM must be a Claim with key {mod.name!r}")
        found.append(claim)
    return tuple(sorted(found, key=lambda c: c.row))


def claims() -> tuple[Claim, ...]:
    """The studies with a page: the status tables' rows, in order."""
    return tuple(c for c in every_study() if c.has_page)


def readers() -> dict[str, Callable[[Group], Reading]]:
    """Each study's reader, by its preset."""
    return {c.preset: c.read for c in every_study() if c.read is not None}


def paper_sweeps() -> tuple[tuple[str, str], ...]:
    """The paper run's sweeps as (preset, plan line): claim by claim, and within a claim in the studies' order."""
    return tuple(
        (c.preset, c.plan) for c in sorted((c for c in every_study() if c.paper), key=lambda c: (c.paper, c.row))
    )


def get(key: str) -> Claim:
    """The study with a page named `key`."""
    for c in claims():
        if c.key == key:
            return c
    raise ConfigError(f"unknown claim {key!r}; known: {', '.join(c.key for c in claims())}")
