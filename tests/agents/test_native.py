"""The shared reading of the agents' own memory files (memloom.agents.native)."""

from __future__ import annotations

from pathlib import Path

from memloom.agents.native import (
    decode_key,
    frontmatter,
    guess_type,
    key_names,
    markdown_items,
    note_text,
    project_for_key,
    read_index,
    read_topic,
    sanitized_key,
)


def test_the_project_key_is_the_path_with_every_other_character_a_dash():
    assert sanitized_key("/home/me/shop") == "-home-me-shop"
    assert sanitized_key("/home/me/my_shop.v2") == "-home-me-my-shop-v2"


def test_a_long_key_is_matched_by_its_cut_and_hash_suffix():
    path = "/home/me/" + "a" * 250
    key = sanitized_key(path)[:200] + "-k3x9z"
    assert key_names(key, path)
    assert not key_names(key, "/home/me/" + "b" * 250)
    assert project_for_key(key, [path + "/src"]) == (path, "session")


def test_a_key_is_found_from_a_sessions_working_directory_or_on_disk(tmp_path):
    project = tmp_path / "work" / "my_shop"
    (project / "sub").mkdir(parents=True)
    key = sanitized_key(str(project))
    assert project_for_key(key, [str(project / "sub")]) == (str(project), "session")
    assert project_for_key(key, []) == (str(project), "folders")
    assert decode_key(key) == str(project)
    assert project_for_key(sanitized_key(str(tmp_path / "gone")), []) == (None, "project_unknown")
    assert decode_key("no-leading-dash") is None


def test_frontmatter_is_plain_yaml_and_anything_else_is_no_frontmatter():
    meta, body, first = frontmatter('---\nname: x\ndescription: "a, b"\n---\nBody\n')
    assert meta == {"name": "x", "description": "a, b"} and body == "Body\n" and first == 5
    assert frontmatter("---\n!!python/object:os.system x\n---\nB\n")[0] == {}
    assert frontmatter("---\n[unclosed\n---\nB\n")[0] == {}
    assert frontmatter("No frontmatter\n") == ({}, "No frontmatter\n", 1)


def test_note_text_keeps_the_words_of_bold_and_links():
    text = note_text(
        "Use pnpm.\n**Why:** lockfile.\n\n\n**How to apply:** see [[deploy-runbook]].\n"
    )
    assert text == "Use pnpm.\nWhy: lockfile.\n\nHow to apply: see deploy-runbook."
    assert len(note_text("x\n" * 5000)) <= 4000


def test_markdown_items_track_nested_sections():
    items = list(markdown_items("# A\n- one\n  more\n## B\n- two\n# C\npara\n"))
    assert items == [
        (("A",), "one\nmore", 2, 3),
        (("A", "B"), "two", 5, 5),
        (("C",), "para", 7, 7),
    ]


def test_types_from_the_agents_names_then_the_folder_then_the_words(tmp_path):
    note = read_topic(
        "---\nmetadata:\n  type: user\n---\nThe user is a backend dev.\n", tmp_path / "a.md"
    )
    assert note[0].kind == "preference"
    note = read_topic(
        "---\nname: x\n---\nThe CI runs on Buildkite.\n", tmp_path / "feedback" / "a.md"
    )
    assert note[0].kind == "preference"  # Qwen's type folder
    assert guess_type("Never force-push to main.") == "preference"
    assert guess_type("Run make check before pushing.", "General Tips") == "procedure"
    assert guess_type("The API listens on port 8080.") == "fact"


def test_an_index_keeps_only_lines_that_are_notes():
    notes = read_index(
        "- [Prefer pnpm](prefer-pnpm.md) — pnpm not npm\n"
        "- [Docs](https://example.com/x.md) — a link out is a note\n"
        "- The staging DB is on port 5433.\n"
    )
    assert [n.text for n in notes] == [
        "[Docs](https://example.com/x.md) — a link out is a note",
        "The staging DB is on port 5433.",
    ]


def test_an_empty_or_frontmatter_only_file_has_no_note(tmp_path: Path):
    assert read_topic("", tmp_path / "a.md") == []
    assert read_topic("---\nname: only-a-name\n---\n", tmp_path / "a.md")[0].text == "only-a-name"
