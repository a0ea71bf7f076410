"""The review of edits in the page: the cards a reply's rows draw, and Accept, Reject, Undo
(per hunk, file and turn) and Auto-apply, each reaching every tab of the session."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from chat.live.consumers import files_changed
from chat.llm.fake import FakeStep
from chat.repo import sessionsets
from chat.repo.edits.applying import propose
from chat.repo.watcher import Change
from chat.web.edits.cards import render_edits
from chat.web.panels.fileupdates import row_key
from contextcore.edits import EditOp
from history import services
from history.models import Message, PendingEdit, Session
from tests import serving
from tests.chat.sockets import connect, frames_until, in_files_group, send

pytestmark = pytest.mark.django_db(transaction=True)
TWO = "".join(f"line {n}\n" for n in range(1, 21))
BLOCK = """Done.

notes.txt
```
<<<<<<< SEARCH
line 2
=======
line two
>>>>>>> REPLACE
```
"""


@pytest.fixture
def repo_files():
    return {"app.py": "def greet():\n    return 'hi'\n", "notes.txt": TWO}


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def reply_with_edits(*ops: EditOp) -> Message:
    session = services.session_create(repository="", model="acdc/fake")
    services.message_append(session=session, role="user", content="change it", turn_id="t1")
    message = services.message_append(
        session=session, role="assistant", content="Here.", turn_id="t1"
    )
    for op in ops:  # the model read the files it edits
        if op.kind != "create":
            sessionsets.activate(session, op.path, repo=serving.repository())
    propose(session, list(ops), repo=serving.repository(), turn_id="t1", message=message)
    return message


def act(message: Message, **fields) -> str:
    """Press a button; returns the reply's cards as a page load draws them after it."""
    response = Client().post(f"/m/{message.id}/edits/", fields)
    assert response.status_code == 204, response.content
    return render_edits(message, serving.repository())


def statuses(message: Message) -> list[str]:
    return list(message.edits.order_by("id").values_list("status", flat=True))


GREET = EditOp("app.py", "replace", "return 'hi'", "return 'hello'")
TWO_HUNKS = EditOp(
    "notes.txt",
    "create",
    new_text=TWO.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n"),
    overwrite=True,
    source="write_file",
)


def test_a_reply_shows_one_card_per_file_with_its_diff_and_named_buttons(edits_on):
    message = reply_with_edits(GREET, TWO_HUNKS)
    page = Client().get(f"/s/{message.session_id}/").content.decode()
    assert f'id="edits-{message.id}"' in page
    assert 'role="region" aria-label="app.py"' in page and 'aria-label="notes.txt"' in page
    assert 'aria-label="Accept app.py"' in page and 'aria-label="Reject notes.txt"' in page
    assert 'aria-label="Accept hunk 2 of notes.txt"' in page and "Accept all edits" in page
    assert '<span class="diff-add">+    return &#x27;hello&#x27;</span>' in page
    assert '<span class="diff-del">-line 19</span>' in page and "Pending review" in page
    assert "Auto-apply edits" in page


def test_nothing_of_the_review_shows_or_answers_without_the_setting(served_root, settings):
    settings.ACDC_EDITS = True
    message = reply_with_edits(GREET)
    settings.ACDC_EDITS = False
    page = Client().get(f"/s/{message.session_id}/").content.decode()
    assert "edits-" not in page and "Auto-apply" not in page
    assert Client().post(f"/m/{message.id}/edits/", {"op": "accept"}).status_code == 404


def test_accepting_one_hunk_writes_it_and_keeps_the_rest_pending(edits_on):
    message = reply_with_edits(TWO_HUNKS)
    html = act(message, op="accept", path="notes.txt", hunk="1")
    text = (edits_on / "notes.txt").read_text()
    assert "line two\n" in text and "line 19\n" in text
    assert statuses(message) == ["applied", "pending"]
    assert (
        "1 of 2 hunks" in message.edits.first().result
        and '<span class="diff-add">+line nineteen</span>' in html
    )
    act(message, op="accept", path="notes.txt")
    assert "line nineteen\n" in (edits_on / "notes.txt").read_text()


def test_rejecting_one_hunk_writes_nothing_and_keeps_the_others_pending(edits_on):
    message = reply_with_edits(TWO_HUNKS)
    act(message, op="reject", path="notes.txt", hunk="2")
    assert (edits_on / "notes.txt").read_text() == TWO
    assert statuses(message) == ["rejected", "pending"]
    message.refresh_from_db()
    assert message.edit_results[0]["result"] == "rejected: hunk 2 of notes.txt"
    act(message, op="accept", path="notes.txt")
    text = (edits_on / "notes.txt").read_text()
    assert "line two\n" in text and "line 19\n" in text and "nineteen" not in text


def test_undo_restores_the_file_and_the_card_says_so(edits_on):
    message = reply_with_edits(GREET, TWO_HUNKS)
    act(message, op="accept")
    assert "hello" in (edits_on / "app.py").read_text()
    html = act(message, op="undo", path="app.py")
    assert (edits_on / "app.py").read_text() == "def greet():\n    return 'hi'\n"
    assert "Undone" in html and 'aria-label="Undo notes.txt"' in html
    act(message, op="undo")
    assert (edits_on / "notes.txt").read_text() == TWO


def test_a_file_changed_on_disk_makes_its_pending_card_a_conflict_with_both_texts(edits_on):
    message = reply_with_edits(GREET)
    (edits_on / "app.py").write_text("def greet():\n    return 'hey'\n")
    page = Client().get(f"/s/{message.session_id}/").content.decode()
    assert (
        "Conflict" in page
        and "What changed on disk in those lines" in page
        and "+    return &#x27;hey&#x27;" in page
    )
    html = act(message, op="accept", path="app.py")
    assert statuses(message) == ["conflict"] and "Conflict" in html
    assert (edits_on / "app.py").read_text() == "def greet():\n    return 'hey'\n"


async def test_a_decision_in_one_tab_reaches_every_tab_of_the_session(edits_on):
    message = await database_sync_to_async(reply_with_edits)(GREET)
    tab = await connect(message.session_id)
    try:
        await database_sync_to_async(act)(message, op="reject", path="app.py")
        frames = await frames_until(tab, f'id="edits-{message.id}"')
        assert "Rejected" in frames[-1] and 'hx-swap-oob="outerHTML"' in frames[-1]
    finally:
        await tab.disconnect()


async def test_the_auto_apply_switch_is_saved_and_every_tab_follows(edits_on):
    session = await database_sync_to_async(services.session_create)(
        repository="", model="acdc/fake"
    )
    tab = await connect(session.id)
    try:
        post = Client().post
        await database_sync_to_async(post)(f"/s/{session.id}/auto-apply/", {"enabled": "on"})
        frames = await frames_until(tab, 'id="auto-apply-form"')
        assert " checked" in frames[-1]
        assert (await Session.objects.aget(pk=session.id)).auto_apply
    finally:
        await tab.disconnect()


async def test_the_switchs_frame_names_the_act_that_drew_it_and_only_a_well_formed_one(edits_on):
    """The tab that clicked twice leaves out the first click's frame (static/acdc/acts.js):
    the frame says which act drew it; a header of another shape is no act."""
    session = await database_sync_to_async(services.session_create)(
        repository="", model="acdc/fake"
    )
    tab = await connect(session.id)
    url = f"/s/{session.id}/auto-apply/"
    try:
        post = Client().post
        await database_sync_to_async(post)(url, {"enabled": "on"}, HTTP_X_ACDC_ACT="k3x9:12")
        frames = await frames_until(tab, 'id="auto-apply-form"')
        assert frames[-1].startswith("<!--acdc-act k3x9:12-->")
        for odd in ("k3x9:12--><script>", "k3x9", "K3X9:1", "k3x9:-1", ""):
            await database_sync_to_async(post)(url, {}, HTTP_X_ACDC_ACT=odd)
            frames = await frames_until(tab, 'id="auto-apply-form"')
            assert frames[-1].startswith('<form id="auto-apply-form"'), odd
    finally:
        await tab.disconnect()


async def test_a_finished_reply_with_edit_blocks_gets_its_cards(edits_on, fake):
    session = await database_sync_to_async(services.session_create)(
        repository="", model="acdc/fake"
    )
    fake.enqueue(FakeStep(text=BLOCK))
    tab = await connect(session.id)
    try:
        await send(tab, message="Change line 2", model="acdc/fake")
        frames = await frames_until(tab, 'aria-label="Proposed edits"')
        assert 'aria-label="Accept notes.txt"' in frames[-1]
        row = await PendingEdit.objects.aget(session=session)
        assert row.status == "pending" and f'id="edits-{row.message_id}"' in frames[-1]
    finally:
        await tab.disconnect()


def test_the_hunks_left_pending_are_a_conflict_once_the_file_changes_on_disk(edits_on):
    message = reply_with_edits(TWO_HUNKS)
    act(message, op="accept", path="notes.txt", hunk="1")
    changed = (edits_on / "notes.txt").read_text().replace("line 19\n", "line 19 (mine)\n")
    (edits_on / "notes.txt").write_text(changed)
    html = act(message, op="accept", path="notes.txt")
    assert statuses(message) == ["applied", "conflict"] and "Conflict" in html
    assert (edits_on / "notes.txt").read_text() == changed


def test_a_new_file_and_a_deleted_file_say_so_plainly(edits_on):
    created = EditOp("docs/new.md", "create", new_text="# New\n", source="write_file")
    message = reply_with_edits(created, EditOp.delete("app.py"))
    html = render_edits(message, serving.repository())
    new, gone = html.split('aria-label="docs/new.md"')[1].split('aria-label="app.py"')[:2]
    assert '<span class="edit-kind">new file</span>' in new and ">+1<" in new and ">−0<" in new
    assert '<span class="edit-kind">deleted file</span>' in gone and ">−2<" in gone
    act(message, op="accept")
    assert (edits_on / "docs/new.md").read_text() == "# New\n"
    assert not (edits_on / "app.py").exists()
    assert render_edits(message, serving.repository()).count("Applied") == 2


async def test_a_change_on_disk_makes_the_pending_card_a_conflict_in_every_tab(edits_on, served):
    message = await database_sync_to_async(reply_with_edits)(GREET)
    tab = await connect(message.session_id)
    try:
        (edits_on / "app.py").write_text("def greet():\n    return 'hey'\n")
        await files_changed(served, [Change("app.py", "updated", "", (message.session_id,))])
        frames = await frames_until(tab, f'id="edits-{message.id}"')
        assert "Conflict" in frames[-1] and "return &#x27;hey&#x27;" in frames[-1]
    finally:
        await tab.disconnect()


async def _picker_update(tab) -> str:
    """The next Files-panel update the watcher's news sends (counts ride along with it)."""
    while True:
        frame = await tab.receive_from(timeout=30)
        if frame.startswith('<div id="picker-update"') and 'data-added="[&quot;' in frame:
            return frame


async def test_acdcs_own_write_is_not_marked_edited_in_the_files_panel(edits_on, served):
    # "edited" says the file changed since the model read it; after acdc's own write the
    # model has the change (a diff in its next request), so only the person's own edit is.
    message = await database_sync_to_async(reply_with_edits)(GREET)
    tab = await connect(message.session_id)
    try:
        await in_files_group(tab)
        await files_changed(served, [Change("app.py", "written", "", (message.session_id,))])
        ours = await _picker_update(tab)
        assert 'id="e' not in ours and "&quot;app.py&quot;" in ours
        await files_changed(served, [Change("app.py", "updated", "", (message.session_id,))])
        assert f'id="e{row_key("app.py")}"' in await _picker_update(tab)
    finally:
        await tab.disconnect()


async def test_an_edit_tool_call_shows_its_card_while_the_reply_streams(edits_on, fake):
    session = await database_sync_to_async(services.session_create)(
        repository="", model="acdc/fake"
    )
    call = {"path": "app.py", "old_text": "return 'hi'", "new_text": "return 'hello'"}
    fake.enqueue(FakeStep(tool_calls=[{"name": "edit_file", "arguments": call}]))
    fake.enqueue(FakeStep(text="Done."))
    tab = await connect(session.id)
    try:
        await send(tab, message="Say hello", model="acdc/fake")
        frames = await frames_until(tab, 'aria-label="Proposed edits"')
        assert '-edits" class="edit-cards"' in frames[-1] and 'aria-label="app.py"' in frames[-1]
        assert "once the reply has ended" in frames[-1] and "Accept app.py" not in frames[-1]
        assert not any('data-status="complete"' in frame for frame in frames)  # still streaming
        frames = await frames_until(tab, 'aria-label="Accept app.py"')  # its cards once stored
    finally:
        await tab.disconnect()


def test_an_edit_whose_text_still_matches_after_a_change_on_disk_is_still_pending_and_applies(
    edits_on,
):
    message = reply_with_edits(GREET)
    (edits_on / "app.py").write_text("# a comment\ndef greet():\n    return 'hi'\n")
    assert "Pending review" in render_edits(message, serving.repository())
    act(message, op="accept", path="app.py")
    assert (edits_on / "app.py").read_text() == "# a comment\ndef greet():\n    return 'hello'\n"
    assert statuses(message) == ["applied"]


def test_an_edit_already_in_the_file_says_so_and_is_not_a_conflict(edits_on):
    message = reply_with_edits(GREET)
    (edits_on / "app.py").write_text("def greet():\n    return 'hello'\n")  # the person did it
    html = render_edits(message, serving.repository())
    assert "Already in the file" in html and "Conflict" not in html
    html = act(message, op="accept")
    assert "already applied: app.py" in html and "Applied" in html


@pytest.mark.parametrize("hunk", ["²", "1e9", "-1", "x", "0", "9" * 500, "１"])
def test_a_hunk_that_is_not_a_plain_number_is_refused_plainly(edits_on, hunk):
    message = reply_with_edits(TWO_HUNKS)
    response = Client().post(
        f"/m/{message.id}/edits/", {"op": "accept", "path": "notes.txt", "hunk": hunk}
    )
    assert response.status_code == 400
    assert statuses(message) == ["pending"]


def hunk_heads(html: str) -> list[str]:
    return [part.split("</code>", 1)[0] for part in html.split('edit-hunk-head"><code>')[1:]]


def test_a_rejected_card_keeps_the_lines_and_context_it_had_while_pending(edits_on):
    long = "".join(f"row {n}\n" for n in range(1, 401))
    (edits_on / "long.txt").write_text(long)
    message = reply_with_edits(EditOp("long.txt", "replace", "row 324\n", "row 324, fixed\n"))
    pending = render_edits(message, serving.repository())
    assert hunk_heads(pending) == ["@@ -321,7 +321,7 @@"], pending
    rejected = act(message, op="reject", path="long.txt")
    assert "Rejected" in rejected and hunk_heads(rejected) == hunk_heads(pending), rejected
    assert '<span class="diff-ctx"> row 321</span>' in rejected
    # The file changes in those lines since: the card still shows the version it was made on.
    (edits_on / "long.txt").write_text(long.replace("row 324\n", "row 324 (mine)\n"))
    assert hunk_heads(render_edits(message, serving.repository())) == ["@@ -321,7 +321,7 @@"]
