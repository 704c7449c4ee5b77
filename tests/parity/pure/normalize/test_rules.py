"""parity.pure.normalize.rules: defaults, round trips and user-facing errors for project rules."""

import json

import pytest
import yaml

from parity.pure.normalize import (
    DEFAULT_RULES,
    Rewrite,
    RulesError,
    rules_from_dict,
    rules_to_dict,
    test_identity,
    validate_rules,
)
from tests.conftest import FIXTURES_DIR

FIXTURES = FIXTURES_DIR / "normalize"


def example() -> dict:
    return yaml.safe_load((FIXTURES / "rules_example.yaml").read_text(encoding="utf-8"))


def test_empty_data_gives_the_defaults() -> None:
    assert rules_from_dict({}) == DEFAULT_RULES
    assert validate_rules({}) == DEFAULT_RULES


def test_defaults_cover_pytorch_device_types() -> None:
    for token in ("cpu", "cuda", "xla", "mps", "meta", "lazy", "xpu", "hpu", "tpu", "neuron"):
        assert DEFAULT_RULES.class_suffixes[token.upper()] == token
    assert DEFAULT_RULES.class_suffixes["PRIVATEUSEONE"] == "privateuseone"
    assert set(DEFAULT_RULES.class_suffixes.values()) <= set(DEFAULT_RULES.device_tokens)


@pytest.mark.parametrize("data", [{}, "example"])
def test_round_trip_through_json(data: dict | str) -> None:
    rules = rules_from_dict(example() if data == "example" else data)
    dumped = json.loads(json.dumps(rules_to_dict(rules)))
    assert rules_from_dict(dumped) == rules
    assert rules_to_dict(rules_from_dict(dumped)) == dumped


def test_example_rules_apply() -> None:
    rules = rules_from_dict(example())
    assert rules.rewrites == (
        Rewrite(r"^test/test_xla_sharding_old\.py::", "test/spmd/test_xla_sharding.py::"),
    )
    mat_mul = test_identity(
        classname="test_mat_mul_precision.TestMatMulPrecision",
        name="test_high",
        file=None,
        folder_hint=None,
        rules=rules,
    )
    assert mat_mul.key == "test/test_mat_mul_precision.py::TestMatMulPrecision::test_high"
    renamed = test_identity(
        classname="BasicXlaShardingTest",
        name="test_xla_shards",
        file="/tmp/pytorch/xla/test/test_xla_sharding_old.py",
        folder_hint=None,
        rules=rules,
    )
    assert renamed.file == "test/spmd/test_xla_sharding.py"
    assert renamed.key == "test/spmd/test_xla_sharding.py::BasicXlaShardingTest::test_xla_shards"


def test_missing_keys_fall_back_to_defaults() -> None:
    rules = rules_from_dict({"module_paths": {"test": "python/test"}})
    assert rules.module_paths == {"test": "python/test"}
    assert rules.device_tokens == DEFAULT_RULES.device_tokens
    assert rules.class_suffixes == DEFAULT_RULES.class_suffixes
    assert rules.path_prefixes == DEFAULT_RULES.path_prefixes


def test_replacement_defaults_to_empty() -> None:
    rules = rules_from_dict({"rewrites": [{"pattern": r"\[.*\]$"}]})
    assert rules.rewrites == (Rewrite(r"\[.*\]$", ""),)


@pytest.mark.parametrize(
    ("data", "field", "says"),
    [
        ({"rewrites": [{"pattern": "([a-z", "replacement": ""}]}, "rewrites[0].pattern", "'([a-z'"),
        ({"rewrites": [{"pattern": "ok"}, {"pattern": "a)"}]}, "rewrites[1].pattern", "'a)'"),
        (
            {"rewrites": [{"pattern": "(a)", "replacement": r"\2"}]},
            "rewrites[0].replacement",
            "\\2",
        ),
        ({"rewrites": [{"pattern": ""}]}, "rewrites[0].pattern", "non-empty"),
        ({"rewrites": [{"pattern": "a", "with": "b"}]}, "rewrites[0].with", "unknown key"),
        ({"rewrites": ["a"]}, "rewrites[0]", "mapping"),
        ({"rewrites": "a"}, "rewrites", "list"),
        ({"rewrite": []}, "rewrite", "unknown key"),
        ({"device_tokens": "cpu"}, "device_tokens", "list of strings"),
        ({"device_tokens": ["cpu", 3]}, "device_tokens[1]", "string"),
        ({"device_tokens": ["CPU"]}, "device_tokens[0]", "lower-case"),
        ({"device_tokens": ["cpu_x"]}, "device_tokens[0]", "lower-case"),
        ({"device_tokens": ["cpu"]}, "class_suffixes['CUDA']", "not in device_tokens"),
        ({"class_suffixes": {"XLA": "xla2"}}, "class_suffixes['XLA']", "'xla2'"),
        ({"class_suffixes": {"X-LA": "xla"}}, "class_suffixes['X-LA']", "letters and digits"),
        ({"class_suffixes": ["XLA"]}, "class_suffixes", "mapping"),
        ({"path_prefixes": ["/"]}, "path_prefixes[0]", "every path"),
        ({"path_prefixes": ["/*/"]}, "path_prefixes[0]", "every path"),
        ({"path_prefixes": [None]}, "path_prefixes[0]", "string"),
        ({"module_paths": {"te st": "x"}}, "module_paths['te st']", "dotted module"),
        ({"module_paths": {"test": 1}}, "module_paths['test']", "strings"),
    ],
)
def test_bad_rules_name_the_field(data: dict, field: str, says: str) -> None:
    with pytest.raises(RulesError) as caught:
        validate_rules(data)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")
    assert says in str(caught.value)
    with pytest.raises(ValueError):  # RulesError is a ValueError, and rules_from_dict checks too
        rules_from_dict(data)


def test_not_a_mapping() -> None:
    with pytest.raises(RulesError, match="expected a mapping"):
        validate_rules(["device_tokens"])  # type: ignore[arg-type]
