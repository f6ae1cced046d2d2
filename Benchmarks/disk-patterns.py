#!/usr/bin/env python3
"""The disk alone, two ways of making appends durable, with 1, 2 and 3 files written at once (one thread each).

  append + fsync:            each file grows: 25 writes of 64 KiB, then fsync (what the record logs do today);
  preallocated + fdatasync:  each file written with zeros first (and fsynced), then overwritten in place:
                             25 writes of 64 KiB, then fdatasync (size and extents never change).

Prints the median of 3 runs of 100 MiB per file: aggregate MB/s and MB/s per file. docs/PERFORMANCE.md,
"Durable network against what the disk allows", quotes it. Usage: python3 Benchmarks/disk-patterns.py
"""
import os
import tempfile
import threading
import time

CHUNK = 64 * 1024
BATCH = 25
TOTAL = 100 << 20


def prepare(path):
    descriptor = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    zeros = b"\0" * (1 << 20)
    for index in range(TOTAL >> 20):
        os.pwrite(descriptor, zeros, index << 20)
    os.fsync(descriptor)
    os.close(descriptor)


def stream(path, preallocated):
    flags = os.O_WRONLY if preallocated else os.O_CREAT | os.O_WRONLY | os.O_TRUNC
    descriptor = os.open(path, flags, 0o644)
    block = b"\xa5" * CHUNK
    offset = 0
    while offset < TOTAL:
        for _ in range(BATCH):
            os.pwrite(descriptor, block, offset)
            offset += CHUNK
        (os.fdatasync if preallocated else os.fsync)(descriptor)
    os.close(descriptor)


def run(files, preallocated, directory):
    paths = [os.path.join(directory, f"disk-pattern-{index}") for index in range(files)]
    if preallocated:
        for path in paths:
            prepare(path)
    threads = [threading.Thread(target=stream, args=(path, preallocated)) for path in paths]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    for path in paths:
        os.unlink(path)
    return files * TOTAL / elapsed / 1e6


def main():
    with tempfile.TemporaryDirectory() as directory:
        for preallocated in (False, True):
            for files in (1, 2, 3):
                rates = sorted(run(files, preallocated, directory) for _ in range(3))
                name = "preallocated + fdatasync" if preallocated else "append + fsync"
                print(f"{name:26s} {files} file(s) at once: {rates[1]:6.0f} MB/s in all, {rates[1] / files:6.0f} per file")


if __name__ == "__main__":
    main()
