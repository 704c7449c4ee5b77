from django.urls import path

from ingest.api import views

urlpatterns = [
    path("uploads/", views.UploadCreateView.as_view(), name="upload-create"),
    path("uploads/<int:pk>/", views.UploadDetailView.as_view(), name="upload-detail"),
    path("runs/<int:pk>/complete/", views.RunCompleteView.as_view(), name="run-complete"),
    path("oidc/exchange/", views.OidcExchangeView.as_view(), name="oidc-exchange"),
]
