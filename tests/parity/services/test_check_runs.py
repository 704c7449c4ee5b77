"""Check runs through the real pipeline: uploads through the API, eager Celery running the
ingest, the recompute and the check-run task, and a local fake GitHub that checks the App's JWT
with the public key of a key pair made here (``tests/fake_github_app.py``)."""

import json
import logging

import pytest

from parity.models import Project
from parity.services.suites import suite_save
from parity.trackers.github_app import tokens_forget
from tests.fake_github_app import FakeGitHubApp, key_pair
from tests.parity.conftest import commit_of, run_xml

A = "test/a.py::TestA::test_a"
B = "test/a.py::TestA::test_b"
REFERENCE = {A: "passed", B: "passed"}
TPU_SKIPS_B = {A: "passed", B: ("skipped", "not on tpu yet")}
APP_ID = "1234"


@pytest.fixture(scope="module")
def keys():
    return key_pair()


@pytest.fixture
def github(settings, keys, xla):
    """The App configured with the private key; the fake knows the public one and has the App
    installed on pytorch/xla, the repository of the project's issue URL template."""
    private, public = keys
    Project.objects.filter(pk=xla.pk).update(
        issue_url_template="https://github.com/pytorch/xla/issues/{number}"
    )
    tokens_forget()
    with FakeGitHubApp(app_id=APP_ID, public_key=public, repos={"pytorch/xla"}) as fake:
        settings.PARITY_TRACKER_API_URLS = {"github.com": fake.api_url}
        settings.PARITY_GITHUB_APP_ID = APP_ID
        settings.PARITY_GITHUB_APP_PRIVATE_KEY = private
        yield fake
    tokens_forget()


def posts(fake: FakeGitHubApp) -> int:
    return sum(1 for method, path in fake.requests if path.endswith("/check-runs"))


def test_a_complete_run_gets_a_check_run_with_its_verdict(github, upload_run):
    reference = upload_run("cpu", REFERENCE, day="2026-04-01")
    run = upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert github.refused == []
    [(repo, first), (repo2, check)] = github.check_runs
    assert (repo, repo2) == ("pytorch/xla", "pytorch/xla")
    assert (first["name"], first["conclusion"]) == ("parity: cpu", "success")
    assert first["details_url"] == f"http://127.0.0.1:8000/p/pytorch-xla/runs/{reference}/"
    assert check["name"] == "parity: tpu"
    assert check["head_sha"] == commit_of("2026-04-01", "master")
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert check["details_url"] == f"http://127.0.0.1:8000/p/pytorch-xla/runs/{run}/"
    output = check["output"]
    assert output["title"] == "1 untracked gap"
    assert "| untracked | 1 |" in output["summary"]
    assert f"(http://127.0.0.1:8000/p/pytorch-xla/runs/{run}/)" in output["summary"]
    assert f"- `{B}` skipped: not on tpu yet" in output["text"]
    # One installation token served both runs: asked for once, then read from the cache.
    assert github.token_requests() == 1


def test_a_token_near_its_expiry_is_renewed(github, upload_run):
    github.token_seconds = 4 * 60  # within TOKEN_RENEW_SECONDS of expiring once issued
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", REFERENCE, day="2026-04-01")
    assert (github.token_requests(), len(github.check_runs)) == (2, 2)


def test_a_key_that_is_no_pem_is_logged(github, upload_run, settings, caplog):
    settings.PARITY_GITHUB_APP_PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nnot a key"
    with caplog.at_level(logging.WARNING, logger="parity.tasks"):
        upload_run("cpu", REFERENCE, day="2026-04-01")
    assert github.requests == []
    assert "the App's private key is no RSA key in PEM" in caplog.text


def test_a_pull_request_run_gets_one_too(github, upload_run):
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", REFERENCE, day="2026-04-01")
    pr_commit = "f" * 40
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-02", branch="fork:fix-b", commit=pr_commit)
    repo, check = github.check_runs[-1]
    assert (check["head_sha"], check["conclusion"]) == (pr_commit, "failure")
    assert B in check["output"]["text"]
    upload_run("tpu", REFERENCE, day="2026-04-03", branch="fork:fix-b", commit="e" * 40)
    assert github.check_runs[-1][1]["conclusion"] == "success"
    assert github.check_runs[-1][1]["output"]["title"] == "No untracked gaps"


def test_a_run_whose_file_crashed_is_neutral(github, ingest, upload_run, eager_errors_propagate):
    upload_run("cpu", REFERENCE, day="2026-04-01")
    manifest = [
        {"file": "test/a.py", "exit_code": 0, "report": True, "tests": 2},
        {"file": "test/c.py", "signal": "SIGSEGV"},
    ]
    response = ingest(
        ("r.xml", run_xml(REFERENCE)),
        backend="tpu",
        commit=commit_of("2026-04-01"),
        branch="master",
        run="tpu-crashed",
        complete="true",
        timestamp="2026-04-01T12:00:00Z",
        run_manifest=json.dumps({"files": manifest}),
    )
    assert response.status_code == 202, response.content
    check = github.check_runs[-1][1]
    assert check["conclusion"] == "neutral"
    assert check["output"]["title"].startswith("Rerun 1 shard")
    assert "- `test/c.py` crashed SIGSEGV" in check["output"]["text"]


def test_github_erring_is_retried(github, upload_run):
    github.script(502)
    upload_run("cpu", REFERENCE, day="2026-04-01")
    assert posts(github) == 2  # the 502, then the 201
    [(_, check)] = github.check_runs
    assert check["conclusion"] == "success"


def test_github_erring_every_time_is_given_up_and_logged(github, upload_run, settings, caplog):
    settings.PARITY_CHECK_RUN_MAX_ATTEMPTS = 3
    github.script(502, 503, 502)
    with caplog.at_level(logging.WARNING, logger="parity.tasks"):
        run = upload_run("cpu", REFERENCE, day="2026-04-01")
    assert (posts(github), github.check_runs) == (3, [])
    assert f"check run of run {run} not posted after 3 attempts" in caplog.text


def test_a_repository_without_the_app_is_logged_and_the_upload_succeeds(
    github, upload_run, xla, caplog
):
    Project.objects.filter(pk=xla.pk).update(
        issue_url_template="https://github.com/someone/else/issues/{number}"
    )
    with caplog.at_level(logging.WARNING, logger="parity.tasks"):
        upload_run("cpu", REFERENCE, day="2026-04-01")  # asserts the upload was accepted
    assert github.check_runs == []
    assert "the App is not installed on someone/else: not found (404)" in caplog.text


def test_a_wrong_key_is_refused_by_github(github, upload_run, settings, caplog):
    settings.PARITY_GITHUB_APP_PRIVATE_KEY = key_pair()[0]  # not the App's
    with caplog.at_level(logging.WARNING, logger="parity.tasks"):
        upload_run("cpu", REFERENCE, day="2026-04-01")
    assert github.check_runs == []
    assert github.refused and github.refused[0].startswith("JWT: Signature verification")
    assert "the token was refused (401)" in caplog.text


def test_off_without_the_app_or_a_github_repository(github, upload_run, settings, xla):
    settings.PARITY_GITHUB_APP_ID = ""
    upload_run("cpu", REFERENCE, day="2026-04-01")
    settings.PARITY_GITHUB_APP_ID = APP_ID
    Project.objects.filter(pk=xla.pk).update(
        issue_url_template="https://gitlab.example.com/xla/issues/{number}"
    )
    upload_run("tpu", REFERENCE, day="2026-04-01")
    assert github.requests == []


def test_a_probe_run_is_neutral_whatever_it_opens(
    github, ingest, upload_run, eager_errors_propagate
):
    upload_run("cpu", REFERENCE, day="2026-04-01")
    reply = ingest(
        ("probe.xml", run_xml(TPU_SKIPS_B)),
        backend="tpu",
        commit=commit_of("2026-04-02", "master"),
        branch="master",
        run="2026-04-02-probe",
        complete="true",
        timestamp="2026-04-02T12:00:00Z",
        probe="true",
    )
    assert reply.status_code in (200, 202), reply.content
    check = github.check_runs[-1][1]
    assert (check["name"], check["conclusion"]) == ("parity: tpu", "neutral")
    assert check["output"]["title"] == "Probe run: not a gate"


@pytest.mark.parametrize("mapped", [True, False], ids=["mapped", "unmapped"])
def test_an_informing_suites_run_is_neutral_though_it_opens_gaps(
    github, ingest, upload_run, eager_errors_propagate, xla, mapped
):
    """A mapped suite with no finished run yet is informing (docs/suites.md): its run's check
    reports the gaps it opens, neutral, instead of failing the pull request. A suite the
    project never mapped (CI named it: ``GITHUB_JOB``...) gates as before: the check fails."""
    if mapped:
        suite_save(project=xla, name="tpu-tests")
    upload_run("cpu", REFERENCE, day="2026-04-01")
    reply = ingest(
        ("tpu.xml", run_xml(TPU_SKIPS_B)),
        backend="tpu",
        commit=commit_of("2026-04-02", "master"),
        branch="master",
        run="2026-04-02-tpu",
        complete="true",
        timestamp="2026-04-02T12:00:00Z",
        suite="tpu-tests",
    )
    assert reply.status_code in (200, 202), reply.content
    check = github.check_runs[-1][1]
    if mapped:
        assert (check["name"], check["conclusion"]) == ("parity: tpu", "neutral")
        assert check["output"]["title"].startswith("Reports only (suite tpu-tests informing)")
    else:
        assert (check["name"], check["conclusion"]) == ("parity: tpu", "failure")
