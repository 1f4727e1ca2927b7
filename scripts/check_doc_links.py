#!/usr/bin/env python3
# scripts/check_doc_links.py - every relative link in README.md, docs/**/*.md and bench/**/*.md resolves: the file or folder
# exists, and a #anchor names a heading of the page (GitHub's heading ids). Prints each broken link; exit 1 if any.
#   python3 scripts/check_doc_links.py
import re, os, sys, glob

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

def slug(h):
    h = h.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')
def anchors(path):
    out = set(); seen = {}
    inblock = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'): inblock = not inblock; continue
        if inblock: continue
        m = re.match(r'#{1,6} (.*)', line)
        if m:
            s = slug(m.group(1)); n = seen.get(s, 0); seen[s] = n + 1
            out.add(s if n == 0 else f'{s}-{n}')
    return out
bad = 0
files = ['README.md'] + glob.glob('docs/**/*.md', recursive=True) + [f for f in glob.glob('bench/**/*.md', recursive=True) if 'node_modules' not in f]
for f in files:
    text = open(f, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in re.finditer(r'\]\(([^)\s]+)\)', text):
        t = m.group(1)
        if re.match(r'[a-z]+:', t): continue
        path, _, anchor = t.partition('#')
        target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(target):
            print(f'{f}: {t}: no such file'); bad += 1; continue
        if anchor and target.endswith('.md') and anchor not in anchors(target):
            print(f'{f}: {t}: no such heading'); bad += 1
print('bad links:', bad); sys.exit(1 if bad else 0)
