#!/usr/bin/env python3
"""Writes the hand-made trace pairs of compare's tests (tests/traces.rs):
two runs of two ranks each whose kernel times differ in known ways.

    base/ : gemm 3 x 100 us (rank 1: 110), relu<float> 2 x 50, softmax 2 x 20,
            norm 20 (rank 1: 30), old_kernel 30
    cand/ : gemm +20%, relu<half> (template renamed), softmax with a launch
            shape, norm +2 per rank (within the 10 us rank spread),
            new_kernel 25 instead of old_kernel
"""
import json
import os

SHAPE = "[SIMD16 {8; 1; 1} {64; 1; 1}]"


def kernels(cand, rank):
    slow = 1.1 if rank == 1 else 1.0
    gemm = (120.0 if cand else 100.0) * slow
    ks = [("gemm" + SHAPE, gemm)] * 3
    ks += [("relu<half>" if cand else "relu<float>", 50.0)] * 2
    ks += [("softmax[SIMD32 {4; 1; 1} {32; 1; 1}]" if cand else "softmax", 20.0)] * 2
    ks += [("norm", (20.0 if rank == 0 else 30.0) + (2.0 if cand else 0.0))]
    ks += [("new_kernel", 25.0)] if cand else [("old_kernel", 30.0)]
    return ks


def write(path, cand, rank):
    pid = 1000 + rank
    dev = 4294967295
    ev = [
        {"ph": "M", "name": "process_name", "pid": pid, "ts": 1700000000000000.0,
         "args": {"name": f"RANK {rank} HOST<node0>"}},
        {"ph": "M", "name": "process_name", "pid": dev, "ts": 1700000000000000.0,
         "args": {"name": f"RANK {rank} DEVICE<node0>[GPU] 0:0:0:0 #0"}},
        {"ph": "M", "name": "thread_name", "pid": dev, "tid": dev, "ts": 1700000000000000.0,
         "args": {"name": f"Thread {pid} L0 Compute Engine<0,0>"}},
    ]
    ts = 1700000000000100.0
    for i, (name, dur) in enumerate(kernels(cand, rank)):
        ev.append({"ph": "X", "tid": dev, "pid": dev, "name": name, "cat": "gpu_op",
                   "ts": ts, "dur": dur, "args": {"id": str(i + 1)}})
        ts += dur + 10.0
    with open(path, "w") as f:
        f.write('{ "traceEvents":[\n')
        f.write(",\n".join(json.dumps(e) for e in ev))
        f.write("\n]}\n")


for side, cand in (("base", False), ("cand", True)):
    os.makedirs(side, exist_ok=True)
    for rank in (0, 1):
        write(os.path.join(side, f"app.{1000 + rank}.{rank}.json"), cand, rank)
