"""A sign-in's project roles (docs/sign-in.md): the groups the provider reported, mapped through
the ``GroupRole`` rules, become the user's memberships; those a sign-in through the same
provider granted before and its groups no longer grant are removed. The rule itself is
``parity.pure.role_mapping``."""

import logging

from django.db import transaction

from parity.models import GroupRole, Membership
from parity.pure.role_mapping import Changes, GroupRule, Held, membership_changes, roles_granted

logger = logging.getLogger(__name__)


def memberships_sync(*, user, provider: str, groups: list[str]) -> Changes:
    """Bring ``user``'s memberships in line with what ``groups`` of ``provider`` grant."""
    rules = [
        GroupRule(group=group, project_id=project_id, role=role)
        for group, project_id, role in GroupRole.objects.filter(provider=provider).values_list(
            "group", "project_id", "role"
        )
    ]
    granted = roles_granted(groups=groups, rules=rules)
    with transaction.atomic():
        # Two sign-ins of one user at once (two tabs) would both insert the same membership.
        mine = Membership.objects.filter(user=user)
        held = [Held(m.project_id, m.role, m.granted_by) for m in mine.select_for_update()]
        changes = membership_changes(provider=provider, granted=granted, held=held)
        Membership.objects.bulk_create(
            [
                Membership(user=user, project_id=project_id, role=role, granted_by=provider)
                for project_id, role in changes.grant.items()
            ],
            ignore_conflicts=True,
        )
        for project_id, role in changes.change.items():
            mine.filter(project_id=project_id).update(role=role)
        mine.filter(project_id__in=changes.revoke).delete()
    logger.info(
        "sign-in user=%s provider=%s groups=%d granted=%s changed=%s revoked=%s",
        user.pk,
        provider,
        len(groups),
        sorted(changes.grant.items()),
        sorted(changes.change.items()),
        sorted(changes.revoke),
    )
    return changes
