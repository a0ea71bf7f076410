from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from acdc import env


def test_a_missing_repository_is_a_one_line_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ACDC_REPO", str(tmp_path / "nope"))
    with pytest.raises(ImproperlyConfigured, match=r"^ACDC_REPO: .*nope does not exist$"):
        env.env_directory("ACDC_REPO", tmp_path)


def test_a_file_is_not_a_repository(monkeypatch, tmp_path):
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    monkeypatch.setenv("ACDC_REPO", str(afile))
    with pytest.raises(ImproperlyConfigured, match="is not a directory"):
        env.env_directory("ACDC_REPO", tmp_path)


@pytest.mark.parametrize(
    ("name", "value", "reader", "says"),
    [
        ("X_INT", "ten", lambda: env.env_int("X_INT", 1), "whole number"),
        ("X_INT", "0", lambda: env.env_int("X_INT", 1, minimum=1), "at least 1"),
        ("X_BOOL", "maybe", lambda: env.env_bool("X_BOOL"), "true or false"),
        ("X_URL", "mysql://x", lambda: env.env_url("X_URL", ("postgres",)), "postgres://"),
        ("X_BIND", "my-host", lambda: env.env_bind_address("X_BIND"), "IP address"),
    ],
)
def test_bad_values_name_the_variable(monkeypatch, name, value, reader, says):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=f"{name}.*{says}"):
        reader()


def test_good_values_are_typed(monkeypatch):
    monkeypatch.setenv("X_INT", "42")
    monkeypatch.setenv("X_BOOL", "yes")
    monkeypatch.setenv("X_BIND", "localhost")
    assert env.env_int("X_INT", 1) == 42
    assert env.env_bool("X_BOOL") is True
    assert env.env_bind_address("X_BIND") == "127.0.0.1"
    assert env.is_loopback("127.0.0.1") and not env.is_loopback("0.0.0.0")


def test_the_data_dir_is_excluded_from_git(tmp_path):
    import subprocess

    from acdc.datadir import prepare_data_dir

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    prepare_data_dir(tmp_path, tmp_path / ".acdc")
    prepare_data_dir(tmp_path, tmp_path / ".acdc")
    lines = (tmp_path / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines.count(".acdc/") == 1


def test_the_secret_key_is_generated_once_and_kept(tmp_path):
    from acdc.datadir import secret_key

    first = secret_key(tmp_path, "")
    assert len(first) > 40
    assert secret_key(tmp_path, "") == first
    assert secret_key(tmp_path, "given") == "given"


def test_without_redis_the_channel_layer_is_in_memory():
    assert env.channel_layers("")["default"]["BACKEND"].endswith("InMemoryChannelLayer")


def test_the_channel_layers_redis_connections_wait_without_a_read_timeout():
    """The blocking pop is the wait; a read timeout would cut it (redis-py 8 sets 5 s unless
    told otherwise) or swallow a closing tab's cancel."""
    from channels_redis.utils import create_pool

    config = env.channel_layers("redis://127.0.0.1:6379/0")["default"]["CONFIG"]
    (host,) = config["hosts"]
    assert host["address"] == "redis://127.0.0.1:6379/0"
    connection = create_pool(host).make_connection()  # made, not connected
    assert connection.socket_timeout is None and connection.socket_keepalive
