#!/usr/bin/env python3
"""Replicate a real multi-rank Kineto trace set into a large one for benches/kineto.sh.

    benches/kineto/replicate.py SRC_DIR OUT_DIR [--ranks 8] [--total-mb 450]

SRC_DIR holds one Kineto trace per rank (`*.json` or `*.json.gz`, rank from
`distributedInfo.rank`). Output rank r is built from source rank
r mod (number of source ranks): its trace events are written K times in a
row, K chosen so that the OUT_DIR/rank<r>.pt.trace.json files add up to about
--total-mb MB. Copy k is a distinct, later stretch of the same run:

* every `ts` moves by k x (the source's time span + 1 ms);
* `correlation`, `External id`, flow `id`, `Python id`/`Python parent id`,
  `Sequence number` and `Ev Idx` move by k x a power of ten above the
  source's largest id, so links never cross copies;
* `ProfilerStep#N` becomes `ProfilerStep#(N + k x steps)`, so the steps keep
  counting up;
* metadata (`ph` `M`) events are written once.

`distributedInfo` gets the output rank and world size (and a process group of
all output ranks); every other envelope key is kept. Deterministic: the same
input gives the same bytes.
"""

import argparse
import gzip
import json
import math
import os
import re
import sys

STEP = re.compile(r"^ProfilerStep#(\d+)$")
ID_ARGS = ("correlation", "External id", "Python id", "Python parent id", "Sequence number", "Ev Idx")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def source_traces(src):
    traces = {}
    for name in sorted(os.listdir(src)):
        if not (name.endswith(".json") or name.endswith(".json.gz")):
            continue
        doc = load(os.path.join(src, name))
        rank = (doc.get("distributedInfo") or {}).get("rank")
        if not isinstance(rank, int):
            sys.exit(f"replicate.py: {src}/{name}: no distributedInfo.rank")
        traces[rank] = doc
    if not traces:
        sys.exit(f"replicate.py: {src}: no Kineto trace (*.json, *.json.gz)")
    return [traces[r] for r in sorted(traces)]


def shape(events):
    """(time span, id stride, step count) of one source trace."""
    lo, hi, top = math.inf, -math.inf, 0
    steps = set()
    for e in events:
        ts = e.get("ts")
        if isinstance(ts, (int, float)) and e.get("ph") != "M":
            lo = min(lo, ts)
            hi = max(hi, ts + (e.get("dur") or 0))
        if isinstance(e.get("id"), int):
            top = max(top, e["id"])
        for key in ID_ARGS:
            v = (e.get("args") or {}).get(key)
            if isinstance(v, int):
                top = max(top, v)
        m = STEP.match(str(e.get("name", "")))
        if m:
            steps.add(int(m.group(1)))
    span = (hi - lo) + 1000.0 if hi > lo else 1000.0
    stride = 10 ** len(str(top + 1))
    nsteps = (max(steps) - min(steps) + 1) if steps else 0
    return span, stride, nsteps


def shifted(e, k, span, stride, nsteps):
    if k == 0:
        return e
    e = dict(e)
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] = round(e["ts"] + k * span, 3)
    if isinstance(e.get("id"), int):
        e["id"] += k * stride
    m = STEP.match(str(e.get("name", "")))
    if m:
        e["name"] = f"ProfilerStep#{int(m.group(1)) + k * nsteps}"
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in ID_ARGS:
            if isinstance(args.get(key), int):
                args[key] += k * stride
        e["args"] = args
    return e


def write_rank(doc, rank, world, copies, out_path):
    events = doc["traceEvents"]
    span, stride, nsteps = shape(events)
    head = {k: v for k, v in doc.items() if k not in ("traceEvents", "traceName")}
    dist = dict(head.get("distributedInfo") or {})
    dist.update(rank=rank, world_size=world)
    if "pg_config" in dist:
        dist["pg_count"] = 1
        dist["pg_config"] = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                              "pg_size": world, "ranks": list(range(world))}]
    head["distributedInfo"] = dist
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n{\n")  # Kineto's files start with a newline (docs/formats.md#kineto-json-envelope)
        for key, value in head.items():
            f.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        f.write('  "traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in events:
                if k > 0 and e.get("ph") == "M":
                    continue
                f.write(("" if first else ",\n") + "  " + json.dumps(shifted(e, k, span, stride, nsteps)))
                first = False
        f.write("\n  ],\n")
        f.write(f'  "traceName": {json.dumps(os.path.basename(out_path))}\n}}\n')
    os.replace(tmp, out_path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--total-mb", type=float, default=450.0)
    args = p.parse_args()
    sources = source_traces(args.src)
    one_copy = [sum(len(json.dumps(e)) + 4 for e in doc["traceEvents"]) for doc in sources]
    per_rank = args.total_mb * 1e6 / args.ranks
    os.makedirs(args.out, exist_ok=True)
    for r in range(args.ranks):
        doc = sources[r % len(sources)]
        copies = max(1, round(per_rank / one_copy[r % len(sources)]))
        write_rank(doc, r, args.ranks, copies, os.path.join(args.out, f"rank{r}.pt.trace.json"))
        print(f"rank {r}: {copies} copies of source rank {r % len(sources)}", file=sys.stderr)


if __name__ == "__main__":
    main()
