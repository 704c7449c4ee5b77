"""Versions of a backend's exemption list as CI was given them: CI sends the version it applied
with its upload, and the verdict reads the list kept here to say which exemptions were added
or removed since (``parity.result_reads.exemptions_applied``)."""

from parity.models import Backend, ExemptionList
from parity.selectors.manifest import Manifest


def exemption_list_record(*, backend: Backend, manifest: Manifest) -> str:
    """Keep the exemptions of ``manifest`` under its version (once per version); returns the
    version. Called when the manifest or resolve API answers CI."""
    version = manifest.version
    if not ExemptionList.objects.filter(backend=backend, version=version).exists():
        listed = [
            {"id": e.id, "match": e.match, "kind": e.kind}
            for e in [*manifest.exemptions, *manifest.reasons]
        ]
        ExemptionList.objects.bulk_create(
            [ExemptionList(backend=backend, version=version, exemptions=listed)],
            ignore_conflicts=True,  # another CI job recorded it at the same moment
        )
    return version
