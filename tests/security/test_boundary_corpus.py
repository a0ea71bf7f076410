"""One corpus of forbidden paths through every surface: the model's tools (driven by
`acdc/fake`), the select frame's `change_selection`, the command line's `select_files`, the
pin endpoint, resume, the watcher, the picker and its token counts. Each target holds a
unique marker; none may reach a request sent to the model, a page, an export or a row, no
Python code may open a target, and acdc's own SQLite database stays intact."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings

from chat.llm.fake import FakeStep
from chat.llm.runtime import Runtime
from chat.repo import picker, sessionsets, watcher
from chat.session import setchanges
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.interchange.export import session_to_jsonl, session_to_markdown
from history.models import Message, ObjectVersion, Session
from tests import serving
from tests.chat.sockets import new_session
from tests.serving import install

pytestmark = pytest.mark.django_db(transaction=True)
TAG = uuid.uuid4().hex[:8]
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)


def marker(name: str) -> str:
    return f"MARKER-{name}-{TAG}"


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = Path(settings.ACDC_REPO)
    data = Path(settings.ACDC_DATA_DIR)
    made: list[Path] = []

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        made.append(path)

    git_config = root / ".git" / "config"
    original_config = git_config.read_text()
    git_config.write_text(original_config + f"# {marker('git')}\n")
    key = data / "secret_key"
    had_key = key.exists()
    original_key = key.read_text() if had_key else ""
    key.write_text(marker("key") + "\n")
    write(root / ".env", f"TOKEN={marker('env')}\n")
    write(root / "id_rsa", f"-----BEGIN KEY-----\n{marker('rsa')}\n")
    write(root / "server.pem", f"-----BEGIN CERT-----\n{marker('pem')}\n")
    write(root / "d" / "keep.txt", "an ordinary file\n")
    outside = root.parent / f"outside-{TAG}.txt"
    write(outside, marker("out") + "\n")
    db = Path(connection.settings_dict["NAME"])
    targets = {
        ".git/config": git_config,
        ".acdc/secret_key": key,
        ".env": root / ".env",
        "id_rsa": root / "id_rsa",
        "server.pem": root / "server.pem",
    }
    if connection.vendor == "sqlite":
        assert db.is_relative_to(root), "the test's data folder is inside the test repository"
        targets[db.relative_to(root).as_posix()] = db
    links = {}
    for n, (name, target) in enumerate(targets.items()):
        link = root / f"link{n}"
        link.symlink_to(target)
        made.append(link)
        links[name] = link.name
    out_link = root / "link-out"
    out_link.symlink_to(outside)
    made.append(out_link)
    paths = []
    for name in targets:
        paths += [name, f"./{name}", f"d//../{name}", f"d/../{name}", f"{name}/", links[name]]
    paths += [".GIT/config", ".Env", "ID_RSA", "Server.PEM", ".git", ".acdc/", ".git/"]
    paths += [f"../outside-{TAG}.txt", "/etc/passwd", str(outside), "link-out"]
    record = tmp_path / "requests.jsonl"
    with override_settings(ACDC_RECORD_REQUESTS=str(record)):
        served = install(monkeypatch, runtime=Runtime.from_settings())  # records the requests
        yield paths, [*targets.values(), outside], record, served
    served.passes.wait()
    git_config.write_text(original_config)
    if had_key:
        key.write_text(original_key)
    else:
        key.unlink()
    for path in made:
        path.unlink(missing_ok=True)
    (root / "d").rmdir()


def tool_step(paths: list[str]) -> FakeStep:
    calls = [{"name": "list_files", "arguments": {"path": "."}}]
    calls.append({"name": "grep", "arguments": {"pattern": f"MARKER-[a-z]+-{TAG}"}})
    calls.append({"name": "grep", "arguments": {"pattern": "root:x:0"}})
    for path in paths:
        calls.append({"name": "read_file", "arguments": {"path": path}})
        calls.append({"name": "activate", "arguments": {"id": path}})
        calls.append({"name": "pin", "arguments": {"id": path}})
        calls.append({"name": "list_files", "arguments": {"path": path}})
        calls.append({"name": "grep", "arguments": {"pattern": "MARKER", "path": path}})
    for n, call in enumerate(calls):
        call["id"] = f"c{n}"
    return FakeStep(text="Looking.", tool_calls=calls)


def _select(session_id, paths, confirmed=(), *, wiring):
    """What a select frame does: the selection made exactly `paths` (chat.web.panels)."""
    wanted = setchanges.Wanted(tuple(paths), frozenset(), frozenset(confirmed))
    change = setchanges.change_selection(session_id, lambda *_: wanted, wiring)
    return change.problems, change.hud


def _other_surfaces(session, paths: list[str], served) -> list[str]:
    problems, _ = _select(session.id, tuple(paths), wiring=served)
    problems += setchanges.select_files(session.id, wiring=served, add=paths, pin=paths)
    client = Client()
    for path in paths:
        for confirm in ("", "0"):
            data = {"path": path, "pinned": "true", "confirm": confirm}
            answer = client.post(f"/s/{session.id}/files/pin/", data)
            assert answer.status_code == 400, (path, answer.content)
    repo = serving.repository()
    sessionsets.resume(session, repo)
    parts = {"maps": served.maps, "own_writes": served.repository.own_writes}
    watched = watcher.RepositoryWatcher(repo, None, **parts)
    relevant = watched.relevant(str(repo.root / p) for p in paths)
    assert watched.index(relevant + paths) == []
    counts = served.counts.count(repo.root, paths)
    assert all(c.tokens is None for c in counts.values())
    tree = picker.tree_payload(repo.root, served.counts, [])
    pages = [json.dumps(tree)]
    pages.append(client.get(f"/s/{session.id}/").content.decode())
    pages.append(client.get(f"/s/{session.id}/files.json").content.decode())
    pages.append(client.get(f"/s/{session.id}/files/rows/").content.decode())
    pages.append(client.get(f"/history/{session.id}/").content.decode())
    messages = list(session.messages.order_by("seq"))
    pages += [session_to_markdown(session, messages), session_to_jsonl(session, messages)]
    pages.append(client.get(f"/history/{session.id}/export.md").content.decode())
    pages.append(client.get(f"/history/{session.id}/export.jsonl").content.decode())
    rows = [m.content for m in Message.objects.all()]
    rows += [v.content or "" for v in ObjectVersion.objects.all()]
    rows += [json.dumps(v.fields) for v in ObjectVersion.objects.all()]
    return problems + pages + rows


async def test_no_surface_reads_an_internal_or_secret_path(corpus, fake):
    global _OPENED
    paths, targets, record, served = corpus
    session = await new_session()
    fake.enqueue(tool_step(paths), FakeStep(text="Done."))
    _OPENED = []
    try:
        await run_turn(
            TurnInput(session_id=session.id, user_text="look", model="acdc/fake"),
            TurnServices(emit=_ignore, wiring=served),
        )
        seen = await database_sync_to_async(_other_surfaces)(session, paths, served)
        await run_turn(
            TurnInput(session_id=session.id, user_text="again", model="acdc/fake"),
            TurnServices(emit=_ignore, wiring=served),
        )
        opened = list(_OPENED)
    finally:
        _OPENED = None

    sent = [json.dumps(r.messages) for r in fake.requests] + record.read_text().splitlines()
    assert len(record.read_text().splitlines()) >= 3  # the recording itself works
    assert "Error:" in sent[1]  # the tools answered, with refusals
    everything = "\n".join(sent + seen)
    for name in ("git", "key", "env", "rsa", "pem", "out"):
        assert marker(name) not in everything, name
    assert "root:x:0:0" not in everything
    real = {str(t.resolve()) for t in targets}
    assert not [p for p in opened if str(Path(p).resolve()) in real]
    if connection.vendor == "sqlite":
        check = await database_sync_to_async(_integrity)()
        assert check == "ok"


def _integrity() -> str:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA integrity_check")
        return cursor.fetchone()[0]


async def _ignore(event) -> None:
    return None


@pytest.mark.parametrize("path", [".env", "./.env", "id_rsa", "server.pem/"])
def test_a_secret_needs_the_persons_confirmation(corpus, path):
    served = corpus[3]
    session = Session.objects.create(repository=str(settings.ACDC_REPO))
    problems, _ = _select(session.id, (path,), wiring=served)
    assert problems == [f"{path} looks like a secret; confirm to send it to the model provider"]
    assert sessionsets.active_paths(session, repo=serving.repository()) == []
    problems, _ = _select(session.id, (path,), confirmed=frozenset({path}), wiring=served)
    assert problems == [] and len(sessionsets.active_paths(session, repo=serving.repository())) == 1
    problems, _ = _select(session.id, (path,), wiring=served)  # confirmed before: stays
    assert problems == [] and len(sessionsets.active_paths(session, repo=serving.repository())) == 1


def test_the_pin_endpoint_pins_a_secret_only_when_confirmed(corpus, client):
    session = Session.objects.create(repository=str(settings.ACDC_REPO))
    url = f"/s/{session.id}/files/pin/"
    refused = client.post(url, {"path": ".env", "pinned": "true"})
    assert refused.status_code == 400 and "looks like a secret" in refused.json()["error"]
    confirmed = client.post(url, {"path": ".env", "pinned": "true", "confirm": "1"})
    assert confirmed.json()["pinned"] == [".env"]
    internal = client.post(url, {"path": ".git/config", "pinned": "true", "confirm": "1"})
    assert internal.status_code == 400
