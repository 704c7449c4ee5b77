from django.urls import path

from parity.dashboard import (
    charts,
    compare_views,
    downloads,
    history_views,
    owners_views,
    target_views,
    transition_views,
    triage_views,
    views,
    webhook_views,
)

# Names are prefixed: the API's URL names share the root namespace.
project = "p/<slug:slug>/"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("overview.json", charts.overview_data, name="overview-data"),
    path("favicon.ico", views.favicon, name="favicon"),
    path(project, views.project_heatmap, name="project"),
    path(f"{project}file/", views.file_detail, name="project-file"),
    path(f"{project}tests/", views.test_search, name="project-tests"),
    path(f"{project}tests/<int:pk>/", views.test_detail, name="project-test"),
    path(f"{project}skip-reasons/", views.skip_reasons, name="project-reasons"),
    path(f"{project}skip-reasons.json", charts.skip_reasons_data, name="project-reasons-data"),
    path(f"{project}trend/", views.score_trend, name="project-trend"),
    path(
        f"{project}trend/targets/<int:pk>/remove/",
        target_views.target_remove,
        name="project-target-remove",
    ),
    path(f"{project}queue/", views.triage_queue, name="project-queue"),
    path(f"{project}queue/exempt/", triage_views.queue_exempt, name="project-queue-exempt"),
    path(f"{project}gaps/", views.gaps, name="project-gaps"),
    path(f"{project}gaps.csv", downloads.gaps_csv, name="project-gaps-csv"),
    path(f"{project}owners/", views.owners, name="project-owners"),
    path(f"{project}owners/import/", owners_views.owners_upload, name="project-owners-import"),
    path(f"{project}runs/", views.runs, name="project-runs"),
    path(f"{project}runs/<int:pk>/", views.run_detail, name="project-run"),
    path(f"{project}suites/", views.suites, name="project-suites"),
    path(f"{project}suites.csv", downloads.suites_csv, name="project-suites-csv"),
    path(f"{project}transitions/", transition_views.transitions, name="project-transitions"),
    path(
        f"{project}transitions/<int:pk>/",
        transition_views.transition_detail,
        name="project-transition",
    ),
    path(f"{project}compare/", compare_views.compare_views, name="project-compare-views"),
    path(f"{project}compare/<slug:name>/", compare_views.compare_detail, name="project-compare"),
    path(
        f"{project}compare/<slug:name>.csv", compare_views.compare_csv, name="project-compare-csv"
    ),
    path(
        f"{project}compare/<slug:name>/settings/",
        compare_views.compare_settings,
        name="project-compare-settings",
    ),
    path(
        f"{project}compare/<slug:name>/delete/",
        compare_views.compare_delete,
        name="project-compare-delete",
    ),
    path(
        f"{project}history/settings/",
        history_views.history_settings,
        name="project-history-settings",
    ),
    path(f"{project}matrix/", views.matrix, name="project-matrix"),
    path(f"{project}matrix.csv", downloads.matrix_csv, name="project-matrix-csv"),
    path(f"{project}matrix/pair/", views.matrix_pair, name="project-pair"),
    path(f"{project}matrix/pair/files.csv", downloads.pair_files_csv, name="project-pair-files"),
    path(f"{project}matrix/pair/tests.csv", downloads.pair_tests_csv, name="project-pair-tests"),
    path(f"{project}triage/", triage_views.triage_submit, name="project-triage"),
    path(f"{project}file-issue/", views.file_issue, name="project-file-issue"),
    path(f"{project}exemptions/", views.exemptions, name="project-exemptions"),
    path(f"{project}webhooks/", webhook_views.webhooks, name="project-webhooks"),
    path(f"{project}webhooks/<int:pk>/", webhook_views.webhook_change, name="project-webhook"),
    path(
        f"{project}webhooks/<int:pk>/delete/",
        webhook_views.webhook_delete,
        name="project-webhook-delete",
    ),
    path(
        f"{project}webhooks/<int:pk>/ping/", webhook_views.webhook_ping, name="project-webhook-ping"
    ),
    path(
        f"{project}webhooks/<int:pk>/secret/",
        webhook_views.webhook_secret,
        name="project-webhook-secret",
    ),
    path(f"{project}not-applicable/", views.not_applicable, name="project-not-applicable"),
    path(
        f"{project}not-applicable/<int:pk>/override/",
        triage_views.declaration_override,
        name="project-declaration-override",
    ),
    path(
        f"{project}exemptions/<int:pk>/delete/",
        triage_views.exemption_delete,
        name="project-exemption-delete",
    ),
]
