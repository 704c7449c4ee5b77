"""manage.py oidc_trust: add, list and remove the OIDC trust rules of a project."""

import pytest
from django.core.management import CommandError, call_command

from parity.models import TrustRule, UploadToken
from parity.models.trust import GITHUB_ISSUER
from parity.services.projects import upload_token_create


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("oidc_trust", *args, stdout=out)
    return out.getvalue()


def test_add_list_and_remove_a_rule(project):
    added = run(
        "add", "pytorch-xla", "--repository", "pytorch/xla", "--repository-id", "42",
        "--ref", "refs/heads/*", "--backends", "TPU,gpu",
    )  # fmt: skip
    rule = TrustRule.objects.get()

    assert added == (
        f"rule {rule.pk}: pytorch-xla trusts {GITHUB_ISSUER} repository=pytorch/xla "
        "repository_id=42 ref=refs/heads/* backends=gpu,tpu\n"
    )
    assert run("list", "pytorch-xla") == added
    assert run("list") == added
    assert run("remove", str(rule.pk)) == f"removed rule {rule.pk} of pytorch-xla\n"
    assert not TrustRule.objects.exists()


def test_removing_a_rule_revokes_the_tokens_it_minted(project):
    run("add", "pytorch-xla", "--repository", "pytorch/xla")
    rule = TrustRule.objects.get()
    upload_token_create(project=project, trust_rule=rule)
    upload_token_create(project=project)  # a long-lived token stays

    run("remove", str(rule.pk))

    assert list(UploadToken.objects.values_list("revoked", flat=True).order_by("pk")) == [
        True,
        False,
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "nope", "--repository", "a/b"], "Unknown project 'nope'."),
        (
            ["add", "pytorch-xla", "--repository", "a/b", "--backends", "xpu"],
            "Unknown backend 'xpu' of project 'pytorch-xla'. Known: cpu, gpu, neuron, tpu.",
        ),
        (
            ["add", "pytorch-xla", "--repository", "a/b", "--issuer", "http://ci.example.org"],
            "issuer: An issuer is an https:// URL (got 'http://ci.example.org').",
        ),
        (
            ["add", "pytorch-xla", "--repository", "xla"],
            "repository: Give the repository as owner/name.",
        ),
        (["remove", "999"], "No trust rule 999."),
    ],
)
def test_a_bad_rule_is_refused_in_one_line_and_nothing_is_written(project, args, message):
    with pytest.raises(CommandError) as refused:
        run(*args)

    assert str(refused.value) == message
    assert not TrustRule.objects.exists()
