"""What stays private: the generated secret key (only its owner may ever read the file) and,
behind the access token (always), the images (no shared cache may keep them)."""

from __future__ import annotations

import io
import os
import stat
import tempfile
from pathlib import Path

import pytest
from PIL import Image as PILImage

from acdc.datadir import secret_key
from history.images import DecodeGate, image_store


@pytest.fixture
def open_umask():
    """The loosest umask, so only the code's own mode keeps others out."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_secret_key_file_is_owner_only_from_the_start(tmp_path, open_umask, monkeypatch):
    monkeypatch.setattr(Path, "chmod", lambda self, mode: None)  # no tightening afterwards
    key = secret_key(tmp_path, "")
    assert mode(tmp_path / "secret_key") == 0o600
    assert (tmp_path / "secret_key").read_text() == key and len(key) > 40
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]


def test_the_secret_key_is_kept_and_a_given_one_wins(tmp_path):
    key = secret_key(tmp_path, "")
    assert secret_key(tmp_path, "") == key
    assert secret_key(tmp_path, "from-the-environment") == "from-the-environment"


def test_a_worker_that_loses_the_race_takes_the_winner_s_key(tmp_path, monkeypatch):
    real_mkstemp = tempfile.mkstemp

    def mkstemp(**kwargs):
        (tmp_path / "secret_key").write_text("the-other-worker-s-key")
        return real_mkstemp(**kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    assert secret_key(tmp_path, "") == "the-other-worker-s-key"
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]


@pytest.mark.django_db
@pytest.mark.parametrize("suffix", ["", "thumb/"])
def test_images_behind_the_token_are_cached_privately(client, suffix):
    out = io.BytesIO()
    PILImage.new("RGB", (40, 30), (200, 20, 20)).save(out, format="PNG")
    image = image_store(out.getvalue(), decodes=DecodeGate())
    response = client.get(f"/images/{image.sha256}/{suffix}")
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    client.cookies.clear()
    assert client.get(f"/images/{image.sha256}/{suffix}").status_code == 403
