#!/usr/bin/env python3
# tests/extension/partitions_check.py <file> <queue> <shards> <expected per chat> - checks what
# partition_workers.mjs recorded: every message of each chat once, in send order (bodies "<chat>:<n>",
# n = 1, 2, ...), and each job in its chat's partition queue (chat mod n, taken non-negative) on the
# partition's shard (partition mod shards); a job of <queue> itself was relayed under one partition.
# Prints a one-line summary; exits 1 with the first problems.
import sys
from collections import defaultdict

path, queue, shards, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
seen = defaultdict(list)
problems = []
queues = defaultdict(int)
for line in open(path):
    name, shard, chat, body = line.split()
    chat, shard = int(chat), int(shard)
    queues[name] += 1
    if name != queue:
        p = int(name.rsplit('-p', 1)[1])
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 4
        if p != chat % n:  # Python's % is already non-negative for n > 0
            problems.append(f"chat {chat} in {name}, not partition {chat % n}")
        if shard != p % shards:
            problems.append(f"{name} read from shard {shard}, not {p % shards}")
    seen[chat].append(int(body.split(':')[1]))
for chat, ns in sorted(seen.items()):
    if ns != list(range(1, expected + 1)):
        problems.append(f"chat {chat}: {len(ns)} jobs, order {ns[:12]}{'...' if len(ns) > 12 else ''}")
if problems:
    print('\n'.join(problems[:10]))
    sys.exit(1)
print(f"{len(seen)} chats x {expected} in order; jobs per queue: {dict(sorted(queues.items()))}")
