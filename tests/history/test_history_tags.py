"""The filters of the history browser: relative time, and replies as the chat shows them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from history.templatetags.history_tags import ago, markdown

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_recent_moments_are_just_now():
    assert ago(NOW - timedelta(seconds=20), NOW) == "just now"


def test_older_moments_show_their_largest_unit():
    assert ago(NOW - timedelta(hours=3, minutes=12), NOW) == "3\xa0hours ago"
    assert ago(NOW - timedelta(days=1, hours=2), NOW) == "1\xa0day ago"


def test_nothing_shows_nothing():
    assert ago(None) == ""


def test_a_reply_is_rendered_by_the_renderer_the_chat_uses():
    html = markdown("**bold**\n\n```python\ndef f(): pass\n```\n<script>x</script>")
    assert "<strong>bold</strong>" in html and 'class="k"' in html
    assert "<script>" not in html
