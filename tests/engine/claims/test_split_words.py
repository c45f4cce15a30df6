"""One word per split on the status page: "skewed" is the paper's split (Fig. 4, skew on the first operand),
"token-starved" the lab's (skew 15 on both operands, `skewed_mul`), in titles and plan lines alike."""

from __future__ import annotations

from engine.claims.registry import every_study
from engine.config.presets import load_preset


def _token_starved(preset: str) -> bool:
    data = load_preset(preset).config.data
    return data.split == "skewed" and data.skew_on == "both"


def test_a_study_on_the_labs_split_says_token_starved_never_skewed() -> None:
    on_ours = [c for c in every_study() if _token_starved(c.preset)]
    assert {"app_c4", "cure_skew_mul", "fixes"} <= {c.key for c in on_ours}
    for c in on_ours:
        for text in (c.title, c.plan):
            assert "skew" not in text.lower(), (c.key, text)
        assert "token-starved" in c.title, c.key


def test_the_papers_split_keeps_its_name() -> None:
    (claim2,) = [c for c in every_study() if c.key == "claim2"]
    assert not _token_starved(claim2.preset) and "skewed split" in claim2.title
