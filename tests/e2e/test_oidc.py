"""CI without a long-lived secret, on the live stack: the CI client with ``--oidc`` gets an ID
token from a fake of GitHub's token endpoint (signed by a local fake issuer the stack's
processes trust), exchanges it for a short-lived upload token, uploads and waits for the
ingest; a token the trust rule does not cover is refused with its reason, and a fork's pull
request (no token) falls back to PARITY_TOKEN, saying so."""

import json
import time
import urllib.error
import urllib.request

import pytest

from parity.models import Upload, UploadToken
from parity.oidc.exchange import trust_rule_create
from parity.services.projects import upload_token_create
from tests.e2e.conftest import stack_trusting
from tests.junit_builder import Case, junit_xml
from tests.oidc_issuer import FakeIssuer
from tests.parity.clients.conftest import clean_environment, client_run, python38

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def issuer():
    with FakeIssuer() as fake:
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, issuer):
    """This module's stack (the e2e ``live`` fixture serves it): it trusts the fake issuer."""
    yield from stack_trusting(tmp_path_factory, issuer)


@pytest.fixture
def github(issuer):
    """What the fake GitHub's tokens claim this test (over pytorch/xla on main)."""
    issuer.github_claims = {}
    yield issuer
    issuer.github_claims = {}


@pytest.fixture
def reports(tmp_path):
    folder = tmp_path / "test-reports"
    folder.mkdir()
    cases = [Case("TestOps", f"test_{n}", file="test/test_ops.py") for n in range(3)]
    (folder / "TEST-ops.xml").write_bytes(junit_xml(*cases, Case("TestOps", "test_x", "skipped")))
    return folder


def oidc_upload(live, project, github, reports, *args, python=None, **env):
    settings = clean_environment(PARITY_URL=live.base_url, PARITY_PROJECT=project.slug)
    settings.update(env)
    argv = ["upload", str(reports), "--commit", "c" * 40, "--oidc", "--wait", *args]
    return client_run(*argv, env=settings, **({"python": python} if python else {}))


def test_the_client_uploads_with_an_oidc_token_and_it_is_ingested(live, project, github, reports):
    rule = trust_rule_create(
        project=project, issuer=github.url, repository="pytorch/xla", ref="refs/heads/main"
    )

    done = oidc_upload(
        live, project, github, reports, "--backend", "tpu", python=python38(), **github.github_env()
    )

    assert done.returncode == 0, done.stderr
    assert f"parity: OIDC: trust rule {rule.pk} of pytorch-xla matched" in done.stderr
    assert github.audiences_requested[-1] == "parity"
    upload = Upload.objects.get()
    assert (upload.status, upload.run.backend.name) == ("done", "tpu")
    assert upload.counts["total"] == 4
    assert upload.run.project == project
    live.assert_worker_alive()


@pytest.mark.parametrize(
    ("claims", "args", "reason"),
    [
        ({"repository": "attacker/xla"}, [], "repository 'attacker/xla' does not match"),
        ({"ref": "refs/heads/feature"}, [], "ref 'refs/heads/feature' does not match"),
        ({}, ["--oidc-audience", "other"], "The token's audience (aud) 'other' is not 'parity'"),
        ({"iss": "https://evil.example.org"}, [], "issuer (iss) 'https://evil.example.org'"),
    ],
    ids=["repository", "ref", "audience", "issuer"],
)
def test_a_token_the_rules_do_not_cover_is_refused_with_its_reason(
    live, project, github, reports, claims, args, reason
):
    trust_rule_create(
        project=project, issuer=github.url, repository="pytorch/xla", ref="refs/heads/main"
    )
    github.github_claims = claims

    done = oidc_upload(
        live, project, github, reports, "--backend", "tpu", *args, **github.github_env()
    )

    assert done.returncode == 3, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("parity: the server refused the OIDC token (HTTP 401: ")
    assert reason in last
    assert not Upload.objects.exists()


def test_a_backend_outside_the_rule_is_refused_naming_it(live, project, github, reports):
    trust_rule_create(
        project=project, issuer=github.url, repository="pytorch/xla", backends=["tpu"]
    )

    done = oidc_upload(live, project, github, reports, "--backend", "gpu", **github.github_env())

    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "parity: the token may not do this (HTTP 403: This token may upload to backend(s) tpu "
        "only, not 'gpu' (its trust rule's backends).)"
    )
    assert not Upload.objects.exists()


def test_a_forks_pull_request_falls_back_to_its_token_and_says_so(live, project, github, reports):
    token = upload_token_create(project=project)

    done = oidc_upload(live, project, github, reports, "--backend", "cpu", PARITY_TOKEN=token)

    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "--oidc" in line]
    assert notes == [
        "parity: --oidc: no OIDC token here: ACTIONS_ID_TOKEN_REQUEST_URL is not set (GitHub "
        "gives no OIDC token to pull requests from forks, nor to a job without 'permissions: "
        "id-token: write'); using PARITY_TOKEN"
    ]
    assert Upload.objects.get().status == "done"


BAD_TOKENS = {
    "expired": (
        lambda fake: fake.token(exp=int(time.time()) - 600),
        "The token expired (exp): request a fresh one.",
    ),
    "wrong-audience": (
        lambda fake: fake.token(aud="elsewhere"),
        "The token's audience (aud) 'elsewhere' is not 'parity' (PARITY_OIDC_AUDIENCE): "
        "request the token with that audience.",
    ),
    "bad-signature": (
        lambda fake: fake.token(key=FakeIssuer().keys["rsa-1"][0]),
        "The token's signature does not verify with {url}'s key.",
    ),
    "alg-none": (
        lambda fake: fake.unsigned_token(),
        "The token's alg 'none' is not allowed: sign it with RS256 or ES256.",
    ),
    "unknown-kid": (
        lambda fake: fake.token(kid="never-published"),
        "The issuer {url} has no signing key with kid 'never-published'.",
    ),
    "wrong-repository": (
        lambda fake: fake.token(repository="attacker/xla"),
        "No trust rule of project 'pytorch-xla' matches this token "
        "(rule {rule}: repository 'attacker/xla' does not match).",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_TOKENS))
def test_each_bad_token_is_refused_by_the_stack_with_its_reason(live, project, github, kind):
    rule = trust_rule_create(project=project, issuer=github.url, repository="pytorch/xla")
    make, reason = BAD_TOKENS[kind]

    status, body = exchange_over_http(live, make(github))

    assert (status, body) == (401, {"detail": reason.format(url=github.url, rule=rule.pk)})
    assert not UploadToken.objects.exists()


def test_a_project_without_rules_is_refused_by_the_stack(live, project, github):
    status, body = exchange_over_http(live, github.token())

    assert status == 401
    assert body["detail"].startswith("Project 'pytorch-xla' has no trust rule")


def exchange_over_http(live, token: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{live.base_url}/api/v1/oidc/exchange/",
        data=json.dumps({"project": "pytorch-xla"}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
