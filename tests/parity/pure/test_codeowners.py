"""Code owners on a CODEOWNERS file in GitHub's syntax (``fixtures/owners/CODEOWNERS``, its
rules patterned on PyTorch's): the last matching rule wins, anchoring, ``**``, folders, ``docs/*``,
un-owning, paths as parity stores them, and Postgres reading each rule's regex as Python does."""

import re
from pathlib import Path

import pytest
from django.db import connection

from parity.pure.codeowners import (
    OwnersError,
    codeowners_parse,
    owners_of,
    owners_parse,
    pattern_regex,
    repository_path,
    yaml_parse,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "owners" / "CODEOWNERS"
INFRA = ("@pytorch/pytorch-dev-infra",)
FUNCTORCH_OPS = ("@zou3519", "@chillee", "@kshitij12345")

# Test files as parity stores them -> the owners GitHub gives them under the fixture.
EXPECTED = {
    "setup.py": INFRA,  # only "*" matches
    "README.md": ("docs@example.com",),  # "*.md" after "*": the later rule wins
    "test/README.md": ("@alband",),  # "/test/" comes after "*.md": it wins
    "test/test_autograd.py": ("@alband",),
    "third_party/test/test_x.py": INFRA,  # "/test/" is anchored at the root
    "test/functorch/test_vmap.py": ("@zou3519", "@chillee"),  # @Chillee and @chillee are one
    "test/functorch/test_ops.py": FUNCTORCH_OPS,  # the file's own rule, last
    "test/distributed/test_c10d_nccl.py": ("@d4l3k", "@fduwjj"),  # "/**/": zero folders
    "test/distributed/a/b/test_c10d_gloo.py": ("@d4l3k", "@fduwjj"),  # or several
    "test/distributed/test_store.py": ("@alband",),  # the "**" rule's name does not match
    "test/test_sparse.py": ("@amjames", "@pearu"),  # unanchored: at any depth
    "test/nested/deep/test_sparse_csr.py": ("@amjames", "@pearu"),
    "test/onnx/exporter/test_fx.py": ("@titaiwangms", "@xadupre"),  # a folder's subfolders
    "test/onnx/internal/test_registry.py": (),  # un-owned by the empty rule, which is last
    "test/onnx/internal_extra.py": ("@titaiwangms", "@xadupre"),  # not the folder "internal"
    "docs/conf.py": ("@docs-team",),  # "docs/*": the folder's files...
    "docs/source/conf.py": INFRA,  # ...not its subfolders' (GitHub's exception)
    "docs/index.md": ("@docs-team",),
    "test/quantization/core/test_quantized_op.py": ("@jerryzh168",),  # "/x" owns folder x
    "test/quantization_extra.py": ("@alband",),
    "test/test_jit.py": ("@alband",),  # the "!" rule is skipped, as GitHub ignores it
}


@pytest.fixture(scope="module")
def parsed():
    return codeowners_parse(FIXTURE.read_text())


@pytest.mark.parametrize(("path", "owners"), EXPECTED.items())
def test_the_last_matching_rule_gives_a_file_its_owners(parsed, path, owners):
    rule = owners_of(parsed.rules, path)

    assert rule is not None
    assert rule.owners == owners


def test_the_empty_rule_is_the_deciding_one_not_a_miss(parsed):
    rule = owners_of(parsed.rules, "test/onnx/internal/test_registry.py")

    assert (rule.pattern, rule.owners) == ("/test/onnx/internal", ())


def test_lines_github_would_ignore_are_skipped_and_said_why(parsed):
    skipped = {s.line: s.why for s in parsed.skipped}

    assert len(parsed.rules) == 11
    assert set(skipped) == {18, 19}
    assert "Negation" in skipped[18] and "Character classes" in skipped[19]


@pytest.mark.parametrize(
    "stored",
    [
        "./test/functorch/test_ops.py",
        "/test/functorch/test_ops.py",
        "test\\functorch\\test_ops.py",
        "test//functorch/test_ops.py",
        "././test/functorch/test_ops.py",
    ],
)
def test_paths_are_normalized_before_matching(parsed, stored):
    assert owners_of(parsed.rules, stored).owners == FUNCTORCH_OPS


def test_a_root_places_parity_paths_inside_the_repository(parsed):
    assert repository_path("test_ops.py", root="/test/functorch/") == "test/functorch/test_ops.py"
    assert owners_of(parsed.rules, "test_ops.py", root="test/functorch").owners == FUNCTORCH_OPS
    assert owners_of(parsed.rules, "test_ops.py").owners == INFRA


def test_a_test_with_no_file_has_no_owner(parsed):
    assert owners_of(parsed.rules, "") is None


def test_comments_and_escapes():
    parsed = codeowners_parse("# c\n\\#odd.py @a # trailing\npath\\ with\\ space/ @b\n")

    assert [(r.pattern, r.owners) for r in parsed.rules] == [
        ("\\#odd.py", ("@a",)),
        ("path\\ with\\ space/", ("@b",)),
    ]
    assert owners_of(parsed.rules, "#odd.py").owners == ("@a",)
    assert owners_of(parsed.rules, "path with space/t.py").owners == ("@b",)


def test_bad_owners_skip_their_line():
    parsed = codeowners_parse("*.py @good not-an-owner\n*.py @ok\n")

    assert [s.line for s in parsed.skipped] == [1]
    assert "not-an-owner" in parsed.skipped[0].why


def test_yaml_has_the_same_semantics():
    text = """
"*": "@pytorch/pytorch-dev-infra"
/test/: [ "@albanD" ]
/test/onnx/internal:
"""
    parsed = yaml_parse(text)

    assert owners_of(parsed.rules, "test/test_x.py").owners == ("@alband",)
    assert owners_of(parsed.rules, "test/onnx/internal/t.py").owners == ()
    assert owners_of(parsed.rules, "x.py").owners == INFRA
    listed = owners_parse("owners:\n- {pattern: /test/, owners: '@a @b'}\n", name="o.yml")
    assert listed.rules[0].owners == ("@a", "@b")
    with pytest.raises(OwnersError):
        yaml_parse("just a string")


@pytest.mark.django_db
def test_postgres_reads_each_rule_as_python_does(parsed):
    paths = [repository_path(p) for p in EXPECTED]
    with connection.cursor() as cursor:
        for rule in parsed.rules:
            cursor.execute(
                "SELECT coalesce(array_agg(p ORDER BY p), '{}') FROM unnest(%s::text[]) p "
                "WHERE p ~ %s",
                [paths, rule.regex],
            )
            python = sorted(p for p in paths if re.match(rule.regex, p))
            assert cursor.fetchone()[0] == python, rule.pattern


def test_every_pattern_is_everything_or_anchored():
    assert pattern_regex("*") == "^(?:.*/)?[^/]*(?:/.*)?$"
    assert pattern_regex("/") == "^.*$"
    assert pattern_regex("/test/") == "^test/.*$"
