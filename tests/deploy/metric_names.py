#!/usr/bin/env python3
"""tests/deploy/metric_names.py - every metric name the shipped rules and dashboard query, one per line.

  metric_names.py <rules.yml> <dashboard.json>

Reads each rule's `expr` and each dashboard target's `expr`, and keeps the identifiers that name series:
string literals, label matchers `{...}`, ranges `[...]`, the label lists of by/without/on/ignoring/
group_left/group_right, functions (an identifier followed by `(`) and the operators' keywords are left out.
deploy.prometheus checks that each one is in a real scrape of the daemons and the relay.
"""
import json
import re
import sys

import yaml

KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}


def names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    found = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        if e[m.end():].lstrip().startswith("(") or m.group(0) in KEYWORDS:
            continue
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] in ".$"):
            continue  # a number's exponent or unit, a Grafana variable
        found.add(m.group(0))
    return found


def exprs(rules_path, dashboard_path):
    with open(rules_path) as f:
        for group in yaml.safe_load(f)["groups"]:
            for rule in group["rules"]:
                yield rule["expr"]
    with open(dashboard_path) as f:
        stack = [json.load(f)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                yield node["expr"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def main():
    found = set()
    for e in exprs(sys.argv[1], sys.argv[2]):
        found |= names(e)
    for n in sorted(found):
        print(n)


if __name__ == "__main__":
    main()
