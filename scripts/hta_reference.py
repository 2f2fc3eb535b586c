#!/usr/bin/env python3
"""HTA's numbers on the committed Kineto traces: the oracle for the Kineto input.

    scripts/hta_reference.py [CASE ...]          compare with testdata/kineto/expected/
    BLESS=1 scripts/hta_reference.py [CASE ...]  rewrite testdata/kineto/expected/

A case is one folder of testdata/kineto/ that HTA loads as one job (every
`*.json`/`*.gz` file directly in it, one file per rank); CASES below lists
them with the critical-path windows to analyse. For each case the analyses
of testdata/kineto/README.md#hta-reference are run through HTA's public
`TraceAnalysis` API and written as testdata/kineto/expected/<case>.hta.json
(keys sorted, floats as json.dumps writes them, NaN as null). An analysis that
HTA refuses or crashes on is recorded as {"error": "<exception type>: <first
line>"}, so that HTA's failures are pinned too.

Compare mode recomputes every case and exits 1 on any difference (floats
within a relative 1e-9), on a missing expected file or on an expected file
that no case produces; it exits 2 when HTA is not usable: it needs, best in
a virtual environment whose python runs this script,
`pip install holistictraceanalysis==0.5.0 psutil pyyaml "pandas<3"` (HTA
0.5.0 does not declare psutil and pyyaml, and fails on pandas 3).
"""

import json
import logging
import math
import os
import sys
import tempfile
import warnings

# HTA's own test settings (tests/test_critical_path_analysis.py sets the
# first); the second is HTA's default, written down so that the environment
# cannot change it.
os.environ["CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE"] = "1"
os.environ["HTA_DISABLE_NS_ROUNDING"] = "0"

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "testdata", "kineto")
EXPECTED = os.path.join(DATA, "expected")

# The annotation windows of HTA's own critical-path tests.
ALEXNET_FORWARD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
# Recorded runs: ProfilerStep#2..#5 remain after HTA drops the last step, so
# instance 1 is ProfilerStep#3 (the planted straggler step) and instance 3 is
# ProfilerStep#5 (the planted slow matmul), see recorded/README.md.
RECORDED_CP = [(r, "ProfilerStep", i) for r in range(4) for i in (1, 3)]

# The 2-rank re-runs (testdata/kineto/recorded/README.md#what-if-against-a-re-run):
# instance 1 is ProfilerStep#3 (sleep50's sleep), instance 2 ProfilerStep#4
# (the slow runs' planted matmuls).
RERUN = ["slow2", "slow1", "slow1again", "slow0", "sleep50", "sleep0", "sleep0again"]
RERUN_CP = [(r, "ProfilerStep", i) for r in range(2) for i in (1, 2)]

# case folder (relative to testdata/kineto) -> critical-path windows
# [(rank, annotation, instance_id)].
CASES = {
    "hta/amd_trace": [(0, "ProfilerStep", 1)],
    "hta/call_stack": [],
    "hta/cpu_only": [],
    "hta/critical_path/alexnet": [(0, ALEXNET_FORWARD, 1)],
    "hta/critical_path/cuda_event_sync": [(0, "ProfilerStep", 0)],
    "hta/critical_path/cuda_event_sync_multi_stream": [(0, "", None)],
    "hta/critical_path/simple_add": [(0, ALEXNET_FORWARD, 1)],
    "hta/critical_path/end_to_end/simple_add/output": [],
    "hta/cupti_profiler": [],
    "hta/distributed_info_unavailable": [],
    "hta/nccl_parser_config": [],
    "hta/negative_queue_length_values_check": [],
    "hta/ns_resolution_trace": [(0, "ProfilerStep", 1)],
    "hta/rank_unavailable": [],
    "hta/trace_compare/base": [],
    "hta/trace_compare/test": [],
    "hta/trace_diff/control": [],
    "hta/trace_diff/test": [],
    "hta/trace_file_list": [],
    "hta/trace_filter": [],
    "hta/triton_example": [],
    "recorded/clean": RECORDED_CP,
    "recorded/planted": RECORDED_CP,
    **{f"recorded/rerun/{run}": RERUN_CP for run in RERUN},
    # One rank each (testdata/kineto/recorded/README.md#findings-on-a-recording): instance 2
    # is ProfilerStep#4, with the jiterator build in launch/.
    "recorded/one-rank/launch": [(0, "ProfilerStep", 2)],
    "recorded/one-rank/copies": [(0, "ProfilerStep", 2)],
    "recorded/two-rank/rules": [(r, "ProfilerStep", 2) for r in range(2)],
}

# Arguments of the analyses (HTA's defaults, except where a comment says why).
KERNEL_BREAKDOWN_ARGS = dict(
    visualize=False,
    include_memory_kernels=True,
    # Every kernel by name: HTA's defaults (0.8, 10) fold the tail into "others".
    duration_ratio=1.0,
    num_kernels=1_000_000_000,
)
IDLE_ARGS = dict(visualize=False, show_idle_interval_stats=True, consecutive_kernel_delay=30)
LAUNCH_ARGS = dict(runtime_cutoff=50, launch_delay_cutoff=100, include_memory_events=True, visualize=False)
REL_TOL = 1e-9
INSTALL = ('in a virtual environment: pip install holistictraceanalysis==0.5.0 psutil pyyaml "pandas<3", '
           "then run this script with its python")


def case_file(case):
    return os.path.join(EXPECTED, case.replace("/", ".") + ".hta.json")


def plain(value):
    """numpy/pandas scalars -> JSON values; NaN/inf -> None."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def rows(df, sort_by):
    """DataFrame -> list of {column: value}, in a stable order."""
    if df is None:
        return None
    df = df.reset_index(drop=True)
    out = [{str(k): plain(v) for k, v in rec.items()} for rec in df.to_dict("records")]
    return sorted(out, key=lambda r: tuple(str(r.get(k)) if not isinstance(r.get(k), (int, float)) else r.get(k) for k in sort_by))


def error_of(exc):
    text = str(exc).strip().splitlines()
    return {"error": f"{type(exc).__name__}: {text[0] if text else ''}".strip()}


def guarded(fn):
    try:
        return fn()
    except Exception as exc:  # HTA's failures are results too
        return error_of(exc)


def temporal_breakdown(ta):
    return rows(ta.get_temporal_breakdown(visualize=False), ["rank"])


def comm_comp_overlap(ta):
    return rows(ta.get_comm_comp_overlap(visualize=False), ["rank"])


def idle_time_breakdown(ta, ranks):
    idle, stats = ta.get_idle_time_breakdown(ranks=ranks, **IDLE_ARGS)
    out = {"by_category": rows(idle, ["rank", "stream", "idle_category"])}
    if stats is not None:
        stats = stats.reset_index().rename(columns={"index": "idle_category"})
        out["interval_stats"] = rows(stats, ["rank", "stream", "idle_category"])
    return out


def kernel_breakdown(ta):
    by_type, by_kernel = ta.get_gpu_kernel_breakdown(**KERNEL_BREAKDOWN_ARGS)
    return {
        "by_type": rows(by_type, ["kernel_type"]),
        "by_kernel": rows(by_kernel, ["kernel_type", "name", "rank"]),
    }


def launch_stats(ta, ranks):
    out = {}
    for rank, df in sorted(ta.get_cuda_kernel_launch_stats(ranks=ranks, **LAUNCH_ARGS).items()):
        rec = {"launches": int(len(df))}
        for col in ("cpu_duration", "gpu_duration", "launch_delay"):
            s = df[col]
            rec[col] = {
                "sum": plain(s.sum()),
                "mean": plain(s.mean()) if len(s) else None,
                "max": plain(s.max()) if len(s) else None,
                "median": plain(s.median()) if len(s) else None,
            }
        cutoff_rt, cutoff_delay = LAUNCH_ARGS["runtime_cutoff"], LAUNCH_ARGS["launch_delay_cutoff"]
        rec["runtime_outliers"] = sorted(int(c) for c in df[df.cpu_duration > cutoff_rt].correlation)
        rec["launch_delay_outliers"] = sorted(int(c) for c in df[df.launch_delay > cutoff_delay].correlation)
        rec["gpu_shorter_than_cpu"] = int((df.gpu_duration < df.cpu_duration).sum())
        out[str(rank)] = rec
    return out


def queue_length_summary(ta, ranks):
    df = ta.get_queue_length_summary(ranks=ranks)
    if df is None:
        return None
    df = df.copy()
    df.columns = [c[1] if isinstance(c, tuple) else c for c in df.columns]
    return rows(df.reset_index(), ["rank", "stream"])


def critical_path(ta, rank, annotation, instance):
    result = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=instance)
    if result is None:
        return {"error": "critical_path_analysis returned None (annotation not found)"}
    graph, ok = result
    out = {"success": bool(ok)}
    if not ok:
        return out
    bd = graph.get_critical_path_breakdown()
    out["nodes"] = len(graph.critical_path_nodes)
    out["edges"] = len(graph.critical_path_edges_set)
    out["events"] = len(graph.critical_path_events_set)
    out["length"] = plain(bd.duration.sum())
    out["by_bound_by"] = {k or "(none)": plain(v) for k, v in bd.groupby("bound_by").duration.sum().items()}
    out["by_edge_type"] = {k: plain(v) for k, v in bd.groupby("type").duration.sum().items()}
    named = bd[bd.s_name.notna()].groupby(["s_name", "cat"]).duration.agg(["sum", "count"]).reset_index()
    named = named.sort_values(["sum", "s_name"], ascending=[False, True]).head(15)
    sym = ta.t.symbol_table.get_sym_table()
    out["top_events"] = [
        {"name": r["s_name"], "cat": sym[int(r["cat"])], "duration": plain(r["sum"]), "edges": int(r["count"])}
        for _, r in named.iterrows()
    ]
    return out


def run_case(case, cp_windows, hta_version):
    from hta.trace_analysis import TraceAnalysis

    folder = os.path.join(DATA, case)
    files = sorted(f for f in os.listdir(folder) if f.endswith(".gz") or f.endswith(".json"))
    result = {"hta_version": hta_version, "case": case, "files": files}
    try:
        ta = TraceAnalysis(trace_dir=folder)
    except Exception as exc:
        result["load"] = error_of(exc)
        return result
    ranks = sorted(ta.t.traces.keys())
    result["ranks"] = ranks
    result["events_after_load"] = {str(r): int(len(ta.t.traces[r])) for r in ranks}
    result["profiler_steps"] = guarded(lambda: [int(s) for s in ta.get_profiler_steps()])
    result["temporal_breakdown"] = guarded(lambda: temporal_breakdown(ta))
    result["idle_time_breakdown"] = guarded(lambda: idle_time_breakdown(ta, ranks))
    result["comm_comp_overlap"] = guarded(lambda: comm_comp_overlap(ta))
    result["kernel_breakdown"] = guarded(lambda: kernel_breakdown(ta))
    result["kernel_launch_stats"] = guarded(lambda: launch_stats(ta, ranks))
    result["queue_length_summary"] = guarded(lambda: queue_length_summary(ta, ranks))
    if len(ranks) > 1:
        result["potential_stragglers"] = guarded(lambda: sorted(int(r) for r in ta.get_potential_stragglers()))
    if cp_windows:
        cps = {}
        for rank, annotation, instance in cp_windows:
            key = f"rank{rank}:{annotation or '(whole trace)'}:{instance}"
            cps[key] = guarded(lambda: critical_path(ta, rank, annotation, instance))
        result["critical_path"] = cps
    return result


def dumps(obj):
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n"


def differences(want, got, path="", out=None):
    out = [] if out is None else out
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                out.append(f"{path}/{k}: missing now")
            elif k not in want:
                out.append(f"{path}/{k}: new key")
            else:
                differences(want[k], got[k], f"{path}/{k}", out)
    elif isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            out.append(f"{path}: {len(want)} items expected, {len(got)} now")
        for i, (w, g) in enumerate(zip(want, got)):
            differences(w, g, f"{path}[{i}]", out)
    elif isinstance(want, float) or isinstance(got, float):
        if not (isinstance(want, (int, float)) and isinstance(got, (int, float))) or not math.isclose(
            want, got, rel_tol=REL_TOL, abs_tol=REL_TOL
        ):
            out.append(f"{path}: expected {want!r}, now {got!r}")
    elif want != got:
        out.append(f"{path}: expected {want!r}, now {got!r}")
    return out


def main(argv):
    try:
        import importlib.metadata

        import hta.trace_analysis  # noqa: F401

        hta_version = importlib.metadata.version("holistictraceanalysis")
        pandas_major = int(importlib.metadata.version("pandas").split(".")[0])
    except Exception as exc:
        print(f"hta_reference.py: HTA is not usable ({error_of(exc)['error']}); {INSTALL}", file=sys.stderr)
        return 2
    if pandas_major >= 3:
        # HTA 0.5.0's idle-time breakdown raises on pandas 3 (testdata/kineto/README.md#hta-reference).
        print(f"hta_reference.py: HTA {hta_version} needs pandas < 3; {INSTALL}", file=sys.stderr)
        return 2
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    logging.getLogger().setLevel(logging.CRITICAL)
    warnings.simplefilter("ignore")

    bless = os.environ.get("BLESS") == "1"
    unknown = [c for c in argv if c not in CASES]
    if unknown:
        print(f"hta_reference.py: unknown case {unknown[0]} (cases: {', '.join(CASES)})", file=sys.stderr)
        return 2
    cases = argv or list(CASES)
    failed = passed = 0
    os.makedirs(EXPECTED, exist_ok=True)
    for case in cases:
        got = run_case(case, CASES[case], hta_version)
        text = dumps(got)
        path = case_file(case)
        if bless:
            fd, tmp = tempfile.mkstemp(dir=EXPECTED, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            print(f"blessed {os.path.relpath(path, REPO)}")
            continue
        if not os.path.exists(path):
            print(f"FAIL {case}: no {os.path.relpath(path, REPO)} (run with BLESS=1)")
            failed += 1
            continue
        with open(path) as f:
            want = json.load(f)
        if want.get("hta_version") != hta_version:
            print(f"note {case}: expected from HTA {want.get('hta_version')}, running HTA {hta_version}")
        diffs = differences({k: v for k, v in want.items() if k != "hta_version"},
                            {k: v for k, v in json.loads(text).items() if k != "hta_version"})
        if diffs:
            failed += 1
            print(f"FAIL {case}: {len(diffs)} difference(s)")
            for d in diffs[:20]:
                print(f"  {d}")
        else:
            passed += 1
            print(f"ok   {case}")
    if not argv and not bless:
        known = {os.path.basename(case_file(c)) for c in CASES}
        for stale in sorted(set(os.listdir(EXPECTED)) - known):
            print(f"FAIL stale expected file {stale} (no case produces it)")
            failed += 1
    if not bless:
        print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
