"""The demo's suites: every upload names one, as its backend's runner does, and the demo's
suite map claims every name (no upload is an unmapped row), from the real runner lists."""

from parity.demo.scenario.uploads import UPLOAD_SUITES, UPLOADS
from parity.demo.suites import DEMO_SUITES


def test_every_demo_upload_names_a_suite_the_map_claims():
    claimed = {
        (backend, name)
        for suite in DEMO_SUITES.values()
        for backend, name in suite["backends"].items()
        if isinstance(name, str)
    }
    for backend, specs in UPLOADS.items():
        assert set(UPLOAD_SUITES[backend]) == {label for label, _, _ in specs}
        for name in UPLOAD_SUITES[backend].values():
            assert (backend, name) in claimed, (backend, name)


def test_the_main_runner_is_one_suite_under_each_backends_script():
    names = DEMO_SUITES["run_tests"]["backends"]
    assert names["tpu"] == "test/tpu/run_tests.sh"
    assert names["neuron"] == "test/neuron/run_tests.sh"
    assert names["cpu"] == "test/run_tests.sh"
    excluded = DEMO_SUITES["torch_op_tests"]["backends"]["neuron"]
    assert excluded["excluded"] and "never" in excluded["reason"]
