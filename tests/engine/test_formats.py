"""data.format: the three token sequences, their vocabularies, and op_token as format's alias."""

from __future__ import annotations

import numpy as np
import pytest

from engine.config import ConfigError, DataConfig, RunConfig, apply_overrides, from_dict
from engine.task import data as D


@pytest.mark.parametrize(
    ("fmt", "seq", "vocab"),
    [("a_op_b_eq", [3, 5, 2, 6], 7), ("a_b_eq", [3, 2, 5], 6), ("a_b", [3, 2], 5)],
)
def test_format_tokens_and_vocabulary(fmt: str, seq: list[int], vocab: int) -> None:
    cfg = DataConfig(op="add", p=5, format=fmt)
    assert D.tokens(cfg, np.array([[3, 2]])).tolist() == [seq]
    assert cfg.vocab_size == vocab and cfg.seq_len == len(seq)
    every = D.tokens(cfg, D.operand_pairs(cfg))
    assert every.max() == vocab - 1  # every row of E is used: no unused op row
    assert len(D.token_counts(cfg, every)) == vocab


def test_op_token_is_an_alias_of_format() -> None:
    assert DataConfig(format="a_b").op_token is False and DataConfig().op_token is True
    assert "op_token" not in RunConfig().to_dict()["data"]  # an alias, not a second field of the same fact
    cfg = apply_overrides(RunConfig(), {"data.op_token": "false"})
    assert cfg.data.format == "a_b_eq" and cfg.data.seq_len == 3
    back = apply_overrides(cfg, {"data.format": "a_op_b_eq"})  # an explicit format wins over the old alias
    assert back.data.format == "a_op_b_eq" and back.data.op_token and back.data.vocab_size == 99
    for fmt in ("a_op_b_eq", "a_b_eq", "a_b"):
        c = apply_overrides(RunConfig(), {"data.format": fmt})
        assert from_dict(c.to_dict()) == c  # config.json round trip


def test_bad_format_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"data\.format: must be one of a_op_b_eq, a_b_eq, a_b \(got 'ab'\)"):
        apply_overrides(RunConfig(), {"data.format": "ab"})
