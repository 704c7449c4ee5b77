"""The mirror map's writes: a project's logical suites, what each backend's CI calls them, and
the backends that do not run one, with a reason and the issue that tracks it
(``parity.models.suites``, docs/suites.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from django.core.exceptions import ValidationError
from django.db import transaction

from parity.models import Project, Suite, SuiteBackend
from parity.models.suites import STALE_AFTER_HOURS
from parity.services.suite_summaries import suite_summaries_rebuild

TIER_FIELDS = ("promote_after", "demote_after", "recover_after")


@dataclass(frozen=True)
class SuiteOnBackend:
    """One backend's row of a suite: its name there ("" = the suite's), or its exclusion."""

    backend: str
    name: str = ""
    excluded: bool = False
    reason: str = ""
    issue_url: str = ""
    equivalent: str = ""  # the backend this one's runs of the suite are compared with


def suite_save(
    *,
    project: Project,
    name: str,
    backends: Sequence[SuiteOnBackend] = (),
    stale_after_hours: int = STALE_AFTER_HOURS,
    tiers: Mapping[str, int] | None = None,
) -> Suite:
    """The suite ``name`` as given: created or updated, its map rows replaced by ``backends``.
    A backend the project does not have, an exclusion without a reason, or an issue URL the
    URL rule refuses raise ``ValidationError`` and write nothing. ``tiers`` sets its tier
    rules (``promote_after``, ``demote_after``, ``recover_after``; the others keep theirs)."""
    name = name.strip()
    if not name:
        raise ValidationError("A suite needs a name.")
    tiers = dict(tiers or {})
    unknown = set(tiers) - set(TIER_FIELDS)
    if unknown or any(not isinstance(v, int) or v < 1 for v in tiers.values()):
        raise ValidationError(
            f"Suite {name!r}: tier rules are {', '.join(TIER_FIELDS)}, each a count of 1 or more."
        )
    rows = []
    for spec in backends:
        backend = project.backend_named(spec.backend)
        if backend is None:
            raise ValidationError(
                f"Suite {name!r}: unknown backend {spec.backend!r} "
                f"(known: {project.backend_names()})."
            )
        if spec.excluded and not spec.reason.strip():
            raise ValidationError(
                f"Suite {name!r} is excluded on {backend.name}: say why (a reason)."
            )
        equivalent = None
        if spec.equivalent:
            equivalent = project.backend_named(spec.equivalent)
            if equivalent is None or equivalent.pk == backend.pk:
                raise ValidationError(
                    f"Suite {name!r}: {backend.name}'s equivalent is another backend of the "
                    f"project, not {spec.equivalent!r} (known: {project.backend_names()})."
                )
        row = SuiteBackend(
            backend=backend,
            name=spec.name.strip(),
            excluded=spec.excluded,
            reason=spec.reason.strip(),
            issue_url=spec.issue_url.strip(),
            equivalent=equivalent,
        )
        row.clean_fields(exclude=["suite", "equivalent"])
        rows.append(row)
    with transaction.atomic():
        old = Suite.objects.filter(project=project, name=name).values(*TIER_FIELDS).first()
        suite, _ = Suite.objects.update_or_create(
            project=project,
            name=name,
            defaults={"stale_after_hours": stale_after_hours, **tiers},
        )
        suite.backends.all().delete()
        for row in rows:
            row.suite = suite
        SuiteBackend.objects.bulk_create(rows)
        if old is not None and any(old[k] != v for k, v in tiers.items()):
            # Its tiers are replayed by its new rules (the summaries' steps used the old).
            transaction.on_commit(lambda: suite_summaries_rebuild(project=project))
    return suite


def suite_map_load(*, project: Project, suites: Mapping[str, Mapping]) -> list[Suite]:
    """A whole map from plain data, each suite as ``suite_save`` takes it::

        {"run_tests": {"stale_after_hours": 48,
                       "backends": {"cpu": "test/run_tests.sh",
                                    "neuron": {"excluded": true, "reason": "...",
                                               "issue_url": "https://..."}}}}

    A backend's value is its name for the suite, or its row's fields."""
    saved = []
    with transaction.atomic():
        for name, spec in suites.items():
            equivalent = dict(spec.get("equivalent") or {})
            rows = [
                SuiteOnBackend(backend=backend, name=value)
                if isinstance(value, str)
                else SuiteOnBackend(backend=backend, **value)
                for backend, value in (spec.get("backends") or {}).items()
            ]
            rows = [
                replace(row, equivalent=equivalent.pop(row.backend, row.equivalent)) for row in rows
            ] + [SuiteOnBackend(backend=b, equivalent=e) for b, e in equivalent.items()]
            saved.append(
                suite_save(
                    project=project,
                    name=name,
                    backends=rows,
                    stale_after_hours=spec.get("stale_after_hours", STALE_AFTER_HOURS),
                    tiers={k: spec[k] for k in TIER_FIELDS if k in spec},
                )
            )
    return saved
