"""The COPY-based writer stores text exactly, collapses reruns and rolls back on bad input."""

from parity.models import Outcome, Result
from tests.junit_builder import Case, junit_xml


def test_messages_with_copy_special_characters_are_stored_exactly(ingest):
    message = "C:\\temp\\x\tcolumn two\nsecond line \\N not null"
    ingest(("odd.xml", junit_xml(Case("TestOdd", "test_text", "skipped", message, file="t.py"))))

    assert Result.objects.get().message == message


def test_a_rerun_in_one_upload_counts_once_with_its_last_outcome(api, ingest):
    xml = junit_xml(
        Case("TestFlaky", "test_net", "failed", "ConnectionError", file="test/test_net.py"),
        Case("TestFlaky", "test_net", "passed", file="test/test_net.py"),
    )

    body = ingest(("flaky.xml", xml)).json()

    assert api.get(body["url"]).json()["counts"]["total"] == 1
    assert list(Result.objects.values_list("outcome", flat=True)) == [Outcome.PASSED]
