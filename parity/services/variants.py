"""Backend variants: a run of backend ``rocm`` whose attributes carry one of the project's variant
keys (``Project.variant_keys``, default ``arch``) belongs to the variant ``rocm-gfx942``, a
backend of its own (``Backend.family`` rocm, ``Backend.attributes`` {"arch": "gfx942"}) compared
with the reference like any other. The first upload of a variant creates it.
"""

import logging

from parity.models import Backend, Project
from parity.pure.attributes import variant_attributes, variant_name

logger = logging.getLogger(__name__)


class VariantRejected(ValueError):
    """Attributes that name no variant this upload may go to; the message says why."""


def backend_for_run(*, project: Project, backend: Backend, attributes: dict[str, str]) -> Backend:
    """The backend a run of ``backend`` with ``attributes`` belongs to: ``backend`` itself, or
    its variant for the attributes' variant keys, created if new. Concurrent shards of one run
    create it once: the name is unique per project, and the loser of the insert reads the
    winner's row."""
    keys = project.variant_keys or []
    if backend.family_id is not None:
        _variant_check(backend, attributes)
        return backend
    if backend.pk == project.reference_backend_id:
        return backend  # every backend is compared with one reference: it never splits
    wanted = variant_attributes(attributes, keys)
    if not wanted:
        return backend
    # A variant is its family and attributes; its name is only how it was first spelled.
    known = Backend.objects.filter(project=project, family=backend, attributes=wanted).first()
    if known is not None:
        return known
    variant = _variant_made(project, backend, wanted, variant_name(backend.name, wanted, keys))
    if variant.family_id == backend.pk and variant.attributes != wanted:
        # Another variant of the family has this slug (gfx90a:xnack+ and gfx90a:xnack-): this
        # one is named with a hash of its exact values, so both are kept.
        name = variant_name(backend.name, wanted, keys, distinct=True)
        variant = _variant_made(project, backend, wanted, name)
    if variant.family_id != backend.pk or variant.attributes != wanted:
        raise VariantRejected(
            f"Backend '{variant.name}' already exists and is not {backend.name}'s variant for "
            f"{_spelled(wanted)}; rename it, or send the run to '{variant.name}' directly."
        )
    return variant


def _variant_made(project: Project, family: Backend, wanted: dict, name: str) -> Backend:
    """The backend named ``name``, created as ``family``'s variant for ``wanted`` if new."""
    variant, created = Backend.objects.get_or_create(
        project=project,
        name=name,
        defaults={
            "family": family,
            "attributes": wanted,
            "reproduce_command": family.reproduce_command,
        },
    )
    if created:
        logger.info("variant %s (%s) of backend %s created", variant.pk, name, family.pk)
    return variant


def _variant_check(variant: Backend, attributes: dict[str, str]) -> None:
    """A run sent to a variant by its name may repeat its defining attributes, not contradict
    them."""
    clash = {
        key: value
        for key, value in attributes.items()
        if key in variant.attributes and variant.attributes[key] != value
    }
    if clash:
        raise VariantRejected(
            f"Backend '{variant.name}' is the variant for {_spelled(variant.attributes)}; this "
            f"upload says {_spelled(clash)}. Send it to the family's name instead."
        )


def _spelled(attributes: dict[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in attributes.items())
