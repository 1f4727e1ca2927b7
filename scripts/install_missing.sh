#!/usr/bin/env bash
# scripts/install_missing.sh - installs with apt the Debian packages given that are not installed yet, and
# nodejs and npm when node or npm is missing (scripts/setup.sh and scripts/package.sh; root or sudo):
#   scripts/install_missing.sh <who> <package>...    <who> starts the one line it prints when it installs
set -euo pipefail
who=$1
shift
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
	echo "$who: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
