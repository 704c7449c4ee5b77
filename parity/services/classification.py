"""Skip-reason classification: a project's ordered rules (``parity.pure.skip_rules``) and the
category each of its skip reasons gets from them.

A reason records the version of the rules that classified it, so classifying is a pass over
the reasons whose version is not the rules' current one: after the rules change, every skip
reason (a small table: a project has hundreds to thousands), and at each run completion only
the reasons ingest created since (their version is still ""). Results are never read again:
re-classification is this pass, not a re-ingest. Ingest does not classify: the writer's hot
path stays as it is, and pages show a reason only once a recompute has put it in the roll-ups,
which the run completion's pass precedes (``parity.tasks.run_completed``)."""

import logging
import time

from django.db import connection, transaction
from psycopg2 import sql

from parity.models import Project, Reason, SkipRule
from parity.models.projects import project_lock
from parity.models.reasons import ReasonKind
from parity.pure.skip_rules import SkipRule as PureRule
from parity.pure.skip_rules import SkipRules, skip_rules_default
from parity.selectors.classification import skip_rules_current

logger = logging.getLogger(__name__)


def skip_rules_replace(*, project: Project, rules: SkipRules) -> int:
    """Make ``rules`` the project's rules, in their order, and re-classify its reasons by
    them; returns how many reasons changed category or disposition."""
    with transaction.atomic():
        project_lock(project_id=project.pk)
        SkipRule.objects.filter(project=project).delete()
        SkipRule.objects.bulk_create(
            SkipRule(
                project=project,
                position=position,
                category=rule.category,
                disposition=rule.disposition,
                message=rule.message,
                file=rule.file,
                klass=rule.klass,
                name=rule.name,
                note=rule.note,
            )
            for position, rule in enumerate(rules.rules, start=1)
        )
    return reasons_classify(project=project)


def skip_rules_give_default(*, project: Project) -> None:
    """A new project's rules: the default set (``parity/pure/skip_rules.yaml``)."""
    skip_rules_replace(project=project, rules=skip_rules_default())


def reasons_classify(*, project: Project) -> int:
    """Classify the project's skip reasons not classified by its current rules; returns how
    many changed category or disposition. Under the project lock, so a pass never records a
    version older than the rules it read. Reads the reasons of one version apart only; one
    UPDATE for all of them."""
    started = time.monotonic()
    with transaction.atomic():
        project_lock(project_id=project.pk)
        rules = skip_rules_current(project=project)
        stale = (
            Reason.objects.filter(project=project, kind=ReasonKind.SKIP)
            .exclude(rules_version=rules.version)
            .values_list("pk", "text", "category", "disposition")
        )
        rows, changed = [], 0
        for pk, text, category, disposition in stale:
            found = rules.classify(message=text)
            rows.append((pk, found.category, found.disposition))
            changed += (found.category, found.disposition) != (category, disposition)
        _reasons_update(rows, rules.version)
    if rows:
        logger.info(
            "classified %d reasons of project %s (%d changed) with rules %s in %.3fs",
            len(rows),
            project.pk,
            changed,
            rules.version,
            time.monotonic() - started,
        )
    return changed


def _reasons_update(rows: list[tuple[int, str, str]], version: str) -> None:
    """Each reason's category and disposition, and the rules' version, in one statement."""
    if not rows:
        return
    table = sql.Identifier(Reason._meta.db_table)
    statement = sql.SQL(
        "UPDATE {table} AS r SET category = v.category, disposition = v.disposition, "
        "rules_version = %s "
        "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, category, disposition) "
        "WHERE r.id = v.id"
    ).format(table=table)
    ids, categories, dispositions = (list(column) for column in zip(*rows, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(statement, [version, ids, categories, dispositions])


def skip_rule_save(*, rule: SkipRule) -> int:
    """Save one rule (the admin's edit) and re-classify its project's reasons; ``ValueError``
    (``SkipRulesError``) when its patterns do not compile. Returns the reasons changed."""
    skip_rule_check(rule=rule)
    rule.save()
    return reasons_classify(project=rule.project)


def skip_rules_delete(*, project: Project, ids: list[int]) -> int:
    """Delete rules of ``project`` and re-classify its reasons; returns the reasons changed."""
    SkipRule.objects.filter(project=project, pk__in=ids).delete()
    return reasons_classify(project=project)


def skip_rule_check(*, rule: SkipRule) -> None:
    """``SkipRulesError`` saying what is wrong with the rule, as the classifier would."""
    SkipRules(
        [
            PureRule(
                category=rule.category,
                disposition=rule.disposition,
                message=rule.message,
                file=rule.file,
                klass=rule.klass,
                name=rule.name,
            )
        ]
    )
