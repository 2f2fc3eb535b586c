#!/usr/bin/env python3
"""Derives and writes the verdict cases of compare's tests
(compare/tests/verdicts.rs); make_verdicts.sh runs it after generating
gemm10/base.

gemm10/cand: gemm10/base with every gemm_kernel device operation 10%
    longer, on every rank (nothing else changes, not even start times:
    tracestat sums durations, so the gemm_kernel total is exactly 1.1x).

runs/base/{1,2,3}, runs/cand/{1,2,3}: three repeated runs per side of a
    hand-made 2-rank job whose kernel times jitter from run to run; per rank:
        gemm   3 x (100 + g)   base, 3 x (110 + g) cand,  g = -1, 0, +1
        relu   2 x (50 + r)    base, 2 x (54 + r)  cand,  r = -6, 0, +6
        norm   1 x 20          both sides, every run
    (run i takes the i-th jitter). Per run, over both ranks:
        gemm   594, 600, 606  ->  654, 660, 666   (+60 us, +10%, sd 6)
        relu   176, 200, 224  ->  192, 216, 240   (+16 us, +8%, sd 24)
    gemm's change is beyond the noise, relu's is not (Welch, 4 degrees of
    freedom, p = 0.46), though one run per side (run 1 against run 1:
    176 -> 192, +9.1%, +16 us) would pass the 5% and 10 us threshold.
"""
import json
import os
import re

GEMM = re.compile(r'("name": "gemm_kernel[^"]*", "cat": "gpu_op", "ts": [0-9.]+, "dur": )([0-9.]+)')


def slower_gemm(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name)) as f:
            text = f.read()
        out, n = GEMM.subn(lambda m: "%s%.6f" % (m.group(1), float(m.group(2)) * 1.1), text)
        assert n > 0, name
        with open(os.path.join(dst, name), "w") as f:
            f.write(out)


def write_rank(path, rank, kernels):
    pid = 2000 + rank
    dev = 4294967295 - (rank << 5)
    ev = [
        {"ph": "M", "name": "process_name", "pid": pid, "ts": 1700000000000000.0,
         "args": {"name": f"RANK {rank} HOST<node0>"}},
        {"ph": "M", "name": "process_name", "pid": dev, "ts": 1700000000000000.0,
         "args": {"name": f"RANK {rank} DEVICE<node0>[GPU] 0:0:0:{rank} #{rank}"}},
        {"ph": "M", "name": "thread_name", "pid": dev, "tid": dev, "ts": 1700000000000000.0,
         "args": {"name": f"Thread {pid} L0 Compute Engine<0,0>"}},
    ]
    ts = 1700000000000100.0
    for i, (name, dur) in enumerate(kernels):
        ev.append({"ph": "X", "tid": dev, "pid": dev, "name": name, "cat": "gpu_op",
                   "ts": ts, "dur": dur, "args": {"id": str(i + 1)}})
        ts += dur + 10.0
    with open(path, "w") as f:
        f.write('{ "traceEvents":[\n')
        f.write(",\n".join(json.dumps(e) for e in ev))
        f.write("\n]}\n")


def repeated_runs():
    for side, gemm, relu in (("base", 100.0, 50.0), ("cand", 110.0, 54.0)):
        for run, (g, r) in enumerate(((-1.0, -6.0), (0.0, 0.0), (1.0, 6.0)), start=1):
            folder = os.path.join("runs", side, str(run))
            os.makedirs(folder, exist_ok=True)
            for rank in (0, 1):
                kernels = [("gemm", gemm + g)] * 3 + [("relu", relu + r)] * 2 + [("norm", 20.0)]
                write_rank(os.path.join(folder, f"app.{2000 + rank}.{rank}.json"), rank, kernels)


slower_gemm("gemm10/base", "gemm10/cand")
repeated_runs()
