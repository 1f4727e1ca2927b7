#!/usr/bin/env python3
# tests/extension/cpp_boundary_lint.py - the two halves of the C++/Postgres boundary rule
# (extension/src/pg/cpp_boundary.hpp; docs/extension.md, 'C++ inside Postgres'), checked on the
# text of extension/src/pg where a compiler cannot check them:
#   1. no frame that may longjmp owns a C++ object with a destructor: outside the body of a
#      CallCpp(...) and outside struct/class definitions (members of long-lived objects), no
#      variable of an owning standard type (std::string, std::vector, ...) is declared, and no
#      `auto` variable takes the result of a C++ call (chat_outbox::, std::);
#   2. a CallCpp body calls no Postgres function that may ereport (ereport, elog, palloc, SPI, ...).
# A pattern list, not a compiler: what it cannot see (a helper called from a CallCpp body that
# itself calls Postgres, a type of our own with a destructor) is the reviewer's. CallCpp's
# static_assert covers the closure itself (nothing captured by value that owns memory).
#   cpp_boundary_lint.py [root]   exit 1 and list every violation
# It first checks itself on samples that must fail, so a broken pattern cannot pass silently.
import pathlib
import re
import sys

OWNING = (r"\bstd::(?:string|vector|optional|map|unordered_map|set|unordered_set|deque|list|unique_ptr|shared_ptr|"
          r"function|ostringstream|stringstream|any|variant)\b")
# a declaration: the owning type (its template arguments, if any), then a name, then = ; ( { [
DECL = re.compile(OWNING + r"\s*(?:<(?:[^<>;]|<(?:[^<>;]|<[^<>;]*>)*>)*>)?\s+[A-Za-z_]\w*\s*[=;({\[]")
AUTO_CPP = re.compile(r"\bauto\s*&{0,2}\s+[A-Za-z_]\w*\s*=\s*(?:chat_outbox|std)::")
PG_CALLS = re.compile(r"\b(?:ereport|elog|palloc\w*|repalloc\w*|pfree|pstrdup|pnstrdup|psprintf|SPI_\w+|"
                      r"CHECK_FOR_INTERRUPTS|PG_TRY|text_to_cstring|cstring_to_text\w*|MemoryContext\w+|"
                      r"construct_\w+|deconstruct_\w+|DirectFunctionCall\w*|OidFunctionCall\w*|"
                      r"heap_\w+|table_\w+|StartTransactionCommand|CommitTransactionCommand)\s*\(")


def blank(text):
    """The text with comments and string/char literals replaced by spaces (offsets and lines kept)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def matching(text, open_at):
    """The offset just past the bracket closing the one at open_at."""
    pairs = {"(": ")", "{": "}"}
    opener, closer, depth = text[open_at], pairs[text[open_at]], 0
    for k in range(open_at, len(text)):
        if text[k] == opener:
            depth += 1
        elif text[k] == closer:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)


def regions(text, pattern):
    """[start, end) of every bracket group opened by the last character of each match of pattern."""
    return [(m.end() - 1, matching(text, m.end() - 1)) for m in re.finditer(pattern, text)]


def violations(text):
    code = blank(text)
    cpp = regions(code, r"\bCallCpp\s*\(")
    members = regions(code, r"(?m)^(?:struct|class)\s+\w+[^;{]*\{")  # namespace-scope types only (column 0)

    def inside(pos, spans):
        return any(a <= pos < b for a, b in spans)

    def line(pos):
        return code.count("\n", 0, pos) + 1

    found = []
    for m in list(DECL.finditer(code)) + list(AUTO_CPP.finditer(code)):
        if not inside(m.start(), cpp) and not inside(m.start(), members):
            found.append((line(m.start()), "a C++ object with a destructor outside CallCpp: " + m.group(0).strip()))
    for m in PG_CALLS.finditer(code):
        if inside(m.start(), cpp):
            found.append((line(m.start()), "a Postgres call inside a CallCpp body: " + m.group(0).strip()))
    return sorted(found)


# Samples the check must refuse (and one it must accept): it is tested before it tests the tree.
MUST_FAIL = [
    "void f() { std::string s = g(); SPI_execute(q, false, 0); }",
    "void f() { std::vector<std::pair<int, int>> v; }",
    "void f() { auto why = chat_outbox::Explain(x); elog(LOG, \"%s\", why.c_str()); }",
    "void f() { chat_outbox::CallCpp([&] { n = 1; elog(LOG, \"x\"); }); }",
    "void f() { chat_outbox::CallCpp([&] { p = palloc(8); }); }",
]
MUST_PASS = [
    "struct S {\n\tstd::string held;\n};\n"
    "void f(const std::string &s, std::string *out) {\n"
    "\t/* std::string s = x; elog() in a comment */\n"
    "\tchat_outbox::CallCpp([&] { std::string why = \"elog(\"; auto w = std::to_string(1); });\n"
    "\telog(LOG, \"std::string x = y;\");\n}\n",
]


def self_test():
    for s in MUST_FAIL:
        if not violations(s):
            sys.exit(f"cpp_boundary_lint: the check accepts a sample it must refuse:\n{s}")
    for s in MUST_PASS:
        if violations(s):
            sys.exit(f"cpp_boundary_lint: the check refuses a sample it must accept: {violations(s)}")


def main():
    self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    files = sorted((root / "extension" / "src" / "pg").glob("*.[ch]pp"))
    if not files:
        sys.exit(f"cpp_boundary_lint: no sources under {root}/extension/src/pg")
    bad = 0
    for f in files:
        for ln, what in violations(f.read_text()):
            print(f"{f.relative_to(root)}:{ln}: {what}")
            bad += 1
    if bad:
        sys.exit(f"cpp_boundary_lint: {bad} violation(s) of the C++/Postgres boundary rule")
    print(f"ok   {len(files)} files of extension/src/pg keep C++ objects and Postgres calls apart")


main()
