"""Accept all and an upload with the disk full, for real (the repository and the database
on a tmpfs the test mounts and fills): one line saying so, nothing written, the rows
unclaimed; once space is back, Accept all applies and the image is stored."""

from __future__ import annotations

import logging

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client

from chat.web.broadcast import session_group
from contextcore.edits import EditOp
from history import services
from history.models import Image
from tests.chat.web.test_edits_frames import reply_with_edits
from tests.chat.web.test_images_views import picture, upload

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_file]
GREET = EditOp("app.py", "replace", "return 'hi'", "return 'hello'")


@pytest.fixture
def root(disk):
    folder = disk.folder / "repo"
    folder.mkdir()
    (folder / "app.py").write_text("def greet():\n    return 'hi'\n")
    return folder


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def _frame_to(session_id: str):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(session_group(session_id), channel)
    return lambda: async_to_sync(layer.receive)(channel)["html"]


def test_accept_all_with_the_disk_full_says_so_and_applies_once_space_is_back(
    edits_on, disk, caplog
):
    caplog.set_level(logging.INFO)
    message = reply_with_edits(GREET)
    frame = _frame_to(message.session_id)
    disk.fill()
    response = Client().post(f"/m/{message.id}/edits/", {"op": "accept"})
    assert response.status_code == 204
    html = frame()
    assert f"The disk is full: free space on {disk.folder}" in html
    assert (edits_on / "app.py").read_text() == "def greet():\n    return 'hi'\n"
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    disk.free()
    assert message.edits.get().claim == ""
    assert Client().post(f"/m/{message.id}/edits/", {"op": "accept"}).status_code == 204
    assert "applied: app.py" in frame()
    assert (edits_on / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    assert message.edits.get().status == "applied"


def test_an_upload_with_the_disk_full_says_so_and_stores_once_space_is_back(disk, client):
    session = services.session_create(repository="", model="acdc/fake")
    disk.fill()
    image = upload("a.png", picture())
    response = client.post(f"/s/{session.id}/images/", {"file": image})
    assert response.status_code == 400
    assert f"a.png was not stored: The disk is full: free space on {disk.folder}" in (
        response.content.decode()
    )
    disk.free()
    response = client.post(f"/s/{session.id}/images/", {"file": upload("a.png", picture())})
    assert response.status_code == 200 and Image.objects.count() == 1
