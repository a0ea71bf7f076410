"""Hypothesis properties of the context engine."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.prompt.revisions import format_file_block
from tests.current_files import read_current_files

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
words = st.text(alphabet="abc def\n`", min_size=0, max_size=400)
facts_strategy = st.builds(
    ModelFacts,
    name=st.sampled_from(["anthropic/claude-x", "openai/gpt-4o"]),
    max_input_tokens=st.integers(300, 20_000),
    max_output_tokens=st.integers(50, 8_000),
    min_cacheable_tokens=st.sampled_from([0, 256, 1024]),
)
exchanges = st.lists(st.tuples(words, words), max_size=25)
file_sets = st.dictionaries(
    st.sampled_from([f"f{i}.py" for i in range(6)]),
    st.text(alphabet="xyz \n", max_size=3000),
    max_size=5,
)


def _build(counter, facts, history, files, scheme, pinned=()):
    manager = ContextManager(
        facts,
        counter,
        config=ContextConfig(
            tier_scheme=scheme, system_prompt="sys " * 20, compaction_trigger_tokens=10**9
        ),
    )
    for user, assistant in history:
        manager.add_exchange(user, assistant)
    for path, text in files.items():
        manager.file_context.add_file(path, text)
    for path in pinned:
        manager.pin_file(path)
    return manager


@SETTINGS
@given(
    facts=facts_strategy,
    history=exchanges,
    files=file_sets,
    message=words,
    scheme=st.sampled_from(["none", "last", "seed", "acdc"]),
    pin=st.booleans(),
)
def test_a_request_never_exceeds_the_input_budget(
    counter, facts, history, files, message, scheme, pin
):
    manager = _build(counter, facts, history, files, scheme, list(files)[:2] if pin else ())
    prepared = manager.prepare_request(message * 5)
    assert prepared.estimated_tokens <= facts.input_budget
    assert counter.count(prepared.messages) <= facts.input_budget


@SETTINGS
@given(
    facts=facts_strategy,
    history=exchanges,
    files=file_sets,
    scheme=st.sampled_from(["none", "seed", "acdc"]),
)
def test_history_pairs_are_never_split(counter, facts, history, files, scheme):
    tagged = [(f"u{i}: {u}", f"a{i}: {a}") for i, (u, a) in enumerate(history)]
    manager = _build(counter, facts, tagged, files, scheme)
    sent = manager.prepare_request("q").messages[:-1]
    contents = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in sent
    ]
    for user, assistant in tagged:
        assert (user in contents) == (assistant in contents)
        if user in contents:
            assert contents[contents.index(user) + 1] == assistant


@SETTINGS
@given(
    facts=facts_strategy,
    history=exchanges,
    files=file_sets,
    scheme=st.sampled_from(["none", "last", "seed", "acdc"]),
)
def test_assembly_is_deterministic(counter, facts, history, files, scheme):
    first = _build(counter, facts, history, files, scheme).prepare_request("q").messages
    second = _build(counter, facts, history, files, scheme).prepare_request("q").messages
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)


actions = st.lists(
    st.one_of(
        st.tuples(st.just("edit"), st.sampled_from(["a.py", "b.py", "c.py"]), st.integers(0, 9)),
        st.tuples(st.just("drop"), st.sampled_from(["a.py", "b.py", "c.py"]), st.just(0)),
        st.tuples(st.just("turn"), st.just(""), st.just(0)),
    ),
    max_size=30,
)


def _content(path, n):
    return "".join(f"{path} line {i} {'edited' if i == n * 7 else ''}\n" for i in range(80))


@SETTINGS
@given(
    actions=actions,
    style=st.sampled_from(["auto", "full"]),
    stale=st.sampled_from([0, 2_000, 10**6]),
)
def test_the_latest_content_of_every_selected_file_is_present_and_marked_current(
    counter, facts, actions, style, stale
):
    manager = ContextManager(
        facts, counter, config=ContextConfig(update_style=style, stale_budget_tokens=stale)
    )
    for path in ("a.py", "b.py", "c.py"):
        manager.file_context.add_file(path, _content(path, 0))
    for turn, (kind, path, n) in enumerate(actions):
        if kind == "edit":
            manager.file_context.add_file(path, _content(path, n))
        elif kind == "drop":
            manager.file_context.remove_file(path)
        messages = manager.prepare_request(f"question {turn}").messages
        manager.record_exchange(f"question {turn}", f"answer {turn}")
        selected = dict(manager.file_context.items())
        assert read_current_files(messages) == selected
        if style == "full":
            text = json.dumps(messages)
            for path, content in selected.items():
                version = manager.stability.versions[f"file:{path}"][0]
                assert json.dumps(format_file_block(path, content, version))[1:-1] in text


@SETTINGS
@given(
    files=file_sets,
    drop=st.sets(st.sampled_from([f"f{i}.py" for i in range(6)])),
    scheme=st.sampled_from(["none", "last", "seed"]),
)
def test_the_plain_and_seed_layouts_show_each_selected_file_once_and_nothing_else(
    counter, facts, files, drop, scheme
):
    manager = _build(counter, facts, [], files, scheme)
    manager.prepare_request("q")
    manager.record_exchange("q", "a")
    for path in drop:
        manager.file_context.remove_file(path)
    text = json.dumps(manager.prepare_request("q2").messages)
    for path, content in files.items():
        block = json.dumps(format_file_block(path, content))[1:-1]
        assert (block in text) == (path not in drop)
