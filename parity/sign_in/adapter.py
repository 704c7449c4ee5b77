import logging

from allauth.socialaccount.adapter import DefaultSocialAccountAdapter

logger = logging.getLogger(__name__)


class SignInAdapter(DefaultSocialAccountAdapter):
    """allauth's, with a failed sign-in logged: the page the user sees names no reason (it may
    hold a provider's answer), so the operator's log must."""

    def on_authentication_error(self, request, provider, error=None, exception=None, **kwargs):
        app = getattr(provider, "app", None)
        logger.warning(
            "sign-in failed provider=%s error=%s exception=%r",
            getattr(app, "provider_id", "") or getattr(provider, "id", provider),
            error,
            exception,
        )
        super().on_authentication_error(request, provider, error, exception, **kwargs)
