from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import User

from history import services
from history.models import TokenUsage

pytestmark = pytest.mark.django_db


def test_every_history_model_has_a_working_admin_page(client):
    user = User.objects.create_superuser("admin", "admin@example.invalid", "pw")
    client.force_login(user)
    session = services.session_create(repository="/repo")
    services.message_append(session=session, role="user", content="hello")
    services.token_usage_record(
        session_id=session.id,
        turn_id="t1",
        model="acdc/fake",
        sections={"history": 3},
        tiers={"active": 3},
        estimated_prompt_tokens=3,
        usage={"prompt_tokens": 5, "cache_read_tokens": 2},
        cost=0.001,
    )
    history_models = [m for m in admin.site._registry if m._meta.app_label == "history"]
    assert {m.__name__ for m in history_models} >= {"Session", "Message", "TokenUsage"}
    for model in history_models:
        url = f"/admin/history/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url
    usage = TokenUsage.objects.get()
    page = client.get(f"/admin/history/tokenusage/{usage.pk}/change/").content.decode()
    assert "acdc/fake" in page
