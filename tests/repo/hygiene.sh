#!/usr/bin/env bash
# repo.hygiene: the tracked files hold no merge-conflict markers, name no path outside the repository
# (a comment's or a doc's reference must resolve here), and every relative link in a Markdown file
# names a file or folder that exists. No servers; about a second.
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

# relative Markdown links: [text](path) and [text](path#anchor), resolved from the file's folder
bad=$(python3 - "${files[@]}" <<'PY'
import os, re, sys
link = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
for f in sys.argv[1:]:
    if not f.endswith('.md'):
        continue
    text = open(f, encoding='utf-8').read()
    # links inside code spans and fenced blocks are examples, not references
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    text = re.sub(r'`[^`\n]*`', '', text)
    for target in link.findall(text):
        if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('#'):
            continue
        path = target.split('#', 1)[0]
        if not os.path.exists(os.path.join(os.path.dirname(f), path)):
            print(f'{f}: ({target})')
PY
)
[ -z "$bad" ] || fail "Markdown links to nothing:"$'\n'"$bad"
echo "ok   every relative Markdown link resolves"
[ "$fails" = 0 ] || exit 1
