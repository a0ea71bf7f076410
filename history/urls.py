"""URLs of the history browser, mounted under /history/."""

from __future__ import annotations

from django.urls import path

from history import views

app_name = "history"
urlpatterns = [
    path("", views.index, name="index"),
    path("search/", views.search, name="search"),
    path("<str:session_id>/", views.session_detail, name="session"),
    path("<str:session_id>/load/", views.session_load, name="load"),
    path("<str:session_id>/rename/", views.session_rename, name="rename"),
    path("<str:session_id>/delete/", views.session_delete, name="delete"),
    path("<str:session_id>/export.md", views.export_markdown, name="export_md"),
    path("<str:session_id>/export.jsonl", views.export_jsonl, name="export_jsonl"),
]
