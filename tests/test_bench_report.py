"""``python -m bench report`` re-renders docs/benchmarks.md: sections no template makes
(written by hand from a one-off run) must survive it, where they were."""

from __future__ import annotations

from bench.report import keep_written_sections


def test_a_hand_written_section_stays_after_the_section_it_followed():
    old = "# Benchmarks\n\nold intro\n\n## A\n\na\n\n## Forget\n\nby hand\n\n## B\n\nb\n"
    new = "# Benchmarks\n\nnew intro\n\n## A\n\nnew a\n## B\n\nnew b\n"
    assert keep_written_sections(old, new) == (
        "# Benchmarks\n\nnew intro\n\n## A\n\nnew a\n\n## Forget\n\nby hand\n\n## B\n\nnew b\n"
    )


def test_sections_the_template_makes_are_replaced_not_kept():
    old = "# B\n\n## A\n\nold a\n"
    new = "# B\n\n## A\n\nnew a\n"
    assert keep_written_sections(old, new) == new


def test_a_section_after_the_first_heading_or_at_the_end_is_kept():
    old = "# B\n\n## Early\n\ne\n\n## A\n\na\n\n## Late\n\nl\n"
    new = "# B\n\n## A\n\nnew a\n"
    assert (
        keep_written_sections(old, new) == "# B\n\n## Early\n\ne\n\n## A\n\nnew a\n\n## Late\n\nl\n"
    )


def test_commands_and_notes_name_no_machine_s_work_folder():
    from bench.report import portable

    cmd = "scale.py --sizes 10000 --workdir /work/scale-10k --out /work/scale-10k/s.json"
    assert portable(cmd) == "scale.py --sizes 10000 --workdir <workdir> --out <workdir>/s.json"
    note = "`a --workdir /w/x --keep`, then `b --workdir /w/x --out …`; /w/xy is another"
    assert portable(note) == (
        "`a --workdir <workdir> --keep`, then `b --workdir <workdir> --out …`; /w/xy is another"
    )
    assert portable("no folder named: /w/x") == "no folder named: /w/x"
