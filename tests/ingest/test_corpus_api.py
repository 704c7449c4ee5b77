"""Every file of the shared JUnit corpus, uploaded through the API: well-formed ones store
MANIFEST's counts (or the reviewed exceptions' counts), malformed ones fail with a clear error
and store nothing."""

import pytest

from parity.models import Result, UploadStatus
from tests.ingest.corpus import corpus_files
from tests.shared_data import CORPUS_DIR

CORPUS = corpus_files()
PARAMS = [pytest.param(f, id=f.path) for f in CORPUS] or [
    pytest.param(
        None,
        marks=pytest.mark.skip(reason=f"the JUnit corpus is not at {CORPUS_DIR}"),
        id="corpus-missing",
    )
]


@pytest.mark.parametrize("corpus_file", PARAMS)
def test_corpus_file_ingests_with_expected_counts(api, ingest, corpus_file):
    response = ingest(corpus_file.absolute)

    assert response.status_code == 202, response.content
    upload = api.get(response.json()["url"]).json()
    if corpus_file.expected is None:
        assert upload["status"] == UploadStatus.FAILED
        assert upload["error"].startswith(corpus_file.absolute.name + ": ")
        assert len(upload["error"]) > len(corpus_file.absolute.name) + 10
        assert not Result.objects.exists()
        return
    assert upload["status"] == UploadStatus.DONE, upload["error"]
    expected = corpus_file.expected
    counts = upload["counts"]
    assert (counts["total"], counts["skipped"], counts["failed"], counts["error"]) == (
        expected.total,
        expected.skipped,
        expected.failed,
        expected.error,
    )
    assert Result.objects.filter(upload_id=upload["id"]).count() == expected.total
