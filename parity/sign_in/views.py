from django.conf import settings
from django.contrib.auth.views import LoginView
from django.urls import reverse


class SignInView(LoginView):
    """Django's login form for local accounts, with a "Sign in with …" button per configured
    provider above it (none configured: the form alone, as before)."""

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["sign_in_providers"] = [
            {"label": provider.label, "kind": provider.kind, "url": _login_url(provider)}
            for provider in settings.PARITY_SIGN_IN_PROVIDERS
        ]
        return context


def _login_url(provider) -> str:
    """allauth's URL that starts a sign-in through ``provider`` (a POST: it sends the browser
    to the provider)."""
    if provider.kind == "openid_connect":
        return reverse("openid_connect_login", kwargs={"provider_id": provider.id})
    return reverse(f"{provider.kind}_login")
