from __future__ import annotations

import pytest

from contextcore.prompt.assembly import ImageInput, PromptAssembler, PromptInputs
from tests.current_files import read_current_files

BIG = "word " * 1500  # over the 1024-token minimum cacheable prefix on its own


@pytest.fixture
def assembler(counter):
    return PromptAssembler(counter, min_cacheable_tokens=1024, provider="anthropic")


def _inputs(**kw):
    base = dict(
        system_prompt="You help.",
        files=(("a.py", "a = 1"),),
        history=({"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}),
        user_content="now?",
    )
    return PromptInputs(**{**base, **kw})


def _marked(message):
    content = message["content"]
    return isinstance(content, list) and any("cache_control" in b for b in content)


def _text(message):
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


# -- non-tiered ---------------------------------------------------------------------------


def test_the_system_message_comes_first_with_the_system_prompt(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs()))
    assert messages[0] == {"role": "system", "content": "You help."}


def test_the_symbol_map_is_appended_to_the_system_message(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs(repo_map="a.py: def f")))
    assert messages[0]["content"].endswith("# Repository Structure\na.py: def f")


def test_the_file_tree_is_a_user_assistant_pair(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs(file_tree="a.py\nb.py")))
    assert messages[1]["role"] == "user" and messages[1]["content"].startswith("# Repository Files")
    assert messages[2]["role"] == "assistant"


def test_url_context_is_a_pair_with_an_acknowledgement(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs(reference="Docs page")))
    index = next(i for i, m in enumerate(messages) if "Docs page" in _text(m))
    assert messages[index]["role"] == "user" and messages[index + 1]["role"] == "assistant"


def test_active_files_are_a_pair_under_working_files(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs()))
    assert (
        messages[1]["content"].startswith("# Working Files") and "a = 1" in messages[1]["content"]
    )
    assert messages[2]["role"] == "assistant"


def test_history_comes_before_the_current_prompt(assembler):
    messages = assembler.to_messages(assembler.flat(_inputs()))
    assert [m["content"] for m in messages[-3:]] == ["q1", "a1", "now?"]


def test_images_make_the_user_message_multimodal_and_none_keeps_a_string(assembler):
    image = ImageInput("image/png", "data:image/png;base64,AAAA", 100, 100)
    multi = assembler.to_messages(assembler.flat(_inputs(images=(image,))))[-1]["content"]
    assert multi == [
        {"type": "text", "text": "now?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    assert assembler.to_messages(assembler.flat(_inputs()))[-1]["content"] == "now?"


def test_estimate_prompt_tokens_is_positive(make_manager):
    assert make_manager().estimate_prompt_tokens("hello") > 0


def test_the_flat_layout_has_no_breakpoint_unless_asked_for_the_last_one(assembler):
    plain = assembler.to_messages(assembler.flat(_inputs(system_prompt=BIG)))
    assert not any(_marked(m) for m in plain)
    last = assembler.to_messages(assembler.flat(_inputs(system_prompt=BIG), cache_last=True))
    assert [i for i, m in enumerate(last) if _marked(m)] == [len(last) - 1]


# -- tiered (seed scheme) -----------------------------------------------------------------


def _tiers(mapping):
    return lambda key: mapping.get(key, "active")


def test_graduated_files_are_excluded_from_the_active_files_section(assembler):
    inputs = _inputs(files=(("a.py", "A"), ("b.py", "B")))
    messages = assembler.to_messages(assembler.tiered(inputs, _tiers({"file:a.py": "L1"})))
    working = next(m for m in messages if _text(m).startswith("# Working Files"))
    assert "b.py" in working["content"] and "a.py" not in working["content"]


def test_when_all_files_graduated_there_is_no_working_files_section(assembler):
    messages = assembler.to_messages(assembler.tiered(_inputs(), _tiers({"file:a.py": "L2"})))
    assert not any(_text(m).startswith("# Working Files") for m in messages)


def test_the_l0_system_message_has_cache_control_when_there_is_no_l0_history(assembler):
    messages = assembler.to_messages(assembler.tiered(_inputs(system_prompt=BIG), _tiers({})))
    assert _marked(messages[0])


def test_with_l0_history_cache_control_is_on_the_last_l0_history_message(assembler):
    tiers = _tiers({"history:0": "L0", "history:1": "L0"})
    messages = assembler.to_messages(assembler.tiered(_inputs(system_prompt=BIG), tiers))
    assert not _marked(messages[0]) and _marked(messages[2]) and _text(messages[2]) == "a1"


def test_an_l1_block_is_a_pair_with_the_l1_content(assembler):
    inputs = _inputs(system_prompt=BIG, files=(("a.py", "def symbol(): ..."),))
    messages = assembler.to_messages(assembler.tiered(inputs, _tiers({"file:a.py": "L1"})))
    assert messages[1]["role"] == "user" and "def symbol()" in _text(messages[1])
    assert _text(messages[1]).startswith("# Reference Files (L1)")
    assert messages[2]["role"] == "assistant" and _marked(messages[2])


def test_empty_tiers_produce_no_messages(assembler):
    chunks = assembler.tiered(_inputs(files=()), _tiers({}))
    assert [b.tier for b in chunks.blocks] == ["L0", "active"]


def test_tree_url_context_and_active_files_sit_between_the_tiers_and_the_prompt(assembler):
    inputs = _inputs(file_tree="TREE", reference="URLTEXT", files=(("a.py", "A"), ("b.py", "B")))
    messages = assembler.to_messages(assembler.tiered(inputs, _tiers({"file:a.py": "L3"})))
    texts = [_text(m) for m in messages]
    l3 = next(i for i, t in enumerate(texts) if t.startswith("# Reference Files (L3)"))
    tree = next(i for i, t in enumerate(texts) if "TREE" in t)
    url = next(i for i, t in enumerate(texts) if "URLTEXT" in t)
    active = next(i for i, t in enumerate(texts) if t.startswith("# Working Files"))
    assert l3 < tree < url < active < texts.index("q1") < texts.index("now?") == len(texts) - 1


def test_active_history_follows_active_files_and_precedes_the_prompt(assembler):
    messages = assembler.to_messages(assembler.tiered(_inputs(), _tiers({})))
    texts = [_text(m) for m in messages]
    active = next(i for i, t in enumerate(texts) if t.startswith("# Working Files"))
    assert active < texts.index("q1") < texts.index("a1") < texts.index("now?")


def test_multi_tier_order_is_l0_l1_l3_tree_active_prompt(assembler):
    inputs = _inputs(
        system_prompt=BIG,
        file_tree="TREE",
        files=(("l1.py", "ONE"), ("l3.py", "THREE"), ("act.py", "ACT")),
    )
    tiers = _tiers({"file:l1.py": "L1", "file:l3.py": "L3"})
    texts = [_text(m) for m in assembler.to_messages(assembler.tiered(inputs, tiers))]
    positions = [
        next(i for i, t in enumerate(texts) if marker in t)
        for marker in ("word word", "ONE", "THREE", "TREE", "ACT", "now?")
    ]
    assert positions == sorted(positions)


def test_each_non_empty_cached_tier_has_a_breakpoint(assembler):
    files = tuple((f"{t}.py", BIG) for t in ("l1", "l2", "l3"))
    tiers = _tiers({"file:l1.py": "L1", "file:l2.py": "L2", "file:l3.py": "L3"})
    chunks = assembler.tiered(_inputs(system_prompt=BIG, files=files), tiers)
    messages = assembler.to_messages(chunks)
    marked = [i for i, m in enumerate(messages) if _marked(m)]
    assert len(marked) == 4
    ends, position = [], -1
    for block in chunks.blocks:
        position += len(block.chunks)
        if block.cached:
            ends.append(position)
    assert marked == ends


def test_no_breakpoint_goes_on_a_prefix_below_the_minimum_cacheable_size(assembler):
    messages = assembler.to_messages(assembler.tiered(_inputs(), _tiers({"file:a.py": "L1"})))
    assert not any(_marked(m) for m in messages)


# -- appendonly (acdc) ----------------------------------------------------------------------


def test_the_acdc_layout_ends_with_a_manifest_naming_current_versions(make_manager):
    manager = make_manager()
    manager.file_context.add_file("a.py", "one\n")
    manager.prepare_request("q")
    manager.record_exchange("q", "a")
    manager.file_context.add_file("a.py", "two\n")
    messages = manager.prepare_request("again").messages
    assert read_current_files(messages) == {"a.py": "two\n"}
    assert "- a.py: version 2" in _text(messages[-3])


def test_breakdown_gives_tokens_per_section_and_tier(make_manager):
    manager = make_manager()
    manager.file_context.add_file("a.py", BIG)
    manager.add_exchange("q", "a")
    breakdown = manager.prepare_request("now").breakdown
    assert breakdown["sections"]["active_files"] > 1500
    assert breakdown["sections"]["history"] > 0 and breakdown["sections"]["current_message"] > 0
    assert set(breakdown["tiers"]) >= {"L0", "L1", "L2", "active"}
    assert sum(breakdown["tiers"].values()) == sum(breakdown["sections"].values())


def test_image_tokens_follow_the_pixel_formula_in_the_breakdown(make_manager):
    manager = make_manager()
    image = ImageInput("image/png", "data:image/png;base64,AAAA", 750, 750)
    with_image = manager.preview_request("look", [image]).breakdown["sections"]
    without = manager.preview_request("look").breakdown["sections"]
    assert with_image["current_message"] - without["current_message"] >= 750
