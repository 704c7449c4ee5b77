"""The exemptions page links each list format's download for the page's filters."""

import re

from parity.models import Triage
from parity.services.triage import TriageRequest, triage_create

P = "/p/pytorch-xla"


def test_the_links_carry_the_backend_and_kind_filtered(client, project):
    triage_create(
        project=project,
        request=TriageRequest(kind="intended", match="test/a.py", backends=["tpu"], note="why"),
    )

    html = client.get(f"{P}/exemptions/?backend=tpu&kind=intended").content.decode()
    links = re.findall(r'<a href="([^"]+)" download>([^<]+)</a>', html)

    export = "/api/v1/projects/pytorch-xla/exemptions/export"
    assert ("CSV", f"{export}/amd-csv/?backend=tpu&amp;kind=intended") in [
        (label, url) for url, label in links
    ]
    assert len(links) == 7
    deselect = next(url for url, label in links if label == "pytest --deselect")
    answer = client.get(deselect.replace("&amp;", "&"))
    assert answer.content == b"test/a.py  # why\n"
    assert Triage.objects.count() == 1
