from __future__ import annotations

from django.urls import path

from chat import views

app_name = "chat"
urlpatterns = [
    path("", views.index, name="index"),
    path("s/new/", views.session_new, name="session_new"),
    path("s/<str:session_id>/", views.session_page, name="session"),
    path("s/<str:session_id>/images/", views.image_upload, name="image_upload"),
    path("images/<str:sha>/", views.image_file, name="image"),
    path("images/<str:sha>/thumb/", views.image_thumb, name="image_thumb"),
    path("images/<str:sha>/chip/", views.image_chip, name="image_chip"),
]
