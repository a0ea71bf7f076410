"""Image upload to the composer's tray, serving with long cache headers, re-attaching."""

from __future__ import annotations

import io
import os

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image as PILImage

from history import services
from history.images import DecodeGate, image_store, message_attach_images
from history.models import Image

pytestmark = pytest.mark.django_db


def picture(fmt: str = "PNG", size: tuple[int, int] = (320, 200)) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, (20, 120, 220)).save(out, format=fmt)
    return out.getvalue()


def upload(name: str, data: bytes, mime: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=mime)


def test_an_upload_returns_a_chip_with_a_hidden_input_for_the_composer(client, session):
    response = client.post(f"/s/{session.id}/images/", {"file": upload("a.png", picture())})
    assert response.status_code == 200
    image = Image.objects.get()
    html = response.content.decode()
    assert f'name="image" value="{image.sha256}"' in html
    assert f"/images/{image.sha256}/thumb/" in html
    assert 'aria-label="Remove image 320×200"' in html


def test_text_posing_as_an_image_is_a_400_with_a_message(client, session):
    response = client.post(
        f"/s/{session.id}/images/", {"file": upload("notes.png", b"just some text\n")}
    )
    assert response.status_code == 400
    assert "notes.png: The file is not an image" in response.content.decode()
    assert Image.objects.count() == 0


def test_an_image_over_five_megabytes_is_refused_without_storing(client, session):
    big = picture() + os.urandom(6 * 1024 * 1024)
    response = client.post(f"/s/{session.id}/images/", {"file": upload("big.png", big)})
    assert response.status_code == 400
    assert "big.png: The image is too large" in response.content.decode()
    assert Image.objects.count() == 0


def test_a_sixth_image_is_refused(client, session):
    pending = [
        image_store(picture(size=(10 + n, 10)), decodes=DecodeGate()).sha256 for n in range(5)
    ]
    response = client.post(
        f"/s/{session.id}/images/", {"file": upload("six.png", picture()), "image": pending}
    )
    assert response.status_code == 400
    assert "at most 5 images per message" in response.content.decode()
    assert Image.objects.count() == 5


def test_an_upload_without_a_file_says_so(client, session):
    response = client.post(f"/s/{session.id}/images/", {})
    assert response.status_code == 400
    assert "Choose an image to attach." in response.content.decode()


def test_an_upload_to_an_unknown_session_is_a_404_fragment(client):
    response = client.post("/s/sess_0_000000/images/", {"file": upload("a.png", picture())})
    assert response.status_code == 404
    assert "There is no session" in response.content.decode()


def test_the_full_image_is_served_with_its_type_and_long_cache_headers(client):
    data = picture("JPEG")
    image = image_store(data, decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/jpeg"
    assert response.content == data
    assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    assert response["ETag"] == f'"{image.sha256}"'


def test_the_thumbnail_is_served_as_webp(client):
    image = image_store(picture(), decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/thumb/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    assert PILImage.open(io.BytesIO(response.content)).format == "WEBP"


def test_a_matching_etag_is_answered_with_304(client):
    image = image_store(picture(), decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/", HTTP_IF_NONE_MATCH=f'"{image.sha256}"')
    assert response.status_code == 304


@pytest.mark.parametrize("sha", ["0" * 64, "not-a-hash"])
def test_an_unknown_image_is_a_404(client, sha):
    assert client.get(f"/images/{sha}/").status_code == 404
    assert client.get(f"/images/{sha}/thumb/").status_code == 404


def test_re_attaching_returns_the_chip_of_a_stored_image(client):
    image = image_store(picture(), decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/chip/")
    assert response.status_code == 200
    assert f'name="image" value="{image.sha256}"' in response.content.decode()


def test_re_attaching_an_image_already_pending_adds_nothing(client):
    image = image_store(picture(), decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/chip/", {"image": image.sha256})
    assert response.status_code == 200
    assert 'name="image"' not in response.content.decode()


def test_re_attaching_an_unknown_image_is_a_400_with_a_message(client):
    response = client.get(f"/images/{'0' * 64}/chip/")
    assert response.status_code == 400
    assert "attach it again" in response.content.decode()


def test_the_session_page_shows_thumbnails_of_a_user_message(client, session):
    message = services.message_append(session=session, role="user", content="See this")
    image = image_store(picture(), decodes=DecodeGate())
    message_attach_images(message, [image])
    html = client.get(f"/s/{session.id}/").content.decode()
    assert f'href="/images/{image.sha256}/"' in html
    assert f'src="/images/{image.sha256}/thumb/"' in html
    assert 'aria-label="Re-attach image 1"' in html
    assert 'aria-label="Attach image"' in html
