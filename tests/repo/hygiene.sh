#!/usr/bin/env bash
# repo.hygiene: the tracked files hold no merge-conflict markers, name no path outside the repository
# (a comment's or a doc's reference must resolve here), no daemon/src folder holds more than kMaxFolderFiles
# files, and every relative link in README.md, docs/ and bench/ names a file or folder that exists and,
# with #anchor, one of its headings; no built SQL is tracked (what sql/managed/generate.py writes is built
# by make and CMake, never committed). No servers; about a second.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
fails=0
fail() { echo "FAIL $*" >&2; fails=$((fails + 1)); }

mapfile -t files < <(git ls-files -- ':!*.png' ':!*package-lock.json')
[ "${#files[@]}" -gt 100 ] || { echo "FAIL git ls-files listed ${#files[@]} files: not a checkout?" >&2; exit 1; }

if hits=$(grep -nE '^(<<<<<<<|>>>>>>>) ' -- "${files[@]}"); then fail "merge-conflict markers:"$'\n'"$hits"; fi
echo "ok   no merge-conflict markers in ${#files[@]} tracked files"

# the paths of the machine the repository was written on, and notes kept beside it
if hits=$(grep -nE '(\.\./shared/|/work/(main|h-|shared|\.library))' -- "${files[@]}" | grep -v '^tests/repo/hygiene.sh:'); then
	fail "paths outside the repository:"$'\n'"$hits"
fi
echo "ok   no path outside the repository"

mapfile -t built < <(python3 sql/managed/generate.py --list)
tracked=$(git ls-files -- "${built[@]}")
if [ -n "$tracked" ]; then fail "built SQL is tracked:"$'\n'"$tracked"
else echo "ok   none of the ${#built[@]} files sql/managed/generate.py builds is tracked"; fi

# a folder of the daemon's a newcomer can take in: at most kMaxFolderFiles files each (issue 34's
# `git ls-files daemon/src | xargs -n1 dirname | sort | uniq -c`); a bigger one splits by job
kMaxFolderFiles=20
hits=$(git ls-files daemon/src | xargs -n1 dirname | sort | uniq -c | awk -v max=$kMaxFolderFiles '$1 > max')
if [ -n "$hits" ]; then fail "daemon folders over $kMaxFolderFiles files:"$'\n'"$hits"
else echo "ok   no daemon/src folder holds more than $kMaxFolderFiles files"; fi

# relative Markdown links and their #anchors (scripts/check_doc_links.py: README.md, docs/ and bench/)
bad=$(python3 scripts/check_doc_links.py 2>&1) || fail "Markdown links to nothing:"$'\n'"$bad"
echo "ok   every relative Markdown link and anchor in README.md, docs/ and bench/ resolves"
[ "$fails" = 0 ] || exit 1
