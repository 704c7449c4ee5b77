"""Identity across backends, and re-ingest after a rule change."""

from django.core.management import call_command

from parity.models import Result, TestCase, Upload
from tests.junit_builder import Case, junit_xml


def _device_variant(device: str, *, suffix: str) -> bytes:
    return junit_xml(
        Case(
            f"TestViewOps{suffix}", f"test_view_copy_{device}_float32", file="test/test_view_ops.py"
        ),
        Case(f"TestViewOps{suffix}", f"test_unsqueeze_{device}", file="test/test_view_ops.py"),
    )


def test_device_variants_on_four_backends_are_one_test_with_four_results(ingest):
    ingest(("cpu.xml", _device_variant("cpu", suffix="CPU")), backend="cpu")
    ingest(("gpu.xml", _device_variant("cuda", suffix="CUDA")), backend="gpu")
    ingest(("tpu.xml", _device_variant("xla", suffix="XLA")), backend="tpu")
    ingest(("neuron.xml", _device_variant("xla", suffix="XLA")), backend="neuron")

    keys = sorted(TestCase.objects.values_list("key", flat=True))
    assert keys == [
        "test/test_view_ops.py::TestViewOps::test_unsqueeze",
        "test/test_view_ops.py::TestViewOps::test_view_copy_float32",
    ]
    test = TestCase.objects.get(key__endswith="test_view_copy_float32")
    backends = Result.objects.filter(test=test).values_list("run__backend__name", flat=True)
    assert sorted(backends) == ["cpu", "gpu", "neuron", "tpu"]


def test_device_words_that_are_part_of_a_name_stay_apart(ingest):
    xml = junit_xml(
        Case(
            "DebuggingSpmdTest",
            "test_single_host_replicated_tpu",
            file="test/spmd/test_debugging.py",
        ),
        Case(
            "DebuggingSpmdTest",
            "test_single_host_replicated_cpu",
            file="test/spmd/test_debugging.py",
        ),
        Case("TestAutocastTPU", "test_autocast_linear", file="test/test_autocast.py"),
    )
    ingest(("spmd.xml", xml))

    assert sorted(TestCase.objects.values_list("key", flat=True)) == [
        "test/spmd/test_debugging.py::DebuggingSpmdTest::test_single_host_replicated_cpu",
        "test/spmd/test_debugging.py::DebuggingSpmdTest::test_single_host_replicated_tpu",
        "test/test_autocast.py::TestAutocastTPU::test_autocast_linear",
    ]


def test_reingest_after_a_rule_change_moves_results_to_new_ids(project, ingest):
    old_file = junit_xml(
        Case("TestSharding", "test_mesh", file="test/test_xla_sharding_old.py"),
        Case(
            "TestSharding",
            "test_skip",
            "skipped",
            "Not supported on TPU",
            file="test/test_xla_sharding_old.py",
        ),
    )
    ingest(("shard.xml", old_file), backend="tpu", commit="1" * 40)
    ingest(("shard.xml", old_file), backend="cpu", commit="1" * 40)
    counts_before = sorted(Upload.objects.values_list("counts", flat=True), key=str)
    results_before = Result.objects.count()

    project.normalization_rules = {
        "rewrites": [
            {
                "pattern": r"^test/test_xla_sharding_old\.py::",
                "replacement": "test/spmd/test_xla_sharding.py::",
            }
        ]
    }
    project.save()
    call_command("reingest", project.slug)

    assert Result.objects.count() == results_before == 4
    assert sorted(Upload.objects.values_list("counts", flat=True), key=str) == counts_before
    assert sorted(TestCase.objects.values_list("key", flat=True)) == [
        "test/spmd/test_xla_sharding.py::TestSharding::test_mesh",
        "test/spmd/test_xla_sharding.py::TestSharding::test_skip",
    ]
    assert not Result.objects.exclude(test__in=TestCase.objects.all()).exists()


def test_reingest_since_leaves_older_runs_alone(project, ingest):
    xml = junit_xml(Case("TestOld", "test_a", file="test/test_old.py"))
    ingest(("a.xml", xml), commit="1" * 40, timestamp="2026-01-01T12:00:00Z")
    ingest(("a.xml", xml), commit="2" * 40, timestamp="2026-03-01T12:00:00Z")
    project.normalization_rules = {"rewrites": [{"pattern": "test_old", "replacement": "test_new"}]}
    project.save()

    call_command("reingest", project.slug, "--since", "2026-02-01")

    by_day = dict(Result.objects.values_list("run__started_at__month", "test__key"))
    assert by_day == {
        1: "test/test_old.py::TestOld::test_a",
        3: "test/test_new.py::TestOld::test_a",
    }
