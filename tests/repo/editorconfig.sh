#!/usr/bin/env bash
# repo.editorconfig: every tracked text file follows .editorconfig (charset, line ends, the final newline, no
# trailing whitespace, the indent style; scripts/check_editorconfig.py says how each is read). No servers; in
# the quick set.
set -euo pipefail
exec python3 "$(dirname "$0")/../../scripts/check_editorconfig.py"
