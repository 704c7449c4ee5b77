"""The admin's trust rules: listed, added with the project's own backends only, deleted with
the tokens they minted revoked."""

from parity.models import TrustRule, UploadToken
from parity.models.trust import GITHUB_ISSUER
from parity.oidc.exchange import trust_rule_create
from parity.services.projects import project_create, upload_token_create


def rule_form(project, backends) -> dict:
    return {
        "project": project.pk,
        "issuer": GITHUB_ISSUER,
        "repository": "pytorch/xla",
        "repository_id": "42",
        "ref": "refs/heads/main",
        "workflow": "",
        "environment": "",
        "backends": [b.pk for b in backends],
        "label": "",
    }


def test_a_rule_is_added_and_listed(admin_client, project):
    tpu = project.backends.get(name="tpu")

    response = admin_client.post("/admin/parity/trustrule/add/", rule_form(project, [tpu]))

    assert response.status_code == 302, response.context["adminform"].form.errors
    rule = TrustRule.objects.get()
    assert (rule.repository, list(rule.backends.all())) == ("pytorch/xla", [tpu])
    listing = admin_client.get("/admin/parity/trustrule/")
    assert listing.status_code == 200
    assert "pytorch/xla" in listing.content.decode()


def test_a_backend_of_another_project_is_refused(admin_client, project):
    other = project_create(slug="other", backends=["cpu"], reference="cpu")

    response = admin_client.post(
        "/admin/parity/trustrule/add/", rule_form(project, [other.backends.get()])
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["backends"] == [
        "Not backends of pytorch-xla: other/cpu."
    ]
    assert not TrustRule.objects.exists()


def test_an_http_issuer_is_refused(admin_client, project):
    form = {**rule_form(project, []), "issuer": "http://ci.example.org"}

    response = admin_client.post("/admin/parity/trustrule/add/", form)

    assert response.context["adminform"].form.errors["issuer"] == [
        "An issuer is an https:// URL (got 'http://ci.example.org')."
    ]


def test_deleting_a_rule_revokes_its_tokens(admin_client, project):
    rule = trust_rule_create(project=project, repository="pytorch/xla")
    upload_token_create(project=project, trust_rule=rule)

    response = admin_client.post(f"/admin/parity/trustrule/{rule.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not TrustRule.objects.exists()
    assert UploadToken.objects.get().revoked
