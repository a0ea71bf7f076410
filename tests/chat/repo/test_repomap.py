"""The repository map on a real git repository: ranking, budget, boundary, the symbol cache."""

from __future__ import annotations

import os

import pytest

from chat.llm.environment import configure_offline_environment
from chat.repo.repomap import builder, engine, parallel
from chat.repo.repomap.builder import RepoMaps, map_budget
from chat.repo.repomap.graph import GraphIndex, ordered_files, pagerank
from chat.repo.repomap.symbols import parse
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter
from tests.chat.repo.polyglot import FILES

configure_offline_environment()
COUNTER = TokenCounter()
RANKED = {
    # main.py uses models.py a lot and text.py once; nothing else refers to either.
    "app/main.py": (
        "from core.models import Order, Customer, load_orders\n"
        "from util.text import slug\n"
        "def run():\n"
        "    orders = load_orders()\n"
        "    first = Order(Customer('ann'))\n"
        "    return [Order(o) for o in orders], slug('x'), Customer('bob')\n"
    ),
    "core/models.py": (
        "class Customer:\n    def __init__(self, name): ...\n"
        "class Order:\n    def total(self) -> int: ...\n"
        "def load_orders() -> list[Order]: ...\n"
    ),
    "util/text.py": "def slug(text: str) -> str: ...\n",
    "other/report.py": "from util.text import slug\ndef report(): return slug('r')\n",
}


@pytest.fixture
def repo_files():
    return {
        **FILES,
        **RANKED,
        "secrets.py": "def leaked_api_key() -> str:\n    return 'k'\n",
        ".env": "TOKEN=1\n",
        "app/uses_secret.py": "leaked_api_key()\n",
    }


@pytest.fixture
def repo_is_git():
    return True


def build(root, maps=None, **kwargs):
    kwargs.setdefault("budget", 4000)
    return (maps or RepoMaps()).build(root, count=COUNTER.count_text, **kwargs)


def test_ranking_puts_the_file_most_referenced_by_the_selection_first(root):
    symbols, _ = RepoMaps().symbols(root)

    rank = pagerank(GraphIndex().update(symbols), {"app/main.py": 1.0})
    order = [p for p in ordered_files(rank) if p != "app/main.py"]

    assert order[:2] == ["core/models.py", "util/text.py"]


def test_the_selection_moves_the_top_of_the_ranking(root):
    symbols, _ = RepoMaps().symbols(root)

    rank = pagerank(GraphIndex().update(symbols), {"other/report.py": 1.0})

    assert [p for p in ordered_files(rank) if p != "other/report.py"][0] == "util/text.py"


def test_the_graph_updated_after_edits_equals_one_built_afresh(root):
    symbols, _ = RepoMaps().symbols(root)
    index = GraphIndex()
    index.update(symbols)
    edited = dict(symbols)
    edited["util/text.py"] = parse("util/text.py", "def slugify(text): ...\n")
    edited["new/uses.py"] = parse("new/uses.py", "slugify(load_orders())\n")
    del edited["other/report.py"]

    updated, fresh = index.update(edited), GraphIndex().update(edited)

    assert updated.edges == fresh.edges
    assert updated.uses == fresh.uses
    assert updated.defined_in == fresh.defined_in
    assert updated.edges["new/uses.py"].keys() == {"util/text.py", "core/models.py"}
    assert "util/text.py" not in updated.edges.get("app/main.py", {})  # slug is gone


@pytest.mark.parametrize("budget", [60, 150, 400, 1200])
def test_the_map_never_passes_its_budget(root, budget):
    built = build(root, budget=budget, selected=["app/main.py"])

    assert built.main
    assert COUNTER.count_text(built.main) <= budget - budget // builder.FOCUS_SHARE


def test_a_small_budget_keeps_what_the_selection_uses_most(root):
    built = build(root, budget=120, selected=["app/main.py"])

    assert "core/models.py:" in built.main
    assert "class Order" in built.main
    assert "def run()" not in built.main  # the selected file is in the prompt already


def test_a_large_budget_shows_every_language_and_paths_without_grammar(root):
    built = build(root, budget=8000)

    for path in ("py/shapes.py", "go/server.go", "rust/geometry.rs", "php/Invoice.php"):
        assert f"{path}:" in built.main
    assert "  func NewServer(port int) *Server" in built.main
    assert "\ndocs/notes.txt\n" in built.main + "\n"


def test_a_secret_file_never_appears_in_the_map(root):
    built = build(root, budget=8000, recent=["what does leaked_api_key return?"])

    assert "secrets.py" not in built.main + built.focus
    assert "leaked_api_key" not in built.main + built.focus
    assert ".env" not in built.main


def test_a_symlink_out_of_the_repository_is_never_read(root, tmp_path):
    (tmp_path / "outside.py").write_text("def stolen_secret_function(): ...\n")
    (root / "app/link.py").symlink_to(tmp_path / "outside.py")

    built = build(root, budget=8000, recent=["stolen_secret_function"])

    assert "stolen_secret_function" not in built.main + built.focus
    with pytest.raises(ValueError, match="outside the repository"):
        builder.outline(root, "app/link.py", RepoMaps())


def test_the_focus_names_definitions_the_recent_messages_mention(root):
    built = build(root, budget=200, selected=["app/main.py"], recent=["Why is make_invoice slow?"])

    assert "php/Invoice.php:" in built.focus
    assert "make_invoice" in built.focus
    assert "php/Invoice.php:" not in built.main


def test_the_map_is_byte_identical_when_nothing_changed(root):
    maps = RepoMaps()

    first = build(root, maps, selected=["app/main.py"], recent=["make_invoice"])
    second = build(root, maps, selected=["app/main.py"], recent=["Shape please"])

    assert second.main == first.main
    assert second.parsed == 0


def test_an_edited_file_is_the_only_one_parsed_again(root):
    maps = RepoMaps()
    first = build(root, maps)
    path = root / "util/text.py"
    path.write_text("def slug(text: str, sep: str = '-') -> str: ...\n")
    os.utime(path, ns=(1, 1))

    second = build(root, maps)

    assert first.parsed > 10
    assert second.parsed == 1
    assert "def slug(text: str, sep: str = '-') -> str" in second.main


def test_the_same_bytes_elsewhere_are_not_parsed_again(root):
    maps = RepoMaps()
    build(root, maps)
    (root / "copy").mkdir()
    (root / "copy/shapes.py").write_text(FILES["py/shapes.py"])

    assert build(root, maps).parsed == 0


def test_the_outline_of_one_file_is_its_signatures(root):
    text = builder.outline(root, "py/shapes.py", RepoMaps())

    assert text.splitlines() == [
        "py/shapes.py:",
        "  SIDES = 4",
        "  class Shape",
        "    def area(self, scale: float = 1.0) -> float",
        "  def make_square(side: int) -> Shape",
    ]


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("secrets.py", "secret"),
        (".git/config", "internal"),
        ("docs/notes.txt", "no grammar"),
        ("py/missing.py", "no such file"),
    ],
)
def test_the_outline_refuses_in_words(root, path, reason):
    with pytest.raises(ValueError, match=reason):
        builder.outline(root, path, RepoMaps())


def test_the_budget_is_a_sixteenth_of_the_window_at_most_8k():
    assert map_budget(32_000) == 2000
    assert map_budget(1_000_000) == 8000
    assert map_budget(1_000_000, 500) == 500
    assert map_budget(1_000_000, 0) == 0


def test_initial_tiers_put_the_most_referenced_selected_file_deepest(root):
    built = build(root, selected=["app/main.py", "core/models.py", "util/text.py"])

    assert dict(built.tiers) == {
        "core/models.py": "L1",
        "util/text.py": "L2",
        "app/main.py": "active",  # nothing refers to it
    }


def test_the_seed_scheme_starts_from_the_graphs_tiers(root):
    manager = ContextManager(
        ModelFacts(name="anthropic/claude-sonnet-4-5", max_input_tokens=200_000),
        COUNTER,
        repo_root=root,
        config=ContextConfig(tier_scheme="seed"),
    )
    for path in ("app/main.py", "core/models.py"):
        manager.file_context.add_file(path)

    selected = ["app/main.py", "core/models.py"]
    engine.fill(manager, RepoMaps(), selected=selected, pinned=[], user_text="hi", root=root)
    messages = manager.prepare_request("hi").messages

    assert manager.stability.tier_of("file:core/models.py") == "L1"
    assert manager.stability.tier_of("file:app/main.py") == "active"
    reference = [m for m in messages if "# Reference Files (L1)" in str(m["content"])]
    assert len(reference) == 1 and "class Order" in str(reference[0]["content"])


CACHING = {"max_input_tokens": 200_000, "supports_prompt_caching": True}
SONNET = ModelFacts(name="anthropic/claude-sonnet-4-5", **CACHING)
SELECTED = ("app/main.py", "core/models.py")


def seed_session(root, facts=SONNET, state=None) -> ContextManager:
    config = ContextConfig(tier_scheme="seed")
    if state is not None:
        return ContextManager.from_state(state, facts, COUNTER, repo_root=root, config=config)
    manager = ContextManager(facts, COUNTER, repo_root=root, config=config)
    for path in SELECTED:
        manager.file_context.add_file(path)
    return manager


def turns_at(manager, root, times) -> dict[str, str]:
    """Turns at the given clock readings, as chat.session.setchanges makes them; the tiers the
    last request went out with."""
    maps = RepoMaps()
    for now in times:
        engine.fill(manager, maps, selected=SELECTED, pinned=[], user_text="hi", root=root, now=now)
        manager.prepare_request("hi", now=now)
        manager.record_exchange("hi", "ok")
    return {p: manager.stability.tier_of(f"file:{p}") for p in SELECTED}


GRAPH_TIERS = {"app/main.py": "active", "core/models.py": "L1"}
GROWN = {"app/main.py": "L3", "core/models.py": "L0"}  # four requests on from the graph's


def test_a_session_with_short_gaps_keeps_its_tiers(root):
    manager = seed_session(root)
    assert turns_at(manager, root, [0, 60, 120, 180]) == GROWN
    assert turns_at(manager, root, [180 + 290, 180 + 580]) == GROWN


def test_a_pause_past_the_cache_lifetime_brings_the_graphs_tiers_back(root):
    manager = seed_session(root)
    assert turns_at(manager, root, [0, 60, 120, 180]) == GROWN
    # Anthropic's 5-minute lifetime, which the seed scheme's breakpoints write.
    assert turns_at(manager, root, [180 + 301]) == GRAPH_TIERS


def test_another_model_brings_the_graphs_tiers_back(root):
    manager = seed_session(root)
    assert turns_at(manager, root, [0, 60, 120, 180]) == GROWN
    opus = ModelFacts(name="anthropic/claude-opus-4-1", **CACHING)
    switched = seed_session(root, opus, manager.to_state())
    assert turns_at(switched, root, [190]) == GRAPH_TIERS


def test_a_model_that_caches_nothing_takes_the_graphs_tiers_on_every_request(root):
    uncached = ModelFacts(name="anthropic/claude-sonnet-4-5", max_input_tokens=200_000)
    assert turns_at(seed_session(root, uncached), root, [0, 60, 120, 180]) == GRAPH_TIERS


def test_the_graph_after_an_edit_that_keeps_or_adds_names_equals_one_built_afresh(root):
    symbols, _ = RepoMaps().symbols(root)
    index = GraphIndex()
    index.update(symbols)
    edited = dict(symbols)
    # the same names with another signature, then a second file defining a used name
    edited["util/text.py"] = parse("util/text.py", "def slug(text, sep='-'): ...\n")
    index.update(edited)
    edited["other/report.py"] = parse("other/report.py", "class Order: ...\nslug('r')\n")

    updated, fresh = index.update(edited), GraphIndex().update(edited)

    assert updated.edges == fresh.edges
    assert updated.uses == fresh.uses
    assert updated.edges["app/main.py"].keys() == {
        "core/models.py",
        "util/text.py",
        "other/report.py",
    }


def test_a_pool_of_processes_parses_chunks_as_one_process_does():
    found = {}
    parsing = parallel.Parsing(10**6, 2, found.__setitem__)
    parsing.chunk = 4
    for path, text in FILES.items():
        parsing.add(path, text.encode())

    assert parsing.finish() == len(FILES)
    assert parsing.pooled > 0  # chunks went to other processes
    assert found == {path: parse(path, text) for path, text in FILES.items()}
    assert list(found) == list(FILES)


def test_a_map_parsed_in_a_pool_equals_one_parsed_alone(root, monkeypatch):
    monkeypatch.setattr(parallel.Parsing, "chunk", 4)
    pooled, alone = RepoMaps(workers=2), RepoMaps(workers=1)

    assert pooled.symbols(root) == alone.symbols(root)
    assert build(root, pooled, selected=["app/main.py"]) == build(
        root, alone, selected=["app/main.py"]
    )


def test_the_start_up_build_leaves_nothing_to_parse_for_the_first_turn(root):
    maps = RepoMaps()

    maps.warm_in_background(root).join()

    assert not maps.warming(root)
    first = build(root, maps, selected=["app/main.py"])
    assert first.parsed == 0
    alone = build(root, RepoMaps(), selected=["app/main.py"])
    assert alone.parsed > 10
    assert (first.main, first.focus, first.tiers) == (alone.main, alone.focus, alone.tiers)


def test_a_turn_says_it_waits_while_the_start_up_build_runs(root):
    maps = RepoMaps()
    assert engine.warming_notice(maps, root) == ""

    with maps._symbols_lock:  # a build holds the repository: the warm-up waits behind it
        thread = maps.warm_in_background(root)
        assert engine.warming_notice(maps, root).startswith(engine.WARMING)
    thread.join()

    assert engine.warming_notice(maps, root) == ""
    done, total = maps.progress(root)  # what the notice counts while the build runs
    assert done == total > 0
