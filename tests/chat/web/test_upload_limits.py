"""Uploads Django refuses to parse, and pictures too large in pixels, are answered like any
bad upload: a 400 fragment with the reason for the tray, and no error or traceback logged."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image as PILImage

from history.models import Image

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning"),
]


def png(size: tuple[int, int], mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    PILImage.new(mode, size, 1).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def browser(session) -> Client:
    """A client that passes the CSRF check as the page does (the token in a header)."""
    client = Client(enforce_csrf_checks=True)
    client.get(f"/s/{session.id}/")
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value
    return client


def test_101_files_at_once_get_the_tray_s_clear_refusal_and_log_no_error(browser, session, caplog):
    files = [SimpleUploadedFile(f"p{n}.png", b"x", content_type="image/png") for n in range(101)]
    with caplog.at_level(logging.DEBUG):
        response = browser.post(f"/s/{session.id}/images/", {"file": files})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="attachment-errors"' in html  # the tray's own place for refusals
    assert "Too many files at once: attach at most 5 images per message." in html
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert Image.objects.count() == 0


def test_a_normal_upload_still_passes_the_csrf_check(browser, session):
    response = browser.post(
        f"/s/{session.id}/images/",
        {"file": SimpleUploadedFile("a.png", png((32, 32)), content_type="image/png")},
    )
    assert response.status_code == 200
    assert Image.objects.count() == 1


def test_an_upload_without_the_csrf_token_is_still_refused(session):
    client = Client(enforce_csrf_checks=True)
    upload = SimpleUploadedFile("a.png", png((32, 32)), content_type="image/png")
    assert client.post(f"/s/{session.id}/images/", {"file": upload}).status_code == 403
    assert Image.objects.count() == 0


def test_a_7000_by_7000_png_upload_is_refused_naming_its_size_and_the_limit(browser, session):
    data = png((7000, 7000), "1")
    upload = SimpleUploadedFile("huge.png", data, content_type="image/png")
    response = browser.post(f"/s/{session.id}/images/", {"file": upload})
    assert response.status_code == 400
    assert "huge.png: The image is too large: 7000×7000 (49.0 MP; at most 40.0 MP)." in (
        response.content.decode()
    )
    assert Image.objects.count() == 0
