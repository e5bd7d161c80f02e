"""sed's options read by one table (commands/sed.py, ``SED_OPTIONS``) for both of its readers:
the file tools' reading (what ``sed -i`` and ``w`` write, commands/files.py) and the words'
reading of the self-protection (which words are script text, ``sed_text_operands``). Command
lines are built from parts whose role is known by construction, and both readers must find
those roles."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from statewise.commands import analyze_command
from statewise.commands.sed import read_sed_script, sed_text_operands

FLAGS = ["-n", "-E", "-r", "-s", "-z", "--quiet", "--posix", "--debug", "--regexp-extended", "--separate"]
IN_PLACE = [[], ["-i"], ["-i.bak"], ["--in-place"], ["--in-place=.orig"], ["-i", ""]]
SCRIPTS = ["s/a/b/", "p", "1d", "/foo/d", "w out.txt", "r in.txt", "s/x/y/w log.txt", "$a\\\nself.env = 1",
           "2i\\\nsee .env.example"]
FILES = ["a.txt", "src/b.py", ".env", "docs/notes.md"]


@st.composite
def sed_lines(draw):
    """(args, the indexes of the script words, the files edited in place, whether in place)."""
    units: list[list[str]] = [[flag] for flag in draw(st.lists(st.sampled_from(FLAGS), max_size=3))]
    in_place = draw(st.sampled_from(IN_PLACE))
    if in_place:
        units.append(in_place)
    if draw(st.booleans()):
        units.append(["-l", "80"])
    with_e = draw(st.booleans())
    scripts = draw(st.lists(st.sampled_from(SCRIPTS), min_size=1, max_size=3 if with_e else 1))
    if with_e:
        units += [[draw(st.sampled_from(["-e", "--expression"])), script] for script in scripts]
    units = draw(st.permutations(units))
    args = [word for unit in units for word in unit]
    script_at = [index + 1 for index, word in enumerate(args[:-1]) if word in ("-e", "--expression")]
    if not with_e:
        script_at = [len(args)]
        args.append(scripts[0])
    files = draw(st.lists(st.sampled_from(FILES), max_size=3, unique=True))
    if files and draw(st.booleans()):
        args.append("--")
    args += files
    return args, script_at, files, bool(in_place)


@settings(max_examples=150, deadline=None)
@given(sed_lines())
def test_the_file_tools_and_the_words_read_sed_alike(tmp_path_factory, line):
    args, script_at, files, in_place = line
    read = read_sed_script("\n".join(args[index] for index in script_at))
    assert read is not None and not read.runs
    # The words' reading: the script words are text; the files the script names are kept.
    assert sed_text_operands(args) == (frozenset(script_at), read.reads + read.writes)
    # The file tools' reading: the script's `w` files, and the files edited in place.
    cwd = tmp_path_factory.getbasetemp()
    analysis = analyze_command(shlex.join(["sed", *args]), cwd=cwd)
    written = {via: [a.args["path"] for a in analysis.actions if a.operation == "fs.write" and a.args.get("via") == via]
               for via in ("sed w", "sed -i")}
    assert written["sed w"] == list(read.writes)
    assert written["sed -i"] == (files if in_place and not read.refused else [])
    assert not analysis.unresolved


def test_options_sed_does_not_have_leave_every_word_as_it_looks():
    # The file tools refuse the command (cannot check); the words stay names of files.
    assert sed_text_operands(["--frobnicate", "s/a/b/", "x.txt"]) is None
    assert "sed" in analyze_command("sed --frobnicate s/a/b/ x.txt", cwd="/").unresolved[0]


def test_bsd_in_place_with_an_empty_suffix_is_read_alike():
    # `sed -i '' 's/a/b/' .env`: '' is the backup suffix, the script is the next word.
    assert sed_text_operands(["-i", "", "s/a/b/", ".env"]) == (frozenset({2}), ())
