"""The CI job summary's table of scores, read from ``GET …/parity/`` as the client reads it: the
headline named by the project's score definition, and a family (which has no run of its own)
as its variants' roll-up, not a row of dashes and zeros."""

from parity.clients import parity_ci
from parity.services.projects import project_score_set
from tests.parity.families_scenario import (
    VARIANTS,
    failing_by_hand,
    passing_by_hand,
    upload_families,
)

URL = "/api/v1/projects/pytorch-xla"
VERDICT = {
    "run": 1,
    "backend": "rocm-gfx942",
    "ok": True,
    "opened": {"tracked": 0, "untracked": 0, "intended": 0},
    "closed": 0,
    "gaps": [],
    "gaps_total": 0,
}


def summary_rows(api, xla) -> dict[str, list[str]]:
    parity = api.get(f"{URL}/parity/?files=0").json()
    client = parity_ci.Client("https://parity.example.org", project=xla.slug)
    markdown = parity_ci.verdict_markdown(VERDICT, client=client, parity=parity)
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    return {
        cells[0]: cells[1:]
        for cells in ([c.strip() for c in t.strip("|").split("|")] for t in table)
    }


def test_a_family_row_rolls_its_variants_up_and_the_score_is_named(upload_run, xla, api):
    upload_families(upload_run, xla)
    project_score_set(project=xla, definition="agree_any")

    rows = summary_rows(api, xla)

    assert rows["backend"][0] == "agreement (any difference)"
    family = rows["rocm (family)"]
    gaps = sum(len(set(VARIANTS) & failing) for failing in failing_by_hand().values())
    assert family[1:] == ["its 3 variants'", str(gaps), "0", "0"]
    assert family[0].count("%") == 2  # the variants' range
    assert "rocm" not in rows  # never "rocm | - | - | 0 | 0 | 0"


def test_by_default_the_score_is_parity(upload_run, xla, api):
    upload_families(upload_run, xla)

    rows = summary_rows(api, xla)

    assert rows["backend"][0] == "parity score"
    passing, compared = passing_by_hand("tpu")
    assert rows["tpu"][0] == f"{passing / compared:.1%}"
