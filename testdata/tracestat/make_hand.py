#!/usr/bin/env python3
"""Writes the hand-built traces of the tracestat tests (docs/tracestat.md#tests).

Times are microsecond offsets from T; every expected number is worked out in
tracestat/tests/hand.rs. Run from this folder: python3 make_hand.py
"""

T = 1700000000000000.0


def ts(off):
    return "%.6f" % (T + off)


def host(pid, tid, name, start, dur, tail=', "id": 0'):
    return ('{"ph": "X", "tid": %d, "pid": %d, "name": "%s", "cat": "cpu_op", "ts": %s, "dur": %.6f%s}'
            % (tid, pid, name, ts(start), dur, tail))


def kernel(pid, tid, name, start, dur, kid):
    return ('{"ph": "X", "tid": %d, "pid": %d, "name": "%s", "cat": "gpu_op", "ts": %s, "dur": %.6f, "args": {"id": "%d"}}'
            % (tid, pid, name, ts(start), dur, kid))


def flow(pid, tid, start, kid, rank, phase="s", kind="H2D"):
    return ('{"ph": "%s", "tid": %d, "pid": %d, "name": "dep", "cat": "Flow_%s_%d_%d", "ts": %s, "id": %d}'
            % (phase, tid, pid, kind, kid, rank, ts(start), kid))


def meta(kind, pid, label, tid=None):
    t = '' if tid is None else ', "tid": %d' % tid
    return '{"ph": "M", "name": "%s", "pid": %d%s, "ts": %s, "args": {"name": "%s"}}' % (kind, pid, t, ts(0), label)


def write(path, events, cut=None):
    text = '{ "traceEvents":[\n' + ',\n'.join(events) + '\n]\n}\n'
    if cut is not None:
        text = text[:cut(text)]
    with open(path, 'w') as f:
        f.write(text)


# --- hand.1000.0.json: one rank, two compute engines, a copy engine --------
P, H = 1000, 1000
D, EA, EB, EC = 4294967295, 4294967295, 4294967294, 4294967293
ev = [
    meta("process_name", P, "RANK 0 HOST<node0>"),
    meta("process_name", D, "RANK 0 DEVICE<node0>[GPU] 0:0:0:0 #0"),
    meta("thread_name", D, "Thread 1000 L0 Compute Engine<0,0>", EA),
    meta("thread_name", D, "Thread 1000 L0 Compute Engine<0,1>", EB),
    meta("thread_name", D, "Thread 1000 L0 Copy Engine<1,0>", EC),
    # Device events first, as unitrace flushes them (not in time order).
    kernel(D, EA, "gemm[SIMD16 {8; 1; 1} {64; 1; 1}]", 100, 200, 1), flow(D, EA, 100, 1, 0, "t"),
    kernel(D, EA, "bias_add", 300, 50, 2),
    kernel(D, EB, "allreduce_kernel", 200, 200, 3),
    kernel(D, EC, "zeCommandListAppendMemoryCopy(M2D)[4096]", 380, 40, 4),
    kernel(D, EA, "softmax", 800, 100, 5),
    # Host: an X is written when it ends, so nested calls come first.
    host(P, H, "zeCommandListAppendLaunchKernel", 20, 5), flow(P, H, 20, 1, 0),
    host(P, H, "PyTorch::aten::mm", 10, 30),
    host(P, H, "zeCommandListAppendLaunchKernel", 50, 5), flow(P, H, 50, 2, 0),
    host(P, H, "PyTorch::aten::linear", 0, 100),
    host(P, H, "zeCommandListAppendLaunchKernel", 115, 5), flow(P, H, 115, 3, 0),
    host(P, H, "oneCCL::API::ALLREDUCE_SMALL", 110, 40, ', "args": {"send_size":[1048576]}'),
    host(P, H, "zeCommandListAppendMemoryCopy", 160, 5), flow(P, H, 160, 4, 0),
    host(P, H, "zeEventHostSynchronize", 400, 300),
    host(P, H, "zeCommandListAppendLaunchKernel", 700, 5), flow(P, H, 700, 5, 0),
    host(P, H, "zeCommandListHostSynchronize", 1000, 100),
]
write("hand.1000.0.json", ev)

# --- tiles.json: implicit scaling with --separate-tiles, no rank ----------
ev = [
    '{"ph": "M", "name": "process_name", "pid": 7, "ts": %s, "args": {"name": "HOST<node0>"}}' % ts(0),
    meta("process_name", D, "DEVICE<node0>[GPU] 0:0:0:0 #0"),
    kernel(D, EA, "Tile #0: gemm", 0, 100, 1),
    kernel(D, EA, "Tile #1: gemm", 50, 100, 2),
    host(7, 7, "zeCommandListAppendLaunchKernel", 0, 200),
]
write("tiles.json", ev)

# --- coll.200r.r.json: four ranks, two collectives; rank 2 arrives 3 ms late
# at the first; rank 3 is cut mid-event before the second; rank 1 carries
# implausible events.
A = {0: 1000, 1: 1200, 2: 4000, 3: 1100}
B = {0: 6000, 1: 6100, 2: 6050}
G = {0: 100, 1: 200, 2: 300, 3: 150}
for r in range(4):
    P = H = 2000 + r
    D = 4294967295 - (r << 5)
    ev = [
        meta("process_name", P, "RANK %d HOST<node0>" % r),
        meta("process_name", D, "RANK %d DEVICE<node0>[GPU] 0:0:0:0 #0" % r),
        meta("thread_name", D, "Thread %d L0 Compute Engine<0,0>" % P, D),
        kernel(D, D, "gemm", 600, G[r], 1),
    ]
    if r == 1:
        ev += [
            kernel(D, D, "bad_negative", 700, -5, 2),
            kernel(D, D, "bad_zero", 700, 0, 3),
            kernel(D, D, "bad_too_long", 700, 10000000, 4),
            host(P, H, "jumped_clock", 2 * 86400e6, 1),
        ]
    ev += [
        host(P, H, "zeCommandListAppendLaunchKernel", 500, 10), flow(P, H, 500, 1, r),
        host(P, H, "oneCCL::API::ALLREDUCE_SMALL", A[r], 4500 - A[r], ', "args": {"send_size":[1048576]}'),
    ]
    if r in B:
        ev += [
            host(P, H, "MPI::MPI_Barrier", B[r], 6200 - B[r]),
            host(P, H, "zeCommandListHostSynchronize", 6300, 100),
        ]
    else:
        ev += [host(P, H, "MPI::MPI_Barrier", 6000, 200)]
    cut = (lambda t: t.rindex('{"ph": "X", "tid": 2003, "pid": 2003, "name": "MPI::MPI_Barrier"') + 40) if r == 3 else None
    write("coll.%d.%d.json" % (P, r), ev, cut)
