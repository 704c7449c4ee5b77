from django.urls import path

from parity.digest import views

urlpatterns = [
    path("p/<slug:slug>/digest/", views.preview, name="digest-preview"),
    path("digest/unsubscribe/<str:token>/", views.unsubscribe, name="digest-unsubscribe"),
]
