"""The skip-reason classifier: real PyTorch/XLA skip messages (``../shared``, skipped with the
reason when absent) and a few inline ones, so something runs in any clone."""

import csv
from collections import Counter

import pytest

from parity.models import Disposition
from parity.pure.normalize import canonical_reason
from parity.pure.skip_rules import (
    DISPOSITIONS,
    NO_REASON,
    SkipRules,
    SkipRulesError,
    skip_rules_default,
    skip_rules_dump,
    skip_rules_parse,
)
from tests.shared_data import PYTORCH_XLA_DIR, needs_pytorch_xla

DEFAULT = skip_rules_default()

# Messages written for this test in the manner of real ones, with the category each needs.
INLINE = {
    "This test only works on TPU.": "not on this hardware",
    "Requires PJRT_DEVICE set to `CUDA`.": "not on this hardware",
    "Multiple devices required for sharding": "needs more devices",
    "Need at least 8 devices": "needs more devices",
    "Not supported on NEURON": "not implemented on the backend",
    "aten::foo is not implemented for the XLA backend": "not implemented on the backend",
    "Tensor-likes are not close! (tolerance too tight on TPU)": "numerics or tolerance",
    "runs out of HBM: OOM on v4": "memory",
    "flaky on CI, see #123": "flaky",
    "Crash on TPU v3": "crash",
    "too slow under XLA_USE_EAGER_DEBUG_MODE": "too slow",
    "Works only when functionalization is disabled.": "configuration or environment",
    "https://github.com/pytorch/xla/issues/9999": "known bug",
    "expected failure: XLA lowers it wrong": "expected failure",
}


@pytest.mark.parametrize(("message", "category"), INLINE.items())
def test_default_rules_classify_typical_messages(message, category):
    assert DEFAULT.classify(message=message).category == category


def test_a_skip_without_a_reason_is_no_reason_given_whatever_the_rules():
    assert DEFAULT.classify(message="") == NO_REASON
    assert SkipRules([]).classify(message="  ") == NO_REASON
    assert NO_REASON.disposition == "unknown"


def test_first_match_wins_and_an_unmatched_message_is_uncategorized():
    rules = skip_rules_parse(
        """
        categories: {hardware: intended, devices: infra}
        rules:
          - {category: devices, message: 'devices'}
          - {category: hardware, message: 'tpu'}
        """
    )
    found = rules.classify(message="TPU needs 4 devices")
    assert (found.category, found.disposition, found.rule) == ("devices", "infra", 0)
    assert rules.classify(message="only on TPU").category == "hardware"
    nothing = rules.classify(message="something else")
    assert (nothing.category, nothing.disposition, nothing.rule) == ("", "unknown", None)


def test_every_condition_must_match_and_unknown_parts_never_do():
    rules = skip_rules_parse(
        """
        rules:
          - category: pallas on tpu only
            disposition: intended
            file: '^test/test_pallas'
            class: 'Pallas'
            name: '^test_flash'
          - {category: anything in pallas, disposition: needs_work, file: 'pallas'}
        """
    )
    both = rules.classify(file="test/test_pallas.py", klass="PallasTest", name="test_flash_x")
    assert both.category == "pallas on tpu only"
    # A different name fails the first rule; the second still holds.
    other = rules.classify(file="test/test_pallas.py", klass="PallasTest", name="test_other")
    assert other.category == "anything in pallas"
    # A reason alone has a message and no file: file rules cannot match it.
    assert rules.classify(message="pallas kernel").category == ""
    # The default set's file rule: the queue's never-run TPU files.
    assert DEFAULT.classify(file="test/test_pallas.py").category == "not on this hardware"
    assert DEFAULT.classify(file="test/test_ops.py").category == ""


def test_the_version_changes_with_any_rule_or_their_order_and_only_then():
    text = (
        "rules: [{category: a, disposition: infra, message: x},"
        " {category: b, disposition: intended, message: y}]"
    )
    rules = skip_rules_parse(text)
    assert skip_rules_parse(text).version == rules.version
    swapped = SkipRules(list(reversed(rules.rules)))
    edited = skip_rules_parse(text.replace("message: y", "message: yy"))
    assert len({rules.version, swapped.version, edited.version}) == 3
    # Dumped and read back: the same rules, the same version.
    assert skip_rules_parse(skip_rules_dump(DEFAULT)).version == DEFAULT.version


def test_a_list_of_patterns_is_any_of_them():
    rules = skip_rules_parse("rules: [{category: c, disposition: infra, message: ['^a$', 'b+c']}]")
    assert rules.rules[0].message == "(?:^a$)|(?:b+c)"
    assert rules.classify(message="a").category == "c"
    assert rules.classify(message="xbbcx").category == "c"
    assert rules.classify(message="ab").category == ""


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("rules: [{category: c, disposition: infra, message: '('}]", "rule 1: message is not"),
        ("rules: [{category: c, disposition: maybe, message: x}]", "disposition must be one of"),
        ("rules: [{category: c, disposition: infra}]", "needs a message, file, class or name"),
        ("rules: [{disposition: infra, message: x}]", "needs a category"),
        ("rules: [{category: c, disposition: infra, mesage: x}]", "unknown field 'mesage'"),
        ("rules: {category: c}", "a list of 'rules'"),
        ("rules: [", "not YAML"),
    ],
)
def test_rules_that_cannot_be_used_say_why(text, error):
    with pytest.raises(SkipRulesError, match=error.replace("(", r"\(")):
        skip_rules_parse(text)


def test_the_models_dispositions_are_the_classifiers():
    assert set(Disposition.values) == set(DISPOSITIONS)


def skip_messages() -> list[str]:
    """The distinct skip messages of PyTorch/XLA's tests, canonical as ingest stores them."""
    with (PYTORCH_XLA_DIR / "skips.tsv").open(newline="", encoding="utf-8") as f:
        raw = {row["reason"] for row in csv.DictReader(f, delimiter="\t")}
    return sorted({(canonical_reason(m).text if canonical_reason(m) else "") for m in raw})


@needs_pytorch_xla
def test_default_rules_leave_few_of_pytorch_xlas_skip_messages_uncategorized():
    messages = skip_messages()
    found = Counter(DEFAULT.classify(message=m).category for m in messages)
    assert len(messages) > 100
    # AMD's hand-run classifier got 330 rows down to 10; these rules leave 2 of 106 messages.
    assert found[""] <= 3, [m for m in messages if not DEFAULT.classify(message=m).category]
    # Each category the brief names catches some real message.
    for category in (
        "not on this hardware",
        "not implemented on the backend",
        "numerics or tolerance",
        "needs more devices",
        "memory",
        "flaky",
        "CI infrastructure",
        "no reason given",
    ):
        assert found[category] > 0, category


@needs_pytorch_xla
@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("This test only works on TPUv4+.", "not on this hardware"),
        ("Requires PJRT_DEVICE set to `TPU`.", "not on this hardware"),
        ("This kernel requires a Mosaic feature not available for TPU v4 or earlier.",
         "not on this hardware"),
        ("Multiple devices required for tupled partition spec", "needs more devices"),
        ("Need ≥2 devices", "needs more devices"),
        ("Need at least {max(mesh_shape)} devices, got {device_count}", "needs more devices"),
        ("UNIMPLEMENTED: ReduceScatter is not implemented on CPU.",
         "not implemented on the backend"),
        ("Not supported on NEURON", "not implemented on the backend"),
        ("the behavior of batch_norm autocast on TPU is different from others",
         "numerics or tolerance"),
        ("TPU v5e has small VMEM. It will run into VMEM OOM. Skip the test.", "memory"),
        ("Crash on TPU v2", "crash"),
        ("TestPut is too slow on TPU. Skipped", "too slow"),
        ("temporarily skipping this test until CI issue is resolved", "CI infrastructure"),
        ("Works only when functionalization is disabled. Reason: metrics differ.",
         "configuration or environment"),
        ("CHKPT_PATH must be set for multihost checkpoint", "configuration or environment"),
        ("This test fails only on GPU with 03/30 TF-pin update "
         "(https://github.com/pytorch/xla/pull/4840)", "known bug"),
        ("https://github.com/pytorch/xla/issues/9637", "known bug"),
    ],
)  # fmt: skip
def test_real_skip_messages_get_their_category(message, category):
    assert message in skip_messages(), "read from ../shared, not made up"
    assert DEFAULT.classify(message=message).category == category


# The device skips of the common frameworks' test helpers, as their code words them (each
# message is the helper's text with a device filled in), with the category each needs.
FRAMEWORK_DEVICE_SKIPS = [
    # JAX, jax/_src/test_util.py: skip_on_devices and run_on_devices (their skip_reason default)
    # and a custom skip_reason of JAX's own suite.
    ("Skipped on devices with tags: tpu", "not implemented on the backend"),
    ("Skipped on devices with tags: gpu, tpu", "not implemented on the backend"),
    ("Skipped unless running on devices with tags: gpu", "not on this hardware"),
    ("pow grad imprecise on tpu", "numerics or tolerance"),
    # JAX before skip_reason: "{test_name} not supported on device with tags {device_tags}."
    ("test_scan not supported on device with tags {'tpu'}.", "not implemented on the backend"),
    # PyTorch, torch/testing/_internal/common_device_type.py: onlyOn (onlyCUDA, onlyCPU...),
    # with one device type or several; skipCUDAIf and skipIfRocm's default message.
    ("Only runs on cuda", "not on this hardware"),
    ("Only runs on ('cuda', 'xpu')", "not on this hardware"),
    ("test doesn't currently work on the ROCm stack", "not implemented on the backend"),
    ("skipIfRocm: test doesn't currently work on the ROCm stack",
     "not implemented on the backend"),
    ("skipCUDAIfRocm: test doesn't currently work on the ROCm stack",
     "not implemented on the backend"),
    ("test doesn't currently work on the CUDA stack", "not implemented on the backend"),
    ("no MAGMA library detected", "configuration or environment"),
    ("PyTorch compiled without Lapack", "configuration or environment"),
    # TensorFlow, tensorflow/python/framework/test_util.py: run_gpu_only, run_cuda_only,
    # run_gpu_or_tpu; and a Pallas test's "Not supported on GPU."
    ("Test requires GPU", "not on this hardware"),
    ("Test requires CUDA GPU", "not on this hardware"),
    ("Test requires GPU or TPU", "not on this hardware"),
    ("Not supported on GPU.", "not implemented on the backend"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "category"), FRAMEWORK_DEVICE_SKIPS)
def test_the_frameworks_device_skips_get_their_category(message, category):
    assert DEFAULT.classify(message=message).category == category
