from django.urls import path

from parity.dashboard import charts, triage, views

# Names are prefixed: the API's URL names share the root namespace.
project = "p/<slug:slug>/"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("overview.json", charts.overview_data, name="overview-data"),
    path(project, views.project_heatmap, name="project"),
    path(f"{project}file/", views.file_detail, name="project-file"),
    path(f"{project}tests/<int:pk>/", views.test_detail, name="project-test"),
    path(f"{project}skip-reasons/", views.skip_reasons, name="project-reasons"),
    path(f"{project}skip-reasons.json", charts.skip_reasons_data, name="project-reasons-data"),
    path(f"{project}gaps/", views.gaps, name="project-gaps"),
    path(f"{project}runs/", views.runs, name="project-runs"),
    path(f"{project}triage/", triage.triage_create, name="project-triage"),
    path(f"{project}exemptions/", views.exemptions, name="project-exemptions"),
    path(
        f"{project}exemptions/<int:pk>/delete/",
        triage.exemption_delete,
        name="project-exemption-delete",
    ),
]
