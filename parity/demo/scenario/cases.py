"""The scenario's vocabulary: its backends and seed, and the cases runners report with their
outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field

SEED = "parity-demo-pytorch-xla-1"
BACKENDS = ("cpu", "gpu", "tpu", "neuron")
TENSOR_MISMATCH = (
    "Tensor-likes are not close!\n\nMismatched elements: 3 / 128 (2.3%)\n"
    "Greatest absolute difference: 0.0029296875 at index (5, 11) (up to 1e-05 allowed)\n"
    "Greatest relative difference: 0.0107421875 at index (5, 11) (up to 1.3e-06 allowed)"
)
SCALAR_MISMATCH = (
    "Scalars are not equal!\n\nExpected 1 but got 2.\nAbsolute difference: 1\n"
    "Relative difference: 1.0"
)
OUT_OF_MEMORY = (
    "Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: "
    "Attempting to allocate 2.00G. That was not possible. There are 1.41G free."
)


@dataclass(frozen=True)
class Case:
    """One test as a runner reports it; ``dialect`` picks the XML shape."""

    file: str  # repository path; upstream files keep their pytorch/pytorch path
    cls: str
    name: str
    dialect: str  # unittest | run_tests | absl | unittest_module | script | missing | upstream
    shard: str = field(compare=False)  # differs per backend; the test is the same


@dataclass(frozen=True)
class Outcome:
    status: str  # passed | skipped | failed | error
    message: str = ""
    error_type: str = ""
    where: str = ""  # "file:line" of the skip, for pytest-style wordings


PASSED = Outcome("passed")
TENSOR_FAILURE = Outcome("failed", TENSOR_MISMATCH, "AssertionError")
SCALAR_FAILURE = Outcome("failed", SCALAR_MISMATCH, "AssertionError")
OOM_ERROR = Outcome("error", OUT_OF_MEMORY, "RuntimeError")
