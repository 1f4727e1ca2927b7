#!/usr/bin/env python3
"""scripts/embed_lua.py - writes one C++ header holding the text of a folder's Lua scripts.

    embed_lua.py <header> <namespace> <file.lua>...

Each <name>.lua becomes `inline constexpr char k<Name>[]` (snake_case to CamelCase: lease_acquire.lua
-> kLeaseAcquire) in <namespace>, its text byte for byte as a raw string literal: the script Redis runs
is the file, head comment included. Both builds run it: CMake (chat_outbox_embed_lua in
CMakeLists.txt) into the build tree, the extension's PGXS Makefile beside the scripts (git-ignored).
Rule: a script may not hold the literal's closing delimiter.
"""
import os
import re
import sys

DELIM = 'LUA'  # the raw string's delimiter: R"LUA( ... )LUA"


def constant(path):
    stem = os.path.basename(path)[: -len('.lua')]
    if not re.fullmatch(r'[a-z][a-z0-9_]*', stem):
        sys.exit(f'{path}: a script is named in snake_case (it becomes a C++ constant)')
    return 'k' + ''.join(part.capitalize() for part in stem.split('_'))


def main(argv):
    if len(argv) < 3 or not all(a.endswith('.lua') for a in argv[2:]):
        sys.exit('usage: embed_lua.py <header> <namespace> <file.lua>...')
    header, namespace, scripts = argv[0], argv[1], sorted(argv[2:], key=os.path.basename)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = [f'// {os.path.basename(header)} - built by scripts/embed_lua.py from '
           + ', '.join(os.path.relpath(os.path.abspath(s), root) for s in scripts) + '; edit those, not this.',
           '#pragma once', '', f'namespace {namespace} {{', '']
    for path in scripts:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        if f'){DELIM}"' in text:
            sys.exit(f'{path}: holds )' + DELIM + '", which would end its C++ raw string')
        out.append(f'inline constexpr char {constant(path)}[] = R"{DELIM}({text}){DELIM}";')
        out.append('')
    out.append(f'}} // namespace {namespace}')
    text = '\n'.join(out) + '\n'
    os.makedirs(os.path.dirname(header) or '.', exist_ok=True)
    with open(header + '.tmp', 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(header + '.tmp', header)


if __name__ == '__main__':
    main(sys.argv[1:])
