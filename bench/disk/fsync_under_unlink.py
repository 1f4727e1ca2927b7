#!/usr/bin/env python3
"""bench/disk/fsync_under_unlink.py - what freeing blocks costs the commits on this disk.

    python3 bench/disk/fsync_under_unlink.py [DIR] [SECONDS]

DIR (default build/disk-bench) must be on the file system to judge: the one of the Postgres data
directory. Writes one 8 kB block and fdatasyncs it in a loop, a commit's WAL flush, one every
millisecond, twice in one run: alone (the baseline), then while a 64 MB file is unlinked every 2 s
(what the outbox's rotation does with a generation it TRUNCATEs, and Redis with an old AOF). The
files are written and synced before the timed part, so only the unlinks run beside the loop. Prints
the flush's latency for both, and whether the file system trims online (mount option `discard`):
with it, the freed blocks are trimmed as they are freed and the flushes wait behind the trim
(docs/deploy.md, "The disk"). To compare the two modes, remount (as root) and run it again:
`mount -o remount,nodiscard <mount point>`.
"""
import os
import subprocess
import sys
import threading
import time

BLOCK = 8192
WAL_BYTES = 16 << 20
BIG_MB = 64
UNLINK_EVERY_S = 2.0


def mount_of(path):
    out = subprocess.run(["findmnt", "-n", "-o", "TARGET,SOURCE,FSTYPE,OPTIONS", "-T", path],
                         capture_output=True, text=True).stdout.split()
    if len(out) != 4:
        return "unknown file system"
    trim = "online discard (mounted with discard)" if "discard" in out[3].split(",") else "no online discard"
    return f"{out[1]} {out[2]} on {out[0]}, {trim}"


def write_big(path):
    with open(path, "wb") as f:
        chunk = b"x" * (1 << 20)
        for _ in range(BIG_MB):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def flush_loop(directory, seconds):
    """Latencies in ms of pwrite + fdatasync of one block, one per millisecond."""
    fd = os.open(os.path.join(directory, "wal"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.ftruncate(fd, WAL_BYTES)
        os.fsync(fd)
        block = b"w" * BLOCK
        lat, offset, end = [], 0, time.monotonic() + seconds
        while time.monotonic() < end:
            t0 = time.perf_counter()
            os.pwrite(fd, block, offset)
            os.fdatasync(fd)
            lat.append((time.perf_counter() - t0) * 1000)
            offset = (offset + BLOCK) % WAL_BYTES
            time.sleep(0.001)
        return sorted(lat)
    finally:
        os.close(fd)


def summary(name, lat):
    def q(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))]
    return f"| {name} | {len(lat)} | {q(.5):.2f} | {q(.99):.2f} | {q(.999):.2f} | {lat[-1]:.1f} |"


def main():
    directory = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/disk-bench")
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    os.makedirs(directory, exist_ok=True)
    print(f"file system: {mount_of(directory)}")
    quiet = flush_loop(directory, seconds)

    bigs = [os.path.join(directory, f"big{i}") for i in range(int(seconds / UNLINK_EVERY_S))]
    for path in bigs:
        write_big(path)
    os.sync()
    stop = threading.Event()

    def unlinker():
        for path in bigs:
            if stop.wait(UNLINK_EVERY_S):
                return
            os.unlink(path)

    t = threading.Thread(target=unlinker)
    t.start()
    try:
        busy = flush_loop(directory, seconds)
    finally:
        stop.set()
        t.join()
        for path in bigs:
            if os.path.exists(path):
                os.unlink(path)
        os.unlink(os.path.join(directory, "wal"))

    print(f"\n8 kB write + fdatasync, one per ms, {seconds:g} s each (ms):\n")
    print("| run | flushes | p50 | p99 | p99.9 | max |")
    print("|---|---|---|---|---|---|")
    print(summary("alone", quiet))
    print(summary(f"a {BIG_MB} MB file unlinked every {UNLINK_EVERY_S:g} s", busy))


if __name__ == "__main__":
    main()
