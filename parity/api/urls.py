from django.urls import path

from parity.api import compare, lists, suites, targets, transitions, views

project = "projects/<slug:slug>/"

urlpatterns = [
    path(f"{project}parity/", views.ParityView.as_view(), name="parity"),
    path(f"{project}gaps/", views.GapListView.as_view(), name="gap-list"),
    path(f"{project}skip-reasons/", views.SkipReasonListView.as_view(), name="skip-reason-list"),
    path(
        f"{project}skip-reasons/<int:pk>/trend/",
        views.SkipReasonTrendView.as_view(),
        name="skip-reason-trend",
    ),
    path(f"{project}tests/", views.TestListView.as_view(), name="test-list"),
    path(f"{project}tests/<int:pk>/", views.TestDetailView.as_view(), name="test-detail"),
    path(f"{project}triage/", views.TriageListView.as_view(), name="triage-list"),
    path(f"{project}triage/<int:pk>/", views.TriageDetailView.as_view(), name="triage-detail"),
    path(f"{project}manifest/", views.ManifestView.as_view(), name="manifest"),
    path(
        f"{project}manifest/resolve/",
        views.ManifestResolveView.as_view(),
        name="manifest-resolve",
    ),
    path(
        f"{project}exemptions/import/",
        lists.ListImportView.as_view(),
        name="exemptions-import",
    ),
    path(
        f"{project}exemptions/export/<slug:list_format>/",
        lists.ListExportView.as_view(),
        name="exemptions-export",
    ),
    path(f"{project}compare/", compare.CompareViewListView.as_view(), name="compare-list"),
    path(
        f"{project}compare/<slug:name>/",
        compare.CompareReportView.as_view(),
        name="compare-detail",
    ),
    path(
        f"{project}transitions/",
        transitions.TransitionListView.as_view(),
        name="transition-list",
    ),
    path(
        f"{project}transitions/<int:pk>/",
        transitions.TransitionDetailView.as_view(),
        name="transition-detail",
    ),
    path(f"{project}targets/", targets.TargetListView.as_view(), name="target-list"),
    path(f"{project}targets/<int:pk>/", targets.TargetDetailView.as_view(), name="target-detail"),
    path(f"{project}suites/", suites.SuiteMatrixView.as_view(), name="api-suites"),
    path("runs/<int:pk>/verdict/", views.RunVerdictView.as_view(), name="run-verdict"),
]
