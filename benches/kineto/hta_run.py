#!/usr/bin/env python3
"""HTA's side of benches/kineto.sh: load a trace folder, run the temporal
breakdown and the communication/computation overlap, print the phase times
and the peak resident memory of HTA's whole process tree.

    benches/kineto/hta_run.py DIR [BACKEND]

BACKEND is one of HTA's parser backends (`json`, its default, or
`ijson_batch_and_compress`, the one its docs name as the memory-lean choice
for large traces); it is set as HTA's default parser configuration.

HTA parses the ranks in a pool of worker processes, so the peak RSS that
/usr/bin/time reports (the largest single process) understates what the run
needs; the tree peak sums the RSS of this process and all its descendants,
sampled every 50 ms.
"""

import logging
import os
import sys
import threading
import time
import warnings

import psutil


def tree_rss(proc):
    total = 0
    for p in [proc] + proc.children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def main():
    folder = sys.argv[1]
    me = psutil.Process(os.getpid())
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(me))
            done.wait(0.05)

    threading.Thread(target=sample, daemon=True).start()
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    warnings.simplefilter("ignore")
    from hta.trace_analysis import TraceAnalysis

    if len(sys.argv) > 2:
        from hta.configs.parser_config import ParserBackend, ParserConfig

        cfg = ParserConfig.get_default_cfg()
        cfg.set_parser_backend(ParserBackend(sys.argv[2]))
        ParserConfig.set_default_cfg(cfg)

    t0 = time.perf_counter()
    ta = TraceAnalysis(trace_dir=folder)
    t1 = time.perf_counter()
    tb = ta.get_temporal_breakdown(visualize=False)
    t2 = time.perf_counter()
    ov = ta.get_comm_comp_overlap(visualize=False)
    t3 = time.perf_counter()
    done.set()
    peak[0] = max(peak[0], tree_rss(me))
    backend = sys.argv[2] if len(sys.argv) > 2 else "json"
    print(f"hta ({backend}): load {t1 - t0:.1f} s, temporal breakdown {t2 - t1:.1f} s, overlap {t3 - t2:.1f} s, "
          f"total {t3 - t0:.1f} s; peak RSS of the process tree {peak[0] / 2**20:.0f} MiB")
    print(f"hta: ranks {sorted(ta.t.traces)}; idle % {list(tb['idle_time_pctg'])}; "
          f"overlap % {list(ov['comp_comm_overlap_pctg'])}")


if __name__ == "__main__":
    main()
