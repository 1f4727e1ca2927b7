#!/usr/bin/env python3
# scripts/check_editorconfig.py - every tracked text file follows .editorconfig: its charset (utf-8: the file
# decodes, no byte-order mark), end_of_line (lf: no CR), insert_final_newline, trim_trailing_whitespace and
# indent_style. Prints each file and line that does not, and a count; exit 1 if any. The test repo.editorconfig
# runs it (in the quick set). No servers; well under a second.
#   python3 scripts/check_editorconfig.py [FILE...]      (default: every file git tracks)
#
# Rules of indent_style, as the code is written:
#   tab    the indentation is tabs. A line may start with spaces only where they align, not indent: a block
#          comment's " *", a C++ access specifier ("  public:", where .clang-format's AccessModifierOffset
#          puts it), the continuation of the line before it (that line does not end a statement or a block:
#          its last character is not ';', '}' or a block's '{': a '{' continues only after '=', '(' or ',', as
#          an initializer; or the line closes a bracket such a line opened: it starts with
#          '}', ')' or ']'), or inside what is data rather than code (a shell
#          here-document, a C++ raw string, a Python triple-quoted string, a Markdown code block). Spaces never
#          come before a tab.
#   space  the indentation is spaces: no tab at the start of a line (the data above excepted).
# Only the properties above are read; the sections are matched as EditorConfig says (a pattern without '/'
# matches the file name in any folder, '**' crosses folders, {a,b} is either; later sections win).
import os, re, subprocess, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
os.chdir(ROOT)

def glob_regex(pat):
    """An EditorConfig section name as a regex over paths relative to the repository's root."""
    out, i = '', 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith('**', i):
            out += '.*'; i += 2; continue
        if c == '*': out += '[^/]*'
        elif c == '?': out += '[^/]'
        elif c == '{':
            j = pat.index('}', i)
            out += '(?:' + '|'.join(glob_regex(p) for p in pat[i + 1:j].split(',')) + ')'
            i = j + 1; continue
        elif c == '[':
            j = pat.index(']', i)
            out += pat[i:j + 1]; i = j + 1; continue
        else: out += re.escape(c)
        i += 1
    return out

def read_sections(path='.editorconfig'):
    sections, cur = [], None
    for raw in open(path, encoding='utf-8'):
        line = raw.strip()
        if not line or line[0] in '#;': continue
        m = re.match(r'\[(.*)\]$', line)
        if m:
            pat = m.group(1)
            rx = glob_regex(pat.lstrip('/'))
            rx = rx if '/' in pat else '(?:.*/)?' + rx
            cur = (re.compile(rx + '$'), {}); sections.append(cur); continue
        k, _, v = line.partition('=')
        if cur is not None: cur[1][k.strip().lower()] = v.strip().lower()
    return sections

def props_of(path, sections):
    p = {}
    for rx, kv in sections:
        if rx.match(path): p.update(kv)
    return p

HEREDOC = re.compile(r'<<-?\s*([\'"]?)([A-Za-z_][A-Za-z_0-9]*)\1')
RAW_OPEN = re.compile(r'R"([^()\\ ]{0,16})\(')

def data_lines(path, lines):
    """Indexes of lines that are data inside code: shell here-documents, C++ raw strings."""
    skip = set()
    if path.endswith('.sh') or path.startswith('.ci/') or path.startswith('debian/chat-outbox.p'):
        end = None
        for i, l in enumerate(lines):
            if end is not None:
                if l.strip() == end: end = None
                else: skip.add(i)
                continue
            m = HEREDOC.search(l)
            if m and not l.lstrip().startswith('#'): end = m.group(2)
    if path.endswith(('.cpp', '.hpp', '.h', '.c')):
        close = None
        for i, l in enumerate(lines):
            if close is not None:
                skip.add(i)
                if close in l: close = None
                continue
            for m in RAW_OPEN.finditer(l):
                if ')' + m.group(1) + '"' not in l[m.end():]: close = ')' + m.group(1) + '"'
    if path.endswith('.py'):
        inside = False
        for i, l in enumerate(lines):
            if inside: skip.add(i)
            if (l.count('"""') + l.count("'''")) % 2: inside = not inside
    if path.endswith('.md'):
        fence = False
        for i, l in enumerate(lines):
            if l.lstrip().startswith('```'): fence = not fence; continue
            if fence: skip.add(i)
    return skip

def check(path, p, report):
    data = open(path, 'rb').read()
    if b'\0' in data: return  # binary
    if p.get('charset') == 'utf-8':
        if data.startswith(b'\xef\xbb\xbf'): report(path, 1, 'a byte-order mark (charset = utf-8 has none)')
        try: data.decode('utf-8')
        except UnicodeDecodeError as e:
            report(path, data[:e.start].count(b'\n') + 1, 'not UTF-8'); return
    text = data.decode('utf-8', 'replace')
    if p.get('end_of_line') == 'lf' and '\r' in text:
        report(path, text[:text.index('\r')].count('\n') + 1, 'a CR (end_of_line = lf)')
    if p.get('insert_final_newline') == 'true' and text and not text.endswith('\n'):
        report(path, text.count('\n') + 1, 'no newline at the end of the file')
    if p.get('insert_final_newline') == 'false' and text.endswith('\n'):
        report(path, text.count('\n'), 'a newline at the end of the file (insert_final_newline = false)')
    lines = text.split('\n')
    if p.get('trim_trailing_whitespace') == 'true':
        for i, l in enumerate(lines):
            if l != l.rstrip(' \t'): report(path, i + 1, 'trailing whitespace')
    style = p.get('indent_style')
    if style not in ('tab', 'space'): return
    skip = data_lines(path, lines)
    prev = ''
    for i, l in enumerate(lines):
        ws = l[:len(l) - len(l.lstrip(' \t'))]
        body = l[len(ws):]
        if i in skip or not body:
            if body: prev = body
            continue
        if style == 'space' and '\t' in ws:
            report(path, i + 1, 'a tab in the indentation (indent_style = space)')
        elif style == 'tab':
            if ' \t' in ws:
                report(path, i + 1, 'spaces before a tab in the indentation (indent_style = tab)')
            elif ws.startswith(' '):
                comment = ws == ' ' and body.startswith('*')
                access = re.match(r'(public|protected|private)\s*:', body) is not None
                last = prev.rstrip()
                continuation = (last[-1:] not in (';', '}', '{', '') or re.search(r'[=(,]\s*\{$', last) is not None
                                or body[0] in '})]')
                if not (comment or access or continuation):
                    report(path, i + 1, 'indented with spaces (indent_style = tab)')
        prev = body

def main():
    sections = read_sections()
    files = sys.argv[1:] or subprocess.run(['git', 'ls-files', '-z'], capture_output=True, check=True,
                                           text=True).stdout.split('\0')
    bad = []
    def report(path, line, what): bad.append(f'{path}:{line}: {what}')
    n = 0
    for f in files:
        if not f or not os.path.isfile(f) or os.path.islink(f): continue
        n += 1
        check(f, props_of(f, sections), report)
    for b in bad: print(b)
    print(f'{len(bad)} lines against .editorconfig in {n} files')
    return 1 if bad else 0

if __name__ == '__main__':
    sys.exit(main())
