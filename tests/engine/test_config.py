"""Config validation and typed dotted overrides."""

from __future__ import annotations

import pytest

from engine.config import ConfigError, RunConfig, apply_overrides, from_dict, parse_set, to_toml


def test_defaults_match_the_paper() -> None:
    cfg = RunConfig()
    assert cfg.data.p == 97 and cfg.data.frac_test == 0.2 and cfg.data.frac_train == 0.3
    assert cfg.data.vocab_size == 99 and cfg.data.seq_len == 4
    assert cfg.model.d_embed == 128 and cfg.optim.weight_decay == 1e-3 and cfg.optim.name == "adam"


def test_derived_values_follow_p() -> None:
    cfg = apply_overrides(RunConfig(), {"data.p": "13", "data.op_token": "false"})
    assert cfg.data.vocab_size == 14 and cfg.data.seq_len == 3  # [a, b, =]: no unused op row


def test_set_strings_are_typed() -> None:
    cfg = apply_overrides(RunConfig(), parse_set(["optim.lr=3e-3", "train.batch_size=64", "optim.betas=0.9,0.98"]))
    assert cfg.optim.lr == 3e-3 and cfg.train.batch_size == 64 and cfg.optim.betas == (0.9, 0.98)
    cfg = apply_overrides(cfg, {"model.freeze_embedding": "true"})
    assert cfg.model.freeze_embedding is True


@pytest.mark.parametrize(
    ("sets", "needle"),
    [
        ({"optim.lrr": "1"}, "unknown config key 'optim.lrr'; did you mean optim.lr"),
        ({"nope": "1"}, "unknown config key"),
        ({"train.batch_size": "abc"}, "train.batch_size: expected an integer"),
        ({"optim.lr": "fast"}, "optim.lr: expected a number"),
        ({"model.freeze_embedding": "maybe"}, "expected true or false"),
        ({"data.frac_train": "1.5"}, "data.frac_train: must be in (0, 1)"),
        ({"data.frac_test": "0"}, "data.frac_test: must be in (0, 1)"),
        ({"data.frac_train": "0.9"}, "frac_train + frac_test must be <= 1"),
        ({"data.p": "2"}, "data.p: must be >= 3"),
        ({"data.p": "15"}, "data.p: must be prime for op=mul"),
        ({"data.op": "pow"}, "data.op: must be one of"),
        ({"train.batch_size": "-1"}, "train.batch_size: must be >= 1"),
        ({"train.device": "tpu"}, "train.device"),
    ],
)
def test_bad_values_name_the_field(sets: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as e:
        apply_overrides(RunConfig(), sets)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_non_prime_p_is_fine_for_add() -> None:
    assert apply_overrides(RunConfig(), {"data.op": "add", "data.p": "15"}).data.p == 15


def test_toml_round_trip() -> None:
    import tomllib

    cfg = apply_overrides(RunConfig(preset="x"), {"optim.lr_ratio": "10", "data.split": "skewed"})
    assert from_dict(tomllib.loads(to_toml(cfg))) == cfg
