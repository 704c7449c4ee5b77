"""At each sign-in through a provider, the user's project roles follow their groups. Connected
by ``parity.apps`` when allauth is installed."""

import logging

from allauth.account.signals import user_logged_in
from django.contrib import messages
from django.dispatch import receiver

from parity.services.sign_in import memberships_sync
from parity.sign_in.groups import GroupsUnavailable, groups_of

logger = logging.getLogger(__name__)


@receiver(user_logged_in, dispatch_uid="parity-sign-in-roles")
def roles_on_sign_in(sender, request, user, sociallogin=None, **kwargs) -> None:
    if sociallogin is None:
        return  # a local account: its roles are the admin's
    provider = sociallogin.account.provider
    try:
        groups = groups_of(sociallogin)
    except GroupsUnavailable as exc:
        # Signed in all the same, with the roles of the last sign-in: a provider's API outage
        # must not lock everyone out (docs/sign-in.md).
        logger.warning("sign-in user=%s provider=%s groups unavailable: %s", user.pk, provider, exc)
        messages.warning(
            request,
            f"{sociallogin.provider.name} did not say which groups you are in; your project "
            "roles are those of your last sign-in.",
        )
        return
    memberships_sync(user=user, provider=provider, groups=groups)
