"""The pytorch-xla demo's suite map (docs/suites.md), from its real runner scripts
(``../shared/data/pytorch-xla/backends.json``): what each backend's CI calls a suite, as the
demo's uploads name them (``parity.demo.scenario.uploads.UPLOAD_SUITES``)."""

from parity.demo.scenario.plan import UPSTREAM_SHARD

DEMO_SUITES = {
    # The main runner: one script per backend (GPU ran CPU's on a GPU runner).
    "run_tests": {
        "backends": {
            "cpu": "test/run_tests.sh",
            "gpu": "test/run_tests.sh",
            "tpu": "test/tpu/run_tests.sh",
            "neuron": "test/neuron/run_tests.sh",
        }
    },
    # PyTorch's own op tests run against XLA. TPU's runners never had them: its cell reads
    # "never ran". Neuron's script copies the function from CPU's and never calls it.
    "torch_op_tests": {
        "backends": {
            "cpu": UPSTREAM_SHARD,
            "gpu": UPSTREAM_SHARD,
            "neuron": {
                "excluded": True,
                "reason": "test/neuron/run_tests.sh defines run_torch_op_tests and never "
                "calls it (its 13 invocations are unreachable)",
            },
        }
    },
    # TPU's other scripts, one matrix job each in _tpu_ci.yml: Pallas kernels, training,
    # the expensive tests. No other backend has them.
    "tpu_scripts": {
        "backends": {"tpu": "test/tpu/other_scripts"},
    },
}
