from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from parity.ci_files import ci_file, ci_index
from parity.sign_in.views import SignInView

urlpatterns = [
    path("admin/", admin.site.urls),
    # Project members log in here; they need not be admin staff (LOGIN_URL).
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("ingest.api.urls")),
    path("api/v1/", include("parity.api.urls")),
    path("ci/", ci_index, name="ci-index"),
    path("ci/<str:name>", ci_file, name="ci-file"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its script from a URL, not inline (parity.web.csp).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("", include("parity.digest.urls")),
    path("", include("parity.dashboard.urls")),
]

if settings.PARITY_SIGN_IN_PROVIDERS:
    # allauth's redirects to the providers and their callbacks (docs/sign-in.md), after the
    # login and logout above, which keep their paths.
    urlpatterns.insert(3, path("accounts/", include("allauth.urls")))

# JSON, not Django's HTML page, for a path under /api/ that no pattern matches.
handler404 = "parity.api.errors.not_found"
