from django.urls import path

from parity.dashboard import views

urlpatterns = [
    path("", views.overview, name="overview"),
]
