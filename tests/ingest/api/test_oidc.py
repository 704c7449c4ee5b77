"""CI without a long-lived secret: OIDC ID tokens of a local fake issuer (a real HTTP server on
127.0.0.1 serving its JWKS) exchanged at POST /api/v1/oidc/exchange/ for a short-lived upload
token, which then uploads, reads and completes runs like any upload token. Every refusal says
which check or claim failed."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from parity.models import Upload, UploadToken
from parity.oidc.exchange import trust_rule_create, trust_rule_delete
from parity.oidc.issuers import KEYS
from tests.junit_builder import Case, junit_xml
from tests.oidc_issuer import FakeIssuer
from tests.uploads import post_upload

EXCHANGE = "/api/v1/oidc/exchange/"
XML = ("results.xml", junit_xml(Case("TestA", "test_one"), Case("TestA", "test_two", "skipped")))


@pytest.fixture(scope="module")
def issuer():
    with FakeIssuer() as fake:
        yield fake


@pytest.fixture
def oidc(settings, issuer):
    """The server trusts the fake issuer; no keys are held from an earlier test."""
    settings.PARITY_OIDC_ISSUERS = [issuer.url]
    settings.PARITY_OIDC_JWKS_REFETCH_SECONDS = 60
    KEYS.clear()
    yield issuer
    KEYS.clear()


@pytest.fixture
def rule(project, oidc):
    return trust_rule_create(
        project=project,
        issuer=oidc.url,
        repository="pytorch/xla",
        repository_id="123456",
        ref="refs/heads/*",
        workflow="CI",
    )


def exchange(token: str, project: str = "pytorch-xla"):
    client = APIClient()
    return client.post(
        EXCHANGE, {"project": project}, format="json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def refused(response, status: int = 401) -> str:
    assert response.status_code == status, response.content
    return response.json()["detail"]


def uploader(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


# --- A good token ----------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_a_good_token_exchanges_for_an_upload_token_that_uploads_and_ingests(
    rule, oidc, alg, django_capture_on_commit_callbacks, eager_errors_propagate
):
    response = exchange(oidc.token(alg=alg))

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["project"], body["backends"], body["rule"]) == ("pytorch-xla", [], rule.pk)
    token = UploadToken.objects.get(prefix=body["token"][:8])
    lifetime = token.expires_at - timezone.now()
    assert timedelta(minutes=59) < lifetime <= timedelta(hours=1)
    assert token.trust_rule == rule and token.label == "oidc pytorch/xla refs/heads/main CI"
    api = uploader(body["token"])
    with django_capture_on_commit_callbacks(execute=True):
        upload = post_upload(api, XML, backend="tpu", complete="true")
    assert upload.status_code == 202, upload.content
    detail = api.get(upload.json()["url"]).json()
    assert detail["status"] == "done", detail["error"]
    assert detail["counts"]["total"] == 2
    assert api.get("/api/v1/projects/pytorch-xla/parity/").status_code == 200


def test_the_ref_glob_takes_one_segment_and_double_star_crosses_them(rule, oidc):
    assert exchange(oidc.token(ref="refs/heads/release")).status_code == 201
    assert "ref 'refs/heads/a/b' does not match" in refused(
        exchange(oidc.token(ref="refs/heads/a/b"))
    )
    assert "ref 'refs/pull/7/merge'" in refused(exchange(oidc.token(ref="refs/pull/7/merge")))
    rule.ref = "refs/heads/**"
    rule.save()
    assert exchange(oidc.token(ref="refs/heads/a/b")).status_code == 201


def test_the_repository_is_compared_without_case(rule, oidc):
    assert exchange(oidc.token(repository="PyTorch/XLA")).status_code == 201


def test_an_expired_token_within_the_leeway_still_exchanges(rule, oidc):
    assert exchange(oidc.token(exp=int(time.time()) - 30)).status_code == 201


# --- Refused tokens: each says why ------------------------------------------------------------


def test_an_expired_token_is_refused(rule, oidc):
    detail = refused(exchange(oidc.token(exp=int(time.time()) - 120)))

    assert detail == "The token expired (exp): request a fresh one."


def test_a_token_for_another_audience_is_refused(rule, oidc):
    detail = refused(exchange(oidc.token(aud="https://other.example.org")))

    assert detail.startswith(
        "The token's audience (aud) 'https://other.example.org' is not 'parity'"
    )


def test_a_token_of_an_untrusted_issuer_is_refused_before_any_key_is_fetched(rule, oidc):
    fetches = oidc.jwks_fetches
    detail = refused(exchange(oidc.token(iss="https://evil.example.org")))

    assert detail == (
        "The token's issuer (iss) 'https://evil.example.org' is not trusted here "
        "(PARITY_OIDC_ISSUERS)."
    )
    assert oidc.jwks_fetches == fetches


def test_a_token_of_another_repository_is_refused_naming_the_claim(rule, oidc):
    detail = refused(exchange(oidc.token(repository="attacker/xla")))

    assert detail == (
        "No trust rule of project 'pytorch-xla' matches this token "
        f"(rule {rule.pk}: repository 'attacker/xla' does not match)."
    )


def test_a_recreated_repository_of_the_same_name_is_refused_by_its_id(rule, oidc):
    detail = refused(exchange(oidc.token(repository_id="999")))

    assert f"rule {rule.pk}: repository_id '999' does not match" in detail


def test_another_workflow_and_a_missing_environment_are_named(rule, oidc):
    assert "workflow 'Release' does not match" in refused(exchange(oidc.token(workflow="Release")))
    rule.workflow, rule.environment = "", "production"
    rule.save()
    assert "the token has no 'environment' claim" in refused(exchange(oidc.token()))
    assert exchange(oidc.token(environment="production")).status_code == 201


def test_a_bad_signature_is_refused(rule, oidc):
    forged = oidc.token(key=FakeIssuer().keys["rsa-1"][0])  # another key, the issuer's kid

    assert refused(exchange(forged)) == (
        f"The token's signature does not verify with {oidc.url}'s key."
    )


def test_alg_none_is_refused(rule, oidc):
    detail = refused(exchange(oidc.unsigned_token()))

    assert detail == "The token's alg 'none' is not allowed: sign it with RS256 or ES256."


def test_hmac_signed_with_the_issuers_public_key_is_refused(rule, oidc):
    """The classic confusion: the public key, which anyone has, used as an HMAC secret."""
    forged = oidc.hmac_token(oidc.public_pem())

    assert refused(exchange(forged)) == (
        "The token's alg 'HS256' is not allowed: sign it with RS256 or ES256."
    )


def test_an_unknown_kid_is_refused_and_refetches_the_keys_at_most_once_a_minute(rule, oidc):
    assert exchange(oidc.token()).status_code == 201
    fetches = oidc.jwks_fetches

    for n in range(5):
        detail = refused(exchange(oidc.token(kid=f"made-up-{n}")))
        assert detail == f"The issuer {oidc.url} has no signing key with kid 'made-up-{n}'."
    assert oidc.jwks_fetches == fetches  # fetched a moment ago: no refetch for any of them


def test_a_rotated_key_is_fetched_when_a_token_names_it(rule, oidc, settings):
    settings.PARITY_OIDC_JWKS_REFETCH_SECONDS = 0
    assert exchange(oidc.token()).status_code == 201
    oidc.publish("rsa-2")

    assert exchange(oidc.token(kid="rsa-2")).status_code == 201


def test_a_token_that_is_not_a_jwt_is_refused(rule):
    assert refused(exchange("not-a-jwt")).startswith("The token is not a JWT")


def test_a_project_without_rules_refuses_every_token_and_an_unknown_one_alike(project, oidc):
    no_rule = refused(exchange(oidc.token()))
    unknown = refused(exchange(oidc.token(), project="no-such-project"))

    assert no_rule == (
        "Project 'pytorch-xla' has no trust rule: an admin adds one "
        "(manage.py oidc_trust add, or the admin's trust rules)."
    )
    assert unknown == no_rule.replace("pytorch-xla", "no-such-project")


def test_a_rule_of_another_issuer_does_not_trust_this_one(project, oidc):
    rule = trust_rule_create(project=project, repository="pytorch/xla")  # GitHub's

    assert f"rule {rule.pk}: issuer '{oidc.url}' is not the rule's" in refused(
        exchange(oidc.token())
    )


def test_an_unreachable_issuer_answers_503_to_retry(rule, oidc, settings):
    settings.PARITY_OIDC_ISSUERS = [oidc.url, "http://127.0.0.1:9"]

    response = exchange(oidc.token(iss="http://127.0.0.1:9"))

    assert response.status_code == 503
    assert response.json()["detail"].startswith(
        "cannot fetch the signing keys of http://127.0.0.1:9"
    )
    assert response["Retry-After"] == "30"


def test_an_upload_token_is_not_an_oidc_token(rule, token):
    response = uploader(token).post(EXCHANGE, {"project": "pytorch-xla"}, format="json")

    assert refused(response) == (
        "This endpoint needs an OIDC ID token: 'Authorization: Bearer <token>'."
    )


# --- The minted token ---------------------------------------------------------------------------


def test_a_rule_scoped_to_backends_refuses_the_others_naming_the_backend(project, oidc):
    trust_rule_create(project=project, issuer=oidc.url, repository="pytorch/xla", backends=["tpu"])
    body = exchange(oidc.token()).json()
    api = uploader(body["token"])

    assert body["backends"] == ["tpu"]
    gpu = post_upload(api, XML, backend="gpu")
    assert refused(gpu, 403) == (
        "This token may upload to backend(s) tpu only, not 'gpu' (its trust rule's backends)."
    )
    assert post_upload(api, XML, backend="TPU").status_code == 202
    assert Upload.objects.count() == 1


def test_a_backend_scoped_token_cannot_complete_another_backends_run(project, oidc, token):
    gpu_run = post_upload(uploader(token), XML, backend="gpu").json()["run"]
    trust_rule_create(project=project, issuer=oidc.url, repository="pytorch/xla", backends=["tpu"])
    api = uploader(exchange(oidc.token()).json()["token"])

    response = api.post(f"/api/v1/runs/{gpu_run}/complete/")

    assert "not 'gpu'" in refused(response, 403)


def test_the_minted_token_expires(rule, oidc):
    key = exchange(oidc.token()).json()["token"]
    UploadToken.objects.filter(prefix=key[:8]).update(expires_at=timezone.now())

    detail = refused(uploader(key).get("/api/v1/projects/pytorch-xla/parity/"))

    assert detail.startswith("This upload token expired at ")
    assert detail.endswith("UTC: exchange a fresh OIDC token (POST /api/v1/oidc/exchange/).")


def test_removing_a_rule_revokes_its_tokens(rule, oidc):
    key = exchange(oidc.token()).json()["token"]

    trust_rule_delete(rule_id=rule.pk)

    assert refused(uploader(key).get("/api/v1/projects/pytorch-xla/parity/")) == (
        "Invalid or revoked token: neither a project's nor an active user's."
    )
    assert "has no trust rule" in refused(exchange(oidc.token()))


def test_exchanging_again_does_not_reset_the_upload_limit(rule, oidc, settings):
    """The upload throttle counts a rule's minted tokens together, as it counts one token."""
    settings.PARITY_THROTTLE_UPLOAD = "1/min"
    first = uploader(exchange(oidc.token()).json()["token"])
    second = uploader(exchange(oidc.token()).json()["token"])

    assert post_upload(first, XML, backend="tpu").status_code == 202
    assert post_upload(second, XML, backend="gpu").status_code == 429
