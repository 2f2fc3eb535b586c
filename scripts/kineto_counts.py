#!/usr/bin/env python3
"""Count, from one Kineto trace and without tracestat, the numbers the
findings on a recording are checked against
(testdata/kineto/recorded/README.md#findings-on-a-recording):

    python3 scripts/kineto_counts.py testdata/kineto/recorded/one-rank/launch/rank0.pt.trace.json.gz

Device operations are the `kernel`, `gpu_memcpy` and `gpu_memset` slices;
their idle gaps are the holes in the union of them; the steady state runs
from the second `ProfilerStep#N` range's start to the last one's end.
"""

import gzip
import json
import re
import sys


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def merged(intervals):
    """The union of `(start, end)` intervals, as disjoint ones in order."""
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def main(path):
    events = load(path)
    device = sorted(
        (e["ts"], e["ts"] + e["dur"], e)
        for e in events
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    print(f"device operations: {len(device)}, under 10 us: {sum(1 for d in device if d[1] - d[0] < 10)}")
    union = []
    for start, end, _ in device:
        if union and start <= union[-1][1]:
            union[-1][1] = max(union[-1][1], end)
        else:
            union.append([start, end])
    gaps = [union[i + 1][0] - union[i][1] for i in range(len(union) - 1)]
    short = [g for g in gaps if g < 100]
    print(f"idle gaps under 100 us: {len(short)}, {sum(short) / 1000:.3f} ms; "
          f"100 us or more: {sum(g for g in gaps if g >= 100) / 1000:.3f} ms")
    print(f"active window: {(union[-1][1] - union[0][0]) / 1000:.3f} ms")
    comm = merged((d[0], d[1]) for d in device if d[2].get("cat") == "kernel" and "nccl" in d[2]["name"].lower())
    compute = merged(
        (d[0], d[1]) for d in device if d[2].get("cat") == "kernel" and "nccl" not in d[2]["name"].lower()
    )
    total = sum(b - a for a, b in comm)
    overlap = sum(max(0.0, min(b, d) - max(a, c)) for a, b in comm for c, d in compute if c < b and d > a)
    print(f"communication kernels: {total / 1000:.3f} ms, {overlap / 1000:.3f} ms of it beside compute kernels, "
          f"{(total - overlap) / 1000:.3f} ms exposed")
    steps = sorted(
        (e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
        key=lambda e: e["ts"],
    )
    lo, hi = steps[1]["ts"], max(s["ts"] + s["dur"] for s in steps)
    allocs = [
        e for e in events
        if e.get("cat") == "cuda_runtime" and re.match(r"cuda(Malloc|Free|HostAlloc)", e["name"])
        and lo <= e["ts"] and e["ts"] + e["dur"] <= hi
    ]
    busy = 0.0
    for e in allocs:
        start, end = e["ts"], e["ts"] + e["dur"]
        busy += sum(max(0.0, min(end, b) - max(start, a)) for a, b in union if a < end and b > start)
    names = sorted({e["name"] for e in allocs})
    per_name = ", ".join(f"{n} {sum(1 for e in allocs if e['name'] == n)}" for n in names)
    print(f"allocation calls in the steady state: {len(allocs)}, "
          f"{sum(e['dur'] for e in allocs) / 1000:.3f} ms "
          f"({per_name}), {busy / 1000:.3f} ms of it with the device busy")
    small = [d[2] for d in device if d[2].get("cat") == "gpu_memcpy" and d[2].get("args", {}).get("bytes", 1 << 30) < 65536]
    print(f"copies under 64 KiB: {len(small)}, {sum(e['args']['bytes'] for e in small)} bytes, "
          f"{sum(e['dur'] for e in small) / 1000:.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
