"""The normalizer's tables: read-only allow-lists, interactive sessions, install settings."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statewise.commands.words import _Spec

# --- tables --------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    return text.replace("?", "").split()


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "posh"})
_READ_ONLY = frozenset(_words("""
echo printf type true false test [ [[ sleep tput help
cd pushd popd export set unset shopt : read wait ulimit umask hash jobs fg bg disown declare typeset
local readonly let shift return exit break continue getopts times caller dirs logout
"""))
# Known programs that StateWise does not guard: not scanned for wrapped commands.
_KNOWN_UNGUARDED = frozenset(_words("""
mkdir cargo go gem bundle? apt apt-get aptitude dpkg brew dnf yum apk pacman zypper port snap flatpak
conda mamba micromamba pyenv rustup nvm volta asdf mise node deno bun? ruby perl php java javac mvn gradle
gcc g++ cc clang make? cmake ninja tar unzip ruff black isort flake8
mypy pyright pylint eslint prettier tsc git-lfs gh hub code open xdg-open awk gawk sed?
paste join fold fmt expand unexpand base64 iconv envsubst python-config
"""))
# Names whose appearance among an unknown program's arguments means it may run them.
_WRAPPED_DANGER = frozenset(_words("""
git rm rmdir unlink shred pip pip3 npm npx pnpm yarn uv uvx poetry sh bash zsh dash ksh fish eval sudo
doas xargs alembic rails rake prisma virtualenv tox pytest manage.py django-admin find mv cp dd truncate
chmod chown tee
"""))
_TRANSPARENT = frozenset({"nohup", "builtin", "coproc", "setsid", "chronic", "unbuffer", "busybox", "catchsegv"})
_NODE_RUNNERS = frozenset({"npx", "bunx", "pnpm", "yarn", "npm", "bun"})
_DEV_FILES = re.compile(r"^/dev/(null|stdout|stderr|tty|fd/\d+|zero)$")
_PYTHON_NAME = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?[tm]?$")
_PIP_NAME = re.compile(r"^pip(\d+(\.\d+)*)?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Environment variables that make a program run another command (or load code).
_DANGEROUS_ENV = re.compile(
    r"^(LD_PRELOAD|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|GIT_SSH|GIT_SSH_COMMAND|GIT_EDITOR|GIT_SEQUENCE_EDITOR|"
    r"GIT_PAGER|GIT_ASKPASS|GIT_EXTERNAL_DIFF|GIT_EXEC_PATH|GIT_PROXY_COMMAND|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|"
    r"GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_TEMPLATE_DIR|EDITOR|VISUAL|PAGER|MANPAGER|"
    r"LESSOPEN|LESSCLOSE)$")
# Editors that do nothing: `GIT_SEQUENCE_EDITOR=: git rebase -i --autosquash` takes the todo
# list as git generated it, so no session opens and nothing is run.
_NO_OP_EDITORS = frozenset({":", "true", "/bin/true", "/usr/bin/true"})
_EDITOR_ENV = frozenset({"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL"})
# git -c settings that run a command (or redirect the remote); they make the call unresolved.
_DANGEROUS_GIT_CONFIG = re.compile(
    r"^(alias\..*|core\.(sshcommand|pager|editor|hookspath|fsmonitor|askpass|gitproxy|alternaterefscommand)|"
    r"credential\..*|diff\..*\.(textconv|command)|diff\.external|merge\..*\.driver|filter\..*|gpg\..*program|"
    r"gpg\.program|sequence\.editor|uploadpack\..*|receive\..*|remote\..*\.(receivepack|uploadpack|proxy|url|pushurl)|"
    r"url\..*|protocol\..*|pager\..*|include\..*|includeif\..*|mergetool\..*|difftool\..*|web\.browser|"
    r"browser\..*|sendemail\..*|core\.worktree|ssh\..*|http\..*proxy.*|init\.templatedir)$", re.IGNORECASE)

_GIT_UNGUARDED = frozenset(_words("""
add am apply bisect bundle cherry-pick clone commit config fetch gc init maintenance merge
mv? notes prune pull repack replace rerere revert send-email sparse-checkout stash submodule
tag update-index symbolic-ref lfs reflog remote hash-object mktag mktree commit-tree read-tree
write-tree pack-refs fast-import fast-export filter-branch unpack-objects index-pack pack-objects
credential column interpret-trailers mailinfo mailsplit merge-file merge-tree stripspace
"""))


# --- read-only, proven from the argv ----------------------------------------------------------
# A program counts as read-only only when every option it is given is one listed here. An
# option that is not listed is an effect StateWise does not know (unresolved); an option that
# writes a file becomes an fs.write of that file (so the path checks apply); an option that
# runs a command, or makes the program do something else with effects, is unresolved with the
# reason given here.


@dataclass(frozen=True, slots=True)
class _ReadOnly:
    """How the argv of a read-only program is proven read-only."""

    spec: _Spec
    writes: frozenset[str] = frozenset()  # options whose value is a file the program writes
    effects: Mapping[str, str] = field(default_factory=dict)  # option -> what it does (unresolved)
    output_positional: int | None = None  # the positional that is a file written (uniq IN OUT)
    max_positionals: int | None = None  # more positionals are an effect (hostname NAME sets it)
    positional: str | None = None  # a regex every positional must match (date +FORMAT)
    numeric: bool = False  # -NUM (and +NUM) is a count: head -5, grep -3, seq 10 -1 1
    in_place: frozenset[str] = frozenset()  # options that make it write its file arguments (yq -i)

    @property
    def effectful(self) -> bool:
        return bool(self.writes or self.effects or self.output_positional is not None
                    or self.max_positionals is not None or self.positional or self.in_place)


def _ro(flags: str = "", valued: str = "", optional: str = "", *, writes: str = "",
        effects: Mapping[str, str] | None = None, **kwargs: Any) -> _ReadOnly:
    in_place = frozenset(kwargs.pop("in_place", "").split())
    spec = _Spec.of(flags + " " + " ".join(in_place), valued + " " + writes, optional)
    return _ReadOnly(spec, frozenset(writes.split()), dict(effects or {}), in_place=in_place, **kwargs)


_RUNS = "runs a command StateWise cannot see"
_LS = _ro("-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v -x "
          "-X -Z -1 -e -O -P -T -W -% -, --all --almost-all --author --escape --ignore-backups --directory --dired "
          "--classify --file-type --full-time --group-directories-first --no-group --human-readable --si "
          "--dereference-command-line --dereference-command-line-symlink-to-dir --inode --kibibytes --dereference "
          "--literal --numeric-uid-gid --hide-control-chars --show-control-chars --quote-name --reverse --recursive "
          "--size --context --zero --help --version",
          "-I -w --block-size --hide --ignore --width --tabsize --sort --time-style --format --indicator-style "
          "--quoting-style",
          "--color --colour --hyperlink --time --classify")
_GREP = _ro("-E -F -G -P -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -a -I -r -R -U -u -V "
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case "
            "--invert-match --word-regexp --line-regexp --count --files-without-match --files-with-matches "
            "--only-matching --quiet --silent --no-messages --byte-offset --with-filename --no-filename "
            "--line-number --initial-tab --null --null-data --text --recursive --dereference-recursive "
            "--line-buffered --binary --help --version",
            "-e -f -m -A -B -C -D -d --regexp --file --max-count --after-context --before-context --context "
            "--label --binary-files --devices --directories --exclude --exclude-from --exclude-dir --include",
            "--color --colour", numeric=True)
_RG = _ro("-i -S -s -F -l -L -n -N -H -I -o -p -q -v -w -x -a -c -u -uu -uuu -U -P -z -0 -b -h -V -. "
          "--ignore-case --smart-case --case-sensitive --fixed-strings --files-with-matches --files-without-match "
          "--files --follow --line-number --no-line-number --no-heading --heading --with-filename --no-filename "
          "--hidden --no-hidden --unrestricted --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global "
          "--no-ignore-parent --no-ignore-exclude --no-ignore-files --no-ignore-messages --only-matching --pretty "
          "--quiet --invert-match --word-regexp --line-regexp --json --vimgrep --column --no-column --byte-offset "
          "--stats --trim --null --null-data --text --binary --no-binary --multiline --multiline-dotall --pcre2 "
          "--no-pcre2 --no-config --no-messages --debug --trace --passthru --passthrough --crlf --no-crlf "
          "--line-buffered --block-buffered --no-unicode --one-file-system --search-zip --count --count-matches "
          "--type-list --no-require-git --sort-files --max-columns-preview --include-zero --no-filename "
          "--glob-case-insensitive --ignore-file-case-insensitive --help --version",
          "-e -f -A -B -C -g -M -m -d -j -t -T -E -r --regexp --file --after-context --before-context --context "
          "--glob --iglob --max-columns --max-count --max-depth --maxdepth --threads --type --type-not --type-add "
          "--type-clear --encoding --replace --max-filesize --ignore-file --sort --sortr --engine "
          "--context-separator --field-match-separator --field-context-separator --path-separator --dfa-size-limit "
          "--regex-size-limit --pre --pre-glob --hostname-bin --hyperlink-format",
          "--color --colors", effects={"--pre": "runs a preprocessor command on every file",
                                       "--hostname-bin": "runs a program"}, numeric=True)
_HEAD = _ro("-q -v -z --quiet --silent --verbose --zero-terminated --help --version",
            "-c -n --bytes --lines", numeric=True)
_TAIL = _ro("-f -F -q -v -z -r --quiet --silent --verbose --zero-terminated --retry --help --version",
            "-c -n -s --bytes --lines --pid --sleep-interval --max-unchanged-stats", "--follow", numeric=True)
_CAT = _ro("-A -b -e -E -n -s -t -T -u -v -l --show-all --number-nonblank --number --squeeze-blank --show-ends "
           "--show-tabs --show-nonprinting --help --version")
_WC = _ro("-c -m -l -L -w --bytes --chars --lines --max-line-length --words --help --version",
          "--files0-from --total")
_SUMS = _ro("-b -c -t -z -w --binary --check --text --zero --tag --untagged --quiet --status --strict --warn "
            "--ignore-missing --help --version", "-l --length")

_READ_ONLY_ARGS: dict[str, _ReadOnly] = {
    **{name: _LS for name in ("ls", "ll", "la", "dir", "vdir")},
    "cat": _CAT,
    **{name: _ro("-A -p -P -n -f -u -S -V -h --plain --paging --number --force-colorization --unbuffered "
                 "--chop-long-lines --show-all --list-themes --list-languages --diff --help --version",
                 "-l -H -r -m --language --highlight-line --file-name --diff-context --tabs --wrap --terminal-width "
                 "--italic-text --decorations --theme --style --line-range --map-syntax --pager",
                 "--color", effects={"--pager": "runs a pager command"}) for name in ("bat", "batcat")},
    "head": _HEAD,
    "tail": _TAIL,
    **{name: _GREP for name in ("grep", "egrep", "fgrep", "zgrep")},
    "rg": _RG,
    "ag": _ro("-a -c -f -G -i -l -L -n -Q -s -S -u -U -v -w -z -0 --all-types --count --follow --hidden "
              "--ignore-case --smart-case --case-sensitive --literal --nocolor --color --column --nogroup --group "
              "--noheading --heading --filename --nofilename --files-with-matches --files-without-matches "
              "--skip-vcs-ignores --unrestricted --word-regexp --search-zip --null --print0 --stats --vimgrep "
              "--numbers --nonumbers --only-matching --silent --help --version -h -V",
              "-A -B -C -g -m -p --after --before --context --file-search-regex --ignore --ignore-dir --max-count "
              "--path-to-ignore --depth --workers --pager",
              effects={"--pager": "runs a pager command"}, numeric=True),
    "ack": _ro("-i -I -s -S -v -w -x -c -l -L -h -H -f -g -k -n -1 -Q --ignore-case --smart-case --invert-match "
               "--word-regexp --line-regexp --count --files-with-matches --files-without-matches --no-filename "
               "--with-filename --follow --nofollow --literal --nocolor --noenv --column --nocolumn --noheading "
               "--heading --nobreak --break --group --nogroup --sort-files --help --version --noignore-dir "
               "--recurse --no-recurse -r -R",
               "-A -B -C -m -t -T --after-context --before-context --context --max-count --type --ignore-dir "
               "--ignore-file --match --pager --output",
               "--color --colour",
               effects={"--pager": "runs a pager command", "--output": "evaluates a Perl expression per match"}),
    "wc": _WC,
    "pwd": _ro("-L -P --help --version"),
    "which": _ro("-a -s --all --skip-alias --skip-dot --skip-tilde --show-dot --show-tilde --read-alias "
                 "--read-functions --skip-functions --tty-only -i -v -V --version --help"),
    "whereis": _ro("-b -m -s -u -l -g", "-B -M -S -f"),
    "whoami": _ro("--help --version"),
    "id": _ro("-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero --help --version"),
    "groups": _ro("--help --version"),
    "date": _ro("-R -u --rfc-email --utc --universal --debug --help --version",
                "-d -f -r --date --file --reference --rfc-3339", "-I --iso-8601", positional=r"^\+"),
    "printenv": _ro("-0 --null --help --version"),
    "stat": _ro("-L -f -t --dereference --file-system --terse --help --version", "-c --format --printf --cached"),
    "file": _ro("-b -i -L -h -z -Z -k -s -r -0 -N -p -E -l -S --brief --mime --mime-type --mime-encoding "
                "--dereference --no-dereference --uncompress --uncompress-noreport --keep-going --special-files "
                "--raw --print0 --no-pad --preserve-date --extension --apple --no-sandbox --help --version",
                "-e -F -m -f -P --exclude --exclude-quiet --separator --magic-file --files-from --parameter"),
    "du": _ro("-a -b -c -D -H -h -k -L -l -m -P -S -s -x -0 --all --apparent-size --bytes --total "
              "--dereference-args --human-readable --si --count-links --dereference --no-dereference "
              "--separate-dirs --summarize --one-file-system --null --inodes --help --version",
              "-B -d -t -X --block-size --max-depth --threshold --exclude --exclude-from --files0-from --time-style",
              "--time"),
    "df": _ro("-a -h -H -i -k -l -P -T --all --human-readable --si --inodes --local --portability --print-type "
              "--total --sync --no-sync --help --version", "-B -t -x --block-size --type --exclude-type", "--output"),
    "tree": _ro("-a -d -l -f -x -R -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -i -A -S -n -C -X -J --gitignore "
                "--ignore-case --matchdirs --metafirst --prune --info --noreport --si --du --inodes --device "
                "--dirsfirst --filesfirst --nolinks --fromfile --fromtabfile --fflinks --help --version",
                "-L -P -I -H -T --infofile --charset --filelimit --timefmt --sort --hintro --houtro", writes="-o"),
    "diff": _ro("-q -s -c -u -e -n -y -l -r -N -i -E -Z -b -w -B -a -d -t -T -p --brief --report-identical-files "
                "--ed --rcs --side-by-side --left-column --suppress-common-lines --show-c-function --expand-tabs "
                "--initial-tab --suppress-blank-empty --paginate --recursive --no-dereference --new-file "
                "--unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case --ignore-case "
                "--ignore-tab-expansion --ignore-trailing-space --ignore-space-change --ignore-all-space "
                "--ignore-blank-lines --text --strip-trailing-cr --minimal --speed-large-files --normal --help "
                "--version -v",
                "-C -U -W -F -x -X -S -I -D --width --show-function-line --tabsize --exclude --exclude-from "
                "--starting-file --from-file --to-file --ignore-matching-lines --ifdef --line-format "
                "--old-line-format --new-line-format --unchanged-line-format --old-group-format --new-group-format "
                "--changed-group-format --unchanged-group-format --horizon-lines --palette --label",
                "--unified --context --color"),
    "cmp": _ro("-b -l -s --print-bytes --verbose --quiet --silent --help --version", "-i -n --ignore-initial --bytes"),
    "comm": _ro("-1 -2 -3 -z --check-order --nocheck-order --total --zero-terminated --help --version",
                "--output-delimiter"),
    "cut": _ro("-n -s -z --complement --only-delimited --zero-terminated --help --version",
               "-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter"),
    "tr": _ro("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help --version"),
    "basename": _ro("-a -z --multiple --zero --help --version", "-s --suffix"),
    "dirname": _ro("-z --zero --help --version"),
    "realpath": _ro("-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical "
                    "--quiet --strip --no-symlinks --zero --help --version", "--relative-to --relative-base"),
    "readlink": _ro("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing "
                    "--no-newline --quiet --silent --verbose --zero --help --version"),
    "jq": _ro("-n -r -j -a -c -s -S -e -C -M -R -h -V --tab --seq --stream --stream-errors --slurp --raw-input "
              "--null-input --compact-output --raw-output --raw-output0 --join-output --ascii-output --sort-keys "
              "--color-output --monochrome-output --exit-status --unbuffered --help --version --args --jsonargs "
              "--build-configuration",
              "-f -L --indent --from-file --arg --argjson --slurpfile --rawfile"),
    "yq": _ro("-e -P -C -M -N -r -j -n -0 -y -Y -v -V -h --exit-status --prettyPrint --colors --no-colors --no-doc "
              "--unwrapScalar --tojson --null-input --nul-output --verbose --version --help",
              "-o -p -I --output-format --input-format --indent --front-matter --expression --from-file --arg",
              in_place="-i --inplace --in-place",
              effects={"-s": "writes a file per document", "--split-exp": "writes a file per document"}),
    "xxd": _ro("-a -b -C -e -E -i -p -r -u -d -v -h", "-c -g -l -o -s -n", output_positional=1),
    "od": _ro("-b -c -d -f -i -l -o -s -x -v --output-duplicates --traditional --help --version",
              "-A -j -N -t --address-radix --skip-bytes --read-bytes --format --endian", "-S -w --strings --width"),
    "hexdump": _ro("-b -c -C -d -o -x -v", "-e -f -n -s -L"),
    "strings": _ro("-a -d -f -w -U -v -V --all --data --print-file-name --include-all-whitespace --help --version",
                   "-n -t -o -e -s -T --bytes --radix --encoding --output-separator --target --unicode", numeric=True),
    **{name: _SUMS for name in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum")},
    "shasum": _ro("-b -c -t -U -0 -s -w --binary --check --text --tag --status --quiet --strict --warn "
                  "--ignore-missing --UNIVERSAL --01 --help --version", "-a --algorithm"),
    "cksum": _ro("--base64 --raw --tag --untagged --check -c --debug -z --zero --help --version",
                 "-a -l --algorithm --length"),
    "column": _ro("-t -x -n -e -J -L -d --table --fillrows --json --keep-empty-lines --table-noheadings --help "
                  "--version", "-c -s -o -N -R -T -E -H -O -W -r -l --output-width --separator --output-separator "
                  "--table-columns --table-right --table-truncate --table-noextreme --table-hide --table-order "
                  "--table-wrap --table-name --tree --tree-id --tree-parent"),
    "nl": _ro("-p --no-renumber --help --version", "-b -d -f -h -i -l -n -s -v -w --body-numbering "
              "--section-delimiter --footer-numbering --header-numbering --line-increment --join-blank-lines "
              "--number-format --number-separator --starting-line-number --number-width"),
    "tac": _ro("-b -r --before --regex --help --version", "-s --separator"),
    "rev": _ro("--help --version"),
    "seq": _ro("-w --equal-width --help --version", "-f -s --format --separator", numeric=True),
    "uname": _ro("-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version "
                 "--machine --processor --hardware-platform --operating-system --help --version"),
    "hostname": _ro("-a -A -d -f -i -I -s -y --alias --all-fqdns --domain --fqdn --long --ip-address "
                    "--all-ip-addresses --short --yp --nis --help --version", max_positionals=0),
    "ps": _ro("-A -a -d -e -f -F -H -j -l -L -M -N -T -w -x -y -Z -c -r -m -V --forest --headers --no-headers "
              "--cumulative --help --version --deselect",
              "-C -G -g -o -O -p -q -s -t -u -U --cols --columns --format --group --Group --pid --ppid --quick-pid "
              "--sid --sort --tty --user --User --width --rows --lines"),
    "pgrep": _ro("-l -a -c -f -i -n -o -v -w -x -q -A --list-name --list-full --count --full --ignore-case --newest "
                 "--oldest --inverse --lightweight --exact --quiet --ignore-ancestors --help --version",
                 "-d -g -G -O -P -s -t -u -U -r -F --delimiter --pgroup --group --older --parent --session "
                 "--terminal --euid --uid --runstates --pidfile --ns --nslist"),
    "free": _ro("-b -k -m -g -h -l -t -w -v --bytes --kilo --mega --giga --tera --peta --kibi --mebi --gibi "
                "--tebi --pebi --human --si --lohi --total --wide --committed --help --version",
                "-c -s --count --seconds"),
    "uptime": _ro("-p -s --pretty --since --help --version"),
    "locale": _ro("-a -m -c -k -v --all-locales --charmaps --category-name --keyword-name --verbose --help "
                  "--version"),
    "clear": _ro("-x -V", "-T"),
    "zcat": _ro("-f -l -q -v -L -V -h -t --force --list --quiet --verbose --license --version --help --test"),
    "lsof": _ro("-a -b -C -h -l -n -N -O -P -R -t -U -v -V -w -X -Q", "-A -c -d -D -e -F -g -k -K -L -m -o -p -r "
                "-s -S -T -u -z -x +c +d +D +f", "-i +L"),
    "nproc": _ro("--all --help --version", "--ignore"),
    "arch": _ro("--help --version"),
    "getconf": _ro("-a", "-v"),
    "lsb_release": _ro("-a -i -d -r -c -s -v -h --all --id --description --release --codename --short --help"),
    "history": _ro("", max_positionals=1, positional=r"^\d+$"),
    "sort": _ro("-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks --dictionary-order "
                "--ignore-case --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort "
                "--numeric-sort --random-sort --reverse --version-sort --merge --stable --unique --zero-terminated "
                "--debug --help --version",
                "-k -t -S -T --key --field-separator --buffer-size --temporary-directory --parallel --batch-size "
                "--random-source --files0-from --sort --compress-program", "--check", writes="-o --output",
                effects={"--compress-program": "runs a compression program"}),
    "uniq": _ro("-c -d -i -u -z --count --repeated --ignore-case --unique --zero-terminated --help --version",
                "-f -s -w --skip-fields --skip-chars --check-chars", "-D --all-repeated --group",
                output_positional=1),
}

# Read-only git subcommands and their options (shared groups first).
_GIT_DIFF_FLAGS = (
    "-p -u --patch -s --no-patch --raw --patch-with-raw -t --indent-heuristic --no-indent-heuristic --minimal "
    "--patience --histogram --numstat --shortstat --summary --patch-with-stat -z --name-only --name-status "
    "--no-color --no-color-moved --no-color-moved-ws --no-renames --rename-empty --no-rename-empty --check "
    "--full-index --binary --text -a --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w "
    "--ignore-all-space --ignore-blank-lines -W --function-context --exit-code --quiet --ext-diff --no-ext-diff "
    "--textconv --no-textconv --no-prefix --default-prefix --ita-invisible-in-index --ita-visible-in-index -R "
    "--cached --staged --merge-base --no-index -1 -2 -3 -0 --base --ours --theirs --cumulative "
    "--irreversible-delete -D --find-copies-harder --no-relative --compact-summary --pickaxe-all "
    "--pickaxe-regex --no-stat --histogram --remerge-diff --no-indent-heuristic --ignore-submodules")
_GIT_DIFF_VALUED = (
    "-U -S -G -O -l -I --unified --diff-algorithm --anchored --src-prefix --dst-prefix --line-prefix "
    "--inter-hunk-context --output-indicator-new --output-indicator-old --output-indicator-context --diff-filter "
    "--find-object --skip-to --rotate-to --ignore-matching-lines --color-moved-ws --stat-width --stat-name-width "
    "--stat-graph-width --stat-count --word-diff-regex --diff-merges")
_GIT_DIFF_OPTIONAL = (
    "--stat --dirstat -X --dirstat-by-file --color --color-moved --color-words --word-diff --submodule "
    "--ignore-submodules --abbrev --relative -M --find-renames -C --find-copies -B --break-rewrites "
    "--ws-error-highlight")
_GIT_REV_FLAGS = (
    "--all --reflog --not --merges --no-merges --first-parent --exclude-first-parent-only --bisect --left-only "
    "--right-only --cherry-pick --cherry-mark --cherry --left-right --boundary --reverse --topo-order "
    "--date-order --author-date-order --simplify-by-decoration --full-history --dense --sparse --simplify-merges "
    "--show-pulls --walk-reflogs -g --merge --oneline --abbrev-commit --no-abbrev-commit --no-abbrev "
    "--relative-date --parents --children --graph --no-graph --show-signature --no-decorate --source "
    "--use-mailmap --mailmap --no-mailmap --no-use-mailmap --full-diff --log-size --no-notes --standard-notes "
    "--no-standard-notes --no-expand-tabs --regexp-ignore-case -i --basic-regexp -E --extended-regexp -F "
    "--fixed-strings -P --perl-regexp --all-match --invert-grep --remove-empty --no-min-parents --no-max-parents "
    "--count --objects --objects-edge --unpacked --timestamp --do-walk --single-worktree --ignore-missing "
    "--alternate-refs -m -c --cc --dd --no-diff-merges --combined-all-paths --clear-decorations --stdin "
    "--follow --no-follow --in-commit-order --no-walk --indexed-objects --header --quiet")
_GIT_REV_VALUED = (
    "-n --max-count --skip --since --after --since-as-filter --until --before --author --committer --grep "
    "--grep-reflog --min-parents --max-parents -L --exclude --glob --decorate-refs --decorate-refs-exclude "
    "--encoding --max-age --min-age")
_GIT_REV_OPTIONAL = (
    "--pretty --format --decorate --date --branches --tags --remotes --notes --show-notes --ancestry-path "
    "--expand-tabs --no-walk --show-linear-break --exclude-hidden")


def _git_ro(flags: str = "", valued: str = "", optional: str = "", *, diff: bool = False, rev: bool = False,
            writes: str = "", effects: Mapping[str, str] | None = None, numeric: bool = False,
            flag_wins: str = "") -> _ReadOnly:
    """A git subcommand's options; ``flag_wins`` are its own flags that a shared group takes a
    value for (``git shortlog -n`` is --numbered, not --max-count)."""
    if diff:
        flags, valued, optional = (f"{flags} {_GIT_DIFF_FLAGS}", f"{valued} {_GIT_DIFF_VALUED}",
                                   f"{optional} {_GIT_DIFF_OPTIONAL}")
    if rev:
        flags, valued, optional = (f"{flags} {_GIT_REV_FLAGS}", f"{valued} {_GIT_REV_VALUED}",
                                   f"{optional} {_GIT_REV_OPTIONAL}")
    dropped = set(flag_wins.split())
    valued = " ".join(name for name in valued.split() if name not in dropped)
    return _ro(flags + " -h --help", valued, optional, writes=writes, effects=effects, numeric=numeric)


_GIT_OUTPUT = "--output"  # git diff/log/show --output=F writes F instead of standard output
_GIT_READ_ONLY_ARGS: dict[str, _ReadOnly] = {
    "status": _git_ro("-s --short -b --branch --show-stash --long -v --verbose -z --no-column --ahead-behind "
                      "--no-ahead-behind --renames --no-renames --no-optional-locks",
                      "", "--porcelain -u --untracked-files --ignore-submodules --ignored --column --find-renames"),
    "diff": _git_ro(diff=True, writes=_GIT_OUTPUT),
    "log": _git_ro("--no-follow", diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "whatchanged": _git_ro(diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "show": _git_ro(diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "diff-files": _git_ro("-r -q", diff=True, writes=_GIT_OUTPUT),
    "diff-index": _git_ro("-r -m", diff=True, writes=_GIT_OUTPUT),
    "diff-tree": _git_ro("-r -t -v --root --always --no-commit-id", diff=True, rev=True, writes=_GIT_OUTPUT),
    "range-diff": _git_ro("--no-dual-color --left-only --right-only", "--creation-factor", diff=True, rev=True,
                          writes=_GIT_OUTPUT),
    "blame": _git_ro("-b --root --show-stats -l -t -f --show-name -n --show-number -s -e --show-email -w "
                     "--incremental --porcelain -p --line-porcelain -c --score-debug --progress --no-progress "
                     "--minimal --color-lines --color-by-age --first-parent",
                     "-L -S --contents --reverse --since --ignore-rev --ignore-revs-file --date --encoding",
                     "-M -C --abbrev"),
    "annotate": _git_ro("-b --root --show-stats -l -t -f -n -s -e -w -p -c --incremental --porcelain",
                        "-L -S --contents --reverse --date --encoding", "-M -C --abbrev"),
    "describe": _git_ro("--all --tags --contains --exact-match --debug --long --always --first-parent",
                        "--candidates --match --exclude", "--abbrev --dirty --broken"),
    "rev-parse": _git_ro(
        "--parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long --revs-only --no-revs --flags "
        "--no-flags --default --verify -q --quiet --sq --not --symbolic --symbolic-full-name --all --branches "
        "--tags --remotes --local-env-vars --git-dir --git-common-dir --absolute-git-dir --is-inside-git-dir "
        "--is-inside-work-tree --is-bare-repository --is-shallow-repository --resolve-git-dir --show-cdup "
        "--show-prefix --show-toplevel --show-superproject-working-tree --shared-index-path --show-object-format "
        "--show-ref-format --since --after --until --before --git-path --show-current --end-of-options",
        "--prefix --path-format --glob --exclude --exclude-hidden --resolve-git-dir --git-path",
        "--abbrev-ref --short --disambiguate --branches --tags --remotes --show-object-format"),
    "ls-files": _git_ro("-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored "
                        "--stage --unmerged --killed --directory --no-empty-directory --eol --deduplicate "
                        "--full-name --recurse-submodules --debug --sparse --error-unmatch --resolve-undo "
                        "--exclude-standard",
                        "-x -X --exclude --exclude-from --exclude-per-directory --with-tree --format", "--abbrev"),
    "ls-tree": _git_ro("-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree",
                       "--format", "--abbrev"),
    "ls-remote": _git_ro("--heads --tags --branches --refs --exit-code --get-url --symref -q --quiet -t -b",
                         "--sort -o --server-option --upload-pack",
                         effects={"--upload-pack": _RUNS}),
    "cat-file": _git_ro("-t -s -e -p --textconv --filters --batch-all-objects --buffer --unordered "
                        "--follow-symlinks --allow-unknown-type -Z --mailmap --no-mailmap --use-mailmap",
                        "--path", "--batch --batch-check --batch-command"),
    # shortlog's --committer groups by committer (a flag); git log's --committer=PATTERN also works.
    "shortlog": _git_ro("-n --numbered -s --summary -e --email -c", "--group", "-w --committer",
                        rev=True, numeric=True, flag_wins="-n --committer"),
    "grep": _git_ro("--cached --no-index --untracked --no-exclude-standard --exclude-standard "
                    "--recurse-submodules -a --text --textconv --no-textconv -i --ignore-case -I -r --recursive "
                    "--no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E --extended-regexp -G "
                    "--basic-regexp -P --perl-regexp -F --fixed-strings -n --line-number --column -l "
                    "--files-with-matches --name-only -L --files-without-match -z --null -o --only-matching -c "
                    "--count --no-color --break --heading -p --show-function -W --function-context --and --or "
                    "--not --all-match -q --quiet",
                    "--max-depth --threads -f -e -A -B -C --context --after-context --before-context -m "
                    "--max-count",
                    "--color -O --open-files-in-pager",
                    effects={"-O": "runs a command on the files that match",
                             "--open-files-in-pager": "runs a command on the files that match"}, numeric=True),
    "show-ref": _git_ro("--head --branches --heads --tags -d --dereference -s --verify --exists -q --quiet",
                        "", "--hash --abbrev --exclude-existing"),
    "for-each-ref": _git_ro("--shell -s --perl -p --python --tcl --ignore-case --omit-empty --include-root-refs "
                            "--stdin", "--count --sort --format --points-at --exclude",
                            "--color --merged --no-merged --contains --no-contains"),
    "merge-base": _git_ro("-a --all --octopus --independent --is-ancestor --fork-point"),
    "rev-list": _git_ro("--bisect-all --bisect-vars --objects-edge-aggressive --no-object-names --object-names "
                        "--use-bitmap-index --exclude-promisor-objects", "--filter --missing --progress",
                        "--disk-usage", rev=True, numeric=True),
    "name-rev": _git_ro("--tags --all --annotate-stdin --stdin --name-only --no-undefined --always",
                        "--refs --exclude"),
    "version": _git_ro("--build-options"),
    "help": _git_ro("-a -g -i -m -c -u -w --all --guides --config --user-interfaces --developer-interfaces "
                    "--verbose --no-verbose --no-external-commands --no-aliases --info --man --web",
                    effects={"-w": "opens a web browser", "--web": "opens a web browser"}),
    "count-objects": _git_ro("-v --verbose -H --human-readable"),
    "check-ignore": _git_ro("-q --quiet -v --verbose --stdin -z -n --non-matching --no-index"),
    "check-attr": _git_ro("-a --all --cached --stdin -z", "--source"),
    "check-ref-format": _git_ro("--normalize --allow-onelevel --no-allow-onelevel --refspec-pattern --branch"),
    "cherry": _git_ro("-v", "", "--abbrev"),
    "var": _git_ro("-l"),
    "show-branch": _git_ro("-r --remotes -a --all --current --no-color --date-order --topo-order --sparse --list "
                           "--merge-base --independent --no-name --sha1-name --topics -g",
                           "", "--color --more --reflog"),
    "fsck": _git_ro("--unreachable --no-dangling --dangling --root --tags --cache --no-reflogs --full --no-full "
                    "--connectivity-only --strict --verbose -v --progress --no-progress --name-objects "
                    "--references --no-references --lost-found",
                    effects={"--lost-found": "writes the dangling objects into .git/lost-found"}),
    "verify-commit": _git_ro("-v --verbose --raw"),
    "verify-tag": _git_ro("-v --verbose --raw", "--format"),
    "get-tar-commit-id": _git_ro(),
    "archive": _git_ro("-l --list -v --verbose --worktree-attributes -0 -1 -2 -3 -4 -5 -6 -7 -8 -9",
                       "--format --prefix --add-file --add-virtual-file --mtime --remote --exec",
                       writes="-o --output",
                       effects={"--remote": "runs git-upload-archive on another machine", "--exec": _RUNS}),
    "format-patch": _git_ro(
        "--stdout --cover-letter --no-cover-letter --numbered -n -N --no-numbered -k --keep-subject --signoff -s "
        "--no-signature --no-thread --ignore-if-in-upstream --always --no-attach --progress --zero-commit "
        "--encode-email-headers --no-encode-email-headers --force-in-body-from --no-force-in-body-from -q "
        "--quiet --no-binary --no-notes",
        "--start-number --signature --signature-file --suffix --subject-prefix -v --reroll-count --to --cc "
        "--in-reply-to --add-header --base --interdiff --range-diff --creation-factor --filename-max-length "
        "--cover-from-description --description-file -o --output-directory",
        "--rfc --from --thread --attach --inline --notes", diff=True, rev=True, numeric=True, flag_wins="-n --committer"),
    "request-pull": _git_ro("-p"),
    "bugreport": _git_ro("--no-diagnose", "-o --output-directory -s --suffix", "--diagnose"),
}
# git subcommands that start a program reading the terminal, or a server: never read-only.
_GIT_SESSIONS = {"instaweb": "starts a web server (instaweb.httpd) StateWise cannot see",
                 "difftool": "opens the configured diff tool", "mergetool": "opens the configured merge tool",
                 "gui": "opens a graphical tool", "citool": "opens a graphical tool"}

# --- interactive sessions ----------------------------------------------------------------------
# A program that reads its program or commands from the terminal opens a session whose later
# input (typed by the agent through a tool such as Codex's write_stdin) never reaches the hook.
# Such a call is unresolved. Each entry says what gives the program its input without a
# session: an option with inline code or a script (-c, -e, -f), a positional script, or
# standard input that is not the terminal (a pipe, a file, a heredoc).


@dataclass(frozen=True, slots=True)
class _Session:
    """When a program opens an interactive session."""

    what: str  # "an interpreter", "a database shell", "an editor", "a pager", ...
    valued: frozenset[str] = frozenset()  # options that take a separate value (so it is not the script)
    program: frozenset[str] = frozenset()  # options that give the code or commands inline: not interactive
    script: bool = True  # a positional is the program (a script); False: positionals are data (a database)
    script_index: int = 0  # which positional is the program (sqlite3 DB SQL: 1)
    interactive: frozenset[str] = frozenset()  # options that open a session even with a program (python -i)
    quiet: frozenset[str] = frozenset()  # options that only print and exit (--version)
    decides: str = "stdin"  # stdin: a terminal stdin opens it; stdout: a terminal stdout (pagers); always
    code_from_pipe: bool = True  # a pipe on stdin is a program only known at run time (curl ... | python3)
    runs_args: bool = False  # its arguments may be commands it runs (script -c, su -c): scanned as unknown
    program_flags: frozenset[str] = frozenset()  # program options that take no value (node --test, psql -l)
    in_place: frozenset[str] = frozenset()  # options that make it edit its file arguments (perl -i, ruby -i)
    runs: frozenset[str] = frozenset()  # options that run a command (man -P PAGER): unresolved


def _session(what: str, valued: str = "", program: str = "", **kwargs: Any) -> _Session:
    sets = {name: frozenset(kwargs.pop(name, "").split())
            for name in ("interactive", "quiet", "program_flags", "in_place", "runs")}
    quiet = sets["quiet"] | {"--version", "--help"}
    return _Session(what, frozenset(valued.split()), frozenset(program.split()) | sets["program_flags"],
                    interactive=sets["interactive"], quiet=quiet, program_flags=sets["program_flags"],
                    in_place=sets["in_place"], runs=sets["runs"], **kwargs)


_INTERPRETER = "an interactive interpreter"
_SESSIONS: dict[str, _Session] = {
    "node": _session(_INTERPRETER, "-r --require --import --loader --experimental-loader -C --conditions "
                     "--input-type --title --env-file", "-e --eval -p --print --run", interactive="-i --interactive",
                     quiet="--v8-options -v", program_flags="--test"),
    "nodejs": _session(_INTERPRETER, "-r --require", "-e --eval -p --print", interactive="-i --interactive"),
    "deno": _session(_INTERPRETER, script=False, program="run eval test task fmt lint check compile install "
                     "info doc bench serve", decides="subcommand"),
    "ruby": _session(_INTERPRETER, "-I -r -C -E", "-e", in_place="-i"),
    "irb": _session(_INTERPRETER, decides="always"),
    "perl": _session(_INTERPRETER, "", "-e -E", in_place="-i"),
    "php": _session(_INTERPRETER, "-c -d -z -t", "-r -R -B -E -F -f -S", interactive="-a",
                    program_flags="-l -s -w -i -m"),
    "lua": _session(_INTERPRETER, "-l", "-e", interactive="-i"),
    "luajit": _session(_INTERPRETER, "-l -j -O", "-e -b", interactive="-i"),
    "r": _session(_INTERPRETER, "", "-e -f --file", interactive="--interactive"),
    "julia": _session(_INTERPRETER, "-J -L -p -t --project --threads", "-e --eval -E --print", interactive="-i"),
    "ghci": _session(_INTERPRETER, decides="always"),
    "ipython": _session(_INTERPRETER, "--profile", "-c -m", interactive="-i"),
    "ipython3": _session(_INTERPRETER, "--profile", "-c -m", interactive="-i"),
    "bpython": _session(_INTERPRETER, decides="always"),
    "jshell": _session(_INTERPRETER, "--class-path --module-path", "", script=True),
    "scala": _session(_INTERPRETER, "-cp -classpath", "-e"),
    "erl": _session(_INTERPRETER, "-pa -pz -name -sname -setcookie", "-eval -s -run",
                    program_flags="-noshell -detached"),
    "iex": _session(_INTERPRETER, "--sname --name --cookie -r -pa", "-e --eval -S"),
    "tclsh": _session(_INTERPRETER),
    "guile": _session(_INTERPRETER, "-L -x", "-c -s"),
    "racket": _session(_INTERPRETER, "-l -t -r -u -S", "-e -f"),
    "sqlite3": _session("a database shell", "-cmd -init -separator -newline -nullvalue", "", script=True,
                        script_index=1, code_from_pipe=False),
    "psql": _session("a database shell", "-h -p -U -d -v -P -F -R -T -L -o --host --port --username --dbname "
                     "--variable --set --pset --field-separator --record-separator --table-attr --log-file --output",
                     "-c -f --command --file", script=False, code_from_pipe=False, program_flags="-l --list"),
    "mysql": _session("a database shell", "-h -P -u -D -S --host --port --user --database --socket "
                      "--default-character-set", "-e --execute", script=False, code_from_pipe=False),
    "mariadb": _session("a database shell", "-h -P -u -D -S --host --port --user --database --socket",
                        "-e --execute", script=False, code_from_pipe=False),
    "redis-cli": _session("a database shell", "-h -p -a -n -u -s --user --pass -r -i", "--eval", script=True,
                          code_from_pipe=False),
    "mongosh": _session("a database shell", "--host --port -u -p --username --password --authenticationDatabase",
                        "--eval -f --file", script=True, code_from_pipe=False),
    "mongo": _session("a database shell", "--host --port -u -p --username --password", "--eval", script=True,
                      code_from_pipe=False),
    **{name: _session("an editor", "-c --cmd -u -U -i -T -w -W -S --servername --remote", script=False,
                      decides="always", program_flags="-es -Es")
       for name in ("vi", "vim", "nvim", "view", "vimdiff", "gvim", "ex", "rvim")},
    **{name: _session("an editor", script=False, decides="always")
       for name in ("nano", "pico", "micro", "joe", "jed", "kak", "hx", "helix", "mcedit", "ne", "emacsclient")},
    "emacs": _session("an editor", "-l --load -f --funcall --eval -L --directory", "--script", script=False,
                      decides="always", program_flags="--batch -batch"),
    "ed": _session("an editor (ed reads its commands from standard input)", "-p", script=False),
    **{name: _session("a pager", "-p -P -x -y -z -b -h -j -k -o -O -t -T", script=False, decides="stdout",
                      code_from_pipe=False)
       for name in ("less", "more", "most", "pg", "zless", "zmore", "lessfile")},
    "man": _session("a pager (its page is shown in $PAGER)", "-P -M -S -s -C -L -p -e -m -H", script=False,
                    decides="stdout", program_flags="-f -k -w --where --path -c --catman --help -h",
                    code_from_pipe=False, runs="-P --pager -H --html"),
    "info": _session("a pager", "-d -f -n -o --directory --file --node --output", script=False, decides="stdout",
                     program_flags="--apropos -k -w --where --help -h", code_from_pipe=False),
    "script": _session("a terminal session recorded by script", "-E --echo -O --log-out -I --log-in "
                       "-B --log-io -T --log-timing -m --logging-format -t --timing", "-c --command", script=False,
                       decides="always", runs_args=True, quiet="-V"),
    **{name: _session("a terminal multiplexer", script=False, decides="always",
                      quiet="ls list-sessions has-session has -V")
       for name in ("tmux", "screen", "byobu", "zellij")},
    **{name: _session("a remote session", "-P -p -i -o -F -J -l -b -c", script=False, decides="always")
       for name in ("sftp", "telnet", "ftp", "mosh", "lftp")},
    **{name: _session("a debugger", "-x -ex -ix -iex -p -cd -d -s -c --core --pid --command --eval-command",
                      "-ex --eval-command -x --command", script=False, decides="always",
                      program_flags="-batch --batch")
       for name in ("gdb", "lldb", "pdb")},
    "su": _session("a shell as another user", "-s --shell -g --group -G --supp-group -w",
                   "-c --command", script=False, runs_args=True),
}
# Programs that open $EDITOR on the terminal: program -> the word that does it ("" = always).
_EDITOR_LAUNCHERS: dict[str, str] = {"crontab": "-e", "visudo": "", "vipw": "", "vigr": "", "sudoedit": "",
                                     "edquota": "", "systemctl": "edit", "kubectl": "edit", "oc": "edit"}
# Words that make docker/podman/kubectl attach the terminal to a container's program.
_CONTAINER_TTY = frozenset({"-i", "-it", "-ti", "--interactive", "-t", "--tty", "-itd", "-dit"})
_CONTAINER_TOOLS = frozenset({"docker", "podman", "kubectl", "nerdctl", "oc"})
# Their verbs that run a command inside a container (`docker run img CMD`, `kubectl exec pod -- CMD`).
_CONTAINER_RUNS = frozenset({"run", "exec", "create", "debug"})

# `PROGRAM --version` / `PROGRAM --help` with nothing else prints and exits (the GNU convention
# every argument parser follows; a program that does not know the option refuses it). `-V` is not
# included: `fsck -V` checks every file system in /etc/fstab, verbosely.
_INFO_OPTIONS = frozenset({"--version", "--help"})
# `PROGRAM SUBCOMMAND --help` prints the subcommand's help for git and the catalogue's programs,
# except these, which pass a word after their first operand on to something else: ssh's remote
# command, an init script's action, a package.json script, a .dll or script a runtime runs, a
# rake task (and the system and disk tools, where no guess is worth making).
_HELP_PASSED_ON = frozenset({"ssh", "scp", "service", "crontab", "npm", "pnpm", "yarn", "bun", "dotnet", "rails",
                             "rake", "halt", "poweroff", "reboot", "shutdown", "mkfs", "mke2fs", "mkswap", "wipefs",
                             "blkdiscard", "launchctl", "systemctl"})

# --- files written by programs StateWise otherwise leaves unguarded ----------------------------
# Options whose value is a file the program writes: each becomes an fs.write (so protected paths
# hold), and the program stays unguarded otherwise.
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    **{name: ("-o",) for name in ("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "rustc", "javac")},
    "iconv": ("-o", "--output"),
    "pandoc": ("-o", "--output"),
    "base64": ("-o", "--output"),
    "tsc": ("--outFile", "--outfile"),
    "esbuild": ("--outfile",),
    "wget": ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output"),
    "curl": ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr",
             "--libcurl", "--etag-save", "--hsts", "--alt-svc"),
}

# Compressors: program -> (suffix, decompresses by default, keeps the input by default).
_COMPRESSORS: dict[str, tuple[str, bool, bool]] = {
    "gzip": (".gz", False, False), "gunzip": (".gz", True, False), "pigz": (".gz", False, False),
    "unpigz": (".gz", True, False), "bzip2": (".bz2", False, False), "bunzip2": (".bz2", True, False),
    "xz": (".xz", False, False), "unxz": (".xz", True, False), "lzma": (".lzma", False, False),
    "unlzma": (".lzma", True, False), "zstd": (".zst", False, True), "unzstd": (".zst", True, True),
    "lz4": (".lz4", False, True), "compress": (".Z", False, False), "uncompress": (".Z", True, False),
}
_CURL = _Spec.of(
    flags="-f -s -S -L -k -v -i -I -G -N -O -J -Z -# -4 -6 -0 -l -n -j -q -R -g -a -B -p -M -V -h --fail "
          "--fail-with-body --fail-early --silent --show-error --location --location-trusted --insecure --verbose "
          "--include --head --get --no-buffer --remote-name --remote-name-all --remote-header-name --parallel "
          "--parallel-immediate --progress-bar --no-progress-meter --ipv4 --ipv6 --http1.0 --http1.1 --http2 "
          "--http2-prior-knowledge --http3 --http3-only --compressed --compressed-ssh --list-only --netrc "
          "--netrc-optional --junk-session-cookies --remote-time --globoff --append --use-ascii --proxytunnel "
          "--manual --version --help --create-dirs --raw --tr-encoding --no-keepalive --no-sessionid --tcp-nodelay "
          "--tcp-fastopen --ssl --ssl-reqd --tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --sslv2 --sslv3 "
          "--cert-status --false-start --basic --digest --ntlm --negotiate --anyauth --disable --disable-eprt "
          "--disable-epsv --path-as-is --post301 --post302 --post303 --styled-output --no-styled-output "
          "--suppress-connect-headers --xattr --ssl-no-revoke --ssl-allow-beast --doh-insecure --proxy-insecure "
          "--retry-all-errors --retry-connrefused --no-clobber --remove-on-error --clobber --skip-existing "
          "--ca-native --trace-time --trace-ids --show-headers",
    valued="-o -D -c -b -H -X -d -F -T -u -U -A -e -m -w -x -r -E -K -C -Y -y -z -t -P --output --output-dir "
           "--dump-header --cookie-jar --cookie --header --request --data --data-raw --data-binary "
           "--data-urlencode --data-ascii --json --form --form-string --upload-file --user --proxy-user "
           "--user-agent --referer --max-time --connect-timeout --write-out --proxy --range --cert --key --cacert "
           "--capath --config --continue-at --speed-limit --speed-time --time-cond --telnet-option --ftp-port "
           "--retry --retry-delay --retry-max-time --url --resolve --connect-to --noproxy --unix-socket "
           "--abstract-unix-socket --oauth2-bearer --trace --trace-ascii --stderr --libcurl --etag-save "
           "--etag-compare --hsts --alt-svc --limit-rate --max-filesize --max-redirs --interface --dns-servers "
           "--cert-type --key-type --pass --ciphers --tls13-ciphers --pinnedpubkey --request-target --aws-sigv4 "
           "--proxy-header --preproxy --socks4 --socks4a --socks5 --socks5-hostname --local-port --keepalive-time "
           "--expect100-timeout --happy-eyeballs-timeout-ms --parallel-max --rate --variable --expand-url "
           "--expand-data --expand-header --url-query --mail-from --mail-rcpt --crlfile --engine --random-file "
           "--egd-file --sasl-authzid --login-options --service-name --krb --delegation --ftp-method "
           "--ftp-account --ftp-alternative-to-user --ftp-ssl-ccc-mode --doh-url --proto --proto-redir "
           "--proto-default --ip-tos --vlan-priority --mptcp --ech",
    optional="--ssl-auto-client-cert")
_WGET = _Spec.of(
    flags="-q -v -d -c -N -r -m -p -k -K -E -H -L -x -S -b -F --quiet --verbose --no-verbose "
          "--debug --continue --timestamping --recursive --mirror --page-requisites --convert-links --backup-converted "
          "--adjust-extension --span-hosts --relative --no-parent --no-directories --force-directories "
          "--no-host-directories --server-response --background --force-html --spider --no-check-certificate "
          "--no-clobber -nc --no-cache --no-cookies --ignore-length --no-dns-cache --inet4-only --inet6-only -4 -6 "
          "--retry-connrefused --no-proxy --content-disposition --trust-server-names --show-progress --no-config "
          "--https-only --no-hsts --delete-after --unlink --strict-comments --keep-session-cookies "
          "--ignore-case --no-iri --auth-no-challenge --no-http-keep-alive --no-netrc -h --help -V --version",
    valued="-O -o -a -P -t -T -w -l -A -R -D -U -Q -e -B -I -X --output-document --output-file --append-output "
           "--directory-prefix --tries --timeout --wait --level --accept --reject --domains --user-agent --quota "
           "--execute --base --include-directories --exclude-directories --header --user --password "
           "--http-user --http-password --post-data --post-file --body-data --body-file --method --referer "
           "--limit-rate --load-cookies --save-cookies --ca-certificate --certificate --private-key --config "
           "--use-askpass --cut-dirs --input-file --max-redirect --waitretry --read-timeout --connect-timeout "
           "--dns-timeout --bind-address --local-encoding --remote-encoding --restrict-file-names --progress "
           "--secure-protocol --ciphers --hsts-file --accept-regex --reject-regex --regex-type --exclude-domains "
           "--default-page --rejected-log --report-speed --warc-file",
    optional="--random-wait")

# --- environment variables that redirect an install ----------------------------------------------
# variable -> (tool, what it sets). A variable naming the tool's own configuration file
# (PIP_CONFIG_FILE, UV_CONFIG_FILE, NPM_CONFIG_USERCONFIG ...) is read like the default files:
# the user's own configuration is where the install goes, not a reason to stop it.
_INSTALL_ENV: dict[str, tuple[str, str]] = {
    "PIP_PYTHON": ("pip", "python"),
    "PIP_TARGET": ("pip", "target"),
    "PIP_PREFIX": ("pip", "target"),
    "PIP_ROOT": ("pip", "target"),
    "PIP_USER": ("pip", "user"),
    "PIP_CONFIG_FILE": ("pip", "config-file"),
    "UV_PYTHON": ("uv", "python"),
    "UV_SYSTEM_PYTHON": ("uv", "system"),
    "UV_TARGET": ("uv", "target"),
    "UV_PREFIX": ("uv", "target"),
    "UV_CONFIG_FILE": ("uv", "config-file"),
    "VIRTUAL_ENV": ("uv", "venv"),
    "NPM_CONFIG_PREFIX": ("npm", "prefix"),
    "NPM_CONFIG_GLOBAL": ("npm", "global"),
    "NPM_CONFIG_LOCATION": ("npm", "location"),
    "NPM_CONFIG_USERCONFIG": ("npm", "config-file"),
    "NPM_CONFIG_GLOBALCONFIG": ("npm", "config-file"),
    "PNPM_HOME": ("pnpm", "prefix"),
    "YARN_GLOBAL_FOLDER": ("yarn", "prefix"),
    "BUN_INSTALL": ("bun", "prefix"),
}
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
# Where an install fetches packages from: the tool -> (option names, environment variable) of
# each setting. The index slots of an install are read from these, never from anything else,
# so the slot is what the command really uses (issue 10 item 5).
_INDEX_SETTINGS: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "pip": {"index": (("-i", "--index-url"), ("PIP_INDEX_URL",)),
            "extra_index": (("--extra-index-url",), ("PIP_EXTRA_INDEX_URL",)),
            "find_links": (("-f", "--find-links"), ("PIP_FIND_LINKS",))},
    "uv": {"index": (("-i", "--index-url", "--default-index"), ("UV_DEFAULT_INDEX", "UV_INDEX_URL")),
           "extra_index": (("--extra-index-url", "--index"), ("UV_INDEX", "UV_EXTRA_INDEX_URL")),
           "find_links": (("-f", "--find-links"), ("UV_FIND_LINKS",))},
}
_INDEX_ENV = frozenset(name for tool in _INDEX_SETTINGS.values() for _, names in tool.values() for name in names) | {
    "PIP_NO_INDEX", "UV_NO_INDEX"}
#: The pip.conf setting of each index slot.
_INDEX_CONFIG_NAMES = {"index": "index-url", "extra_index": "extra-index-url", "find_links": "find-links"}
#: The index pip and uv use when nothing names another.
DEFAULT_INDEX = "https://pypi.org/simple"


def _index_url(value: str) -> str:
    """An index URL as compared: credentials dropped (never stored), no trailing slash."""
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if sep:
        host, slash, path = rest.partition("/")
        text = f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"
    return text.rstrip("/") or text

# --- git settings that decide where a bare `git push` goes --------------------------------------
# Written by an earlier part of the same call (`git config remote.origin.push +feature:main`),
# these are simulated; any other setting that can redirect or run something makes later pushes
# in that repository unresolved.
_PUSH_CONFIG = re.compile(r"^(remote\..+\.(push|mirror)|push\.default|branch\..+\.(merge|remote|pushremote)|"
                          r"remote\.pushdefault)$", re.IGNORECASE)
# Sections whose removal or renaming (or a remote's URL) changes where pushes go: not simulated.
_PUSH_SECTIONS = re.compile(r"^(remote|branch|push|url)(\.|$)", re.IGNORECASE)


def _canonical(name: str) -> str:
    if _PYTHON_NAME.match(name):
        return "python"
    if _PIP_NAME.match(name):
        return "pip"
    if name == "py.test":
        return "pytest"
    return name

# A package script or make target named like a schema migration.
_MIGRATION_SCRIPT = re.compile(r"(^|[:_-])(migrate|migration|migrations|db:push|db:reset)($|[:_-])")
