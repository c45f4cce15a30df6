"""A study's claim: its preset, its page under docs/claims/, how its kept group is read, and its verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.claims.readings import Reading
from engine.records.group_dir import Group


@dataclass(frozen=True)
class Claim:
    """One study: a row of a status table, its page under docs/claims/ (named KEY, .md) and its place in the paper run.

    The module engine/claims/studies/KEY.py exports it as CLAIM; engine/claims/registry.py collects them.
    """

    key: str  # the study's module and its page under docs/claims/, named KEY with the .md suffix
    number: str  # "1".."8" for the paper's claims; "" for the second table
    title: str  # the claim in a few words, with the paper's figure or section
    preset: str  # the sweep preset; its kept group is docs/data/PRESET/
    verdict: str = ""  # the page's word (verdicts.RANK), checked against what the data allow; "" = no page yet
    note: str = ""  # after the verdict: a template of the reading's values ({p0}, {p1}, ...: each part's evidence)
    earlier: str = ""  # pending rerun: the verdict an earlier engine's runs gave (no kept data)
    tail: int = 5  # `grok report --tail` for the claim's tables
    metrics: str = ""  # `grok report --metrics`, comma-separated ("" = the default)
    figure: str = ""  # `grok figure --claim NAME` (a builder of grok_tui/figures/claims.py)
    tables: tuple[str, ...] = ()  # the report's tables the page shows, by the start of their titles (() = all)
    sweep_args: str = ""  # what `grok sweep` takes beside the preset (a fork study's --parents)
    ours: bool = False  # our extension: supported / not supported
    read: Callable[[Group], Reading] | None = None  # the parts, headline and named values, from the kept group
    row: int = 0  # the studies' order: the status tables' rows, and within a paper claim the paper run's
    paper: int = 0  # the paper run lists the preset among claim N's sweeps (9: the appendix's); 0: not in it
    plan: str = ""  # the preset's line in the paper run's plan (`grok sweep --preset paper --plan`)

    @property
    def has_page(self) -> bool:
        """A study with a verdict has a page and a status row; one without is a paper sweep with no page yet."""
        return bool(self.verdict)
