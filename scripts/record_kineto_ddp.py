#!/usr/bin/env python3
"""Record one Kineto (torch.profiler) trace per rank of a small DDP training loop.

The traces are test data with known answers (testdata/kineto/recorded/README.md):

    python3 scripts/record_kineto_ddp.py --mode clean   --out DIR/clean
    python3 scripts/record_kineto_ddp.py --mode planted --out DIR/planted
    python3 scripts/record_kineto_ddp.py --mode slow --slow-count 2 --out DIR/slow2

All modes run the same model, data, profiler settings and communication hook,
so the two recordings differ only by what `--mode planted` adds:

  * straggler: rank --straggler-rank sleeps --sleep-ms on the host right
    before the first gradient all-reduce of ProfilerStep#--straggler-step
    (inside the DDP communication hook, in a `planted_sleep` range); the other
    ranks wait for it inside the NCCL all-reduce kernel;
  * slow kernel: rank --slow-rank runs one extra large fp32 matmul
    (`planted_slow_matmul` range) between forward and backward of
    ProfilerStep#--slow-step;
  * pageable copies: rank --pageable-rank copies its input batch to the device
    from pageable host memory in every step (the other ranks from pinned
    memory, as in the clean run);
  * host synchronisation: rank --sync-rank calls torch.cuda.synchronize()
    after the loss of every step (as a logging `loss.item()` would).

`--mode slow` plants only the slow kernel, --slow-count times in a row (0:
none, as in the clean run), and `--mode sleep` only the straggler's sleep:
recordings that differ from a clean one by one planted problem, so that
what a what-if replay predicts without it can be checked against a run
without it (testdata/kineto/recorded/README.md#what-if-against-a-re-run).
`--mode nocomm` is the clean loop whose communication hook returns the
gradients without an all-reduce: the run `comm=0` predicts.

`--mode groups` runs on 4 GPUs with two process groups per rank: the pairs
{0,1} and {2,3} all-reduce a 16 MiB activation after the forward (a
tensor-parallel all-reduce, `tp_allreduce`), DDP all-reduces the gradients
over the pairs {0,2} and {1,3}; rank --straggler-rank sleeps --sleep-ms
right before its pair's activation all-reduce in ProfilerStep#--straggler-step
(testdata/kineto/recorded/README.md#two-process-groups).

`--mode fsdp` shards the model with FullyShardedDataParallel (one unit per
Linear layer: all-gathers of its parameters, reduce-scatters of its
gradients) instead of DDP; rank --straggler-rank sleeps --sleep-ms before
its forward in ProfilerStep#--straggler-step
(testdata/kineto/recorded/README.md#fsdp).

`--mode rules` plants the problems of the findings not planted above, each
on its own rank, in every profiled step unless said
(testdata/kineto/recorded/README.md#findings-on-a-recording):

  * launch-bound: rank --tiny-rank runs --tiny-count in-place additions on
    a 1024-element tensor after the forward (`planted_tiny_kernels`); with
    --tiny-graph the same additions run as one CUDA graph captured before
    the loop, the re-run a what-if without their launches is checked on;
  * small copies: rank --small-rank copies --small-count pinned 4 KiB host
    tensors to the device one by one (`planted_small_copies`);
  * allocation churn: rank --small-rank empties PyTorch's caching allocator
    (torch.cuda.empty_cache) at the start of each step, so the step's
    tensors are allocated again (cudaMalloc, cudaFree);
  * exposed communication: every rank all-reduces a --exposed-mb MB buffer
    after the optimizer with nothing else queued (`planted_exposed_allreduce`);
  * a build in the steady state: rank --tiny-rank compiles and runs a new
    jiterator kernel (NVRTC, then a module load) in ProfilerStep#--jit-step
    (`planted_jit`).

One gzipped trace per rank is written with export_chrome_trace to
OUT/rank<R>.pt.trace.json.gz, and OUT.env.json (beside the folder, so that
tools reading every JSON file of OUT see only traces) records the versions
and GPUs.
With --no-step-markers the --active iterations are profiled without a
schedule and without prof.step(), so the traces hold no ProfilerStep range
(testdata/kineto/recorded/README.md#without-step-markers).
With --cold the profile starts at the process's first step (no untraced
steps, no wait or warm-up in the schedule): its steps hold the set-up of
CUDA, cuBLAS, NCCL and the caching allocator, a real warm-up for
`tracestat --skip-warmup` (testdata/kineto/recorded/README.md#a-cold-start).
Needs one CUDA GPU per rank and NCCL (at least 2, 1 for --mode rules);
started with mp.spawn (no torchrun).
"""

import argparse
import json
import os
import socket
import subprocess
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["clean", "planted", "slow", "sleep", "nocomm", "rules", "groups", "fsdp"], required=True)
    p.add_argument("--out", required=True, help="folder for rank<R>.pt.trace.json.gz")
    p.add_argument("--world-size", type=int, default=0, help="default: all GPUs, at most 4")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--untraced-steps", type=int, default=3, help="warm-up before the profiler starts")
    p.add_argument("--active", type=int, default=5, help="profiled steps after wait=1, warmup=1")
    p.add_argument("--no-step-markers", action="store_true",
                   help="profile --active steps without a schedule and without prof.step(): no ProfilerStep "
                        "ranges, so that tools find the steps by other means")
    p.add_argument("--cold", action="store_true",
                   help="profile from the process's first step: no untraced steps, no wait or warm-up "
                        "in the schedule (its set-up: CUDA, cuBLAS, NCCL, the caching allocator)")
    p.add_argument("--with-stack", action="store_true", help="also record python_function events")
    p.add_argument("--straggler-rank", type=int, default=1)
    p.add_argument("--straggler-step", type=int, default=3)
    p.add_argument("--sleep-ms", type=float, default=50.0)
    p.add_argument("--slow-rank", type=int, default=2)
    p.add_argument("--slow-step", type=int, default=5)
    p.add_argument("--slow-size", type=int, default=8192, help="the planted matmul is SIZE x SIZE x SIZE fp32")
    p.add_argument("--slow-count", type=int, default=1, help="planted matmuls in a row (--mode slow)")
    p.add_argument("--pageable-rank", type=int, default=3)
    p.add_argument("--sync-rank", type=int, default=0)
    p.add_argument("--tiny-rank", type=int, default=0)
    p.add_argument("--tiny-count", type=int, default=2000)
    p.add_argument("--small-rank", type=int, default=1)
    p.add_argument("--small-count", type=int, default=300)
    p.add_argument("--exposed-mb", type=int, default=1024)
    p.add_argument("--jit-step", type=int, default=4)
    p.add_argument("--tiny-graph", action="store_true",
                   help="run the tiny additions as one CUDA graph captured before the loop")
    return p.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Plan:
    """What this rank does beyond the clean loop (nothing in clean mode)."""

    def __init__(self, args, rank):
        planted = args.mode == "planted"
        # Two process groups per rank (--mode groups): tensor-parallel pairs
        # {0,1} {2,3} all-reduce an activation after the forward, DDP
        # all-reduces the gradients over the data-parallel pairs {0,2} {1,3};
        # the straggler sleeps right before its pair's activation all-reduce.
        self.groups = args.mode == "groups"
        # --mode fsdp: the model sharded with FullyShardedDataParallel
        # (all-gathers of the parameters, reduce-scatters of the gradients)
        # instead of DDP; the straggler sleeps before its forward.
        self.fsdp = args.mode == "fsdp"
        sleeps = planted or args.mode in ("sleep", "groups", "fsdp")
        self.sleep_step = args.straggler_step if sleeps and rank == args.straggler_rank else None
        self.sleep_s = args.sleep_ms / 1000.0
        slow = planted or (args.mode == "slow" and args.slow_count > 0)
        self.slow_step = args.slow_step if slow and rank == args.slow_rank else None
        self.slow_count = args.slow_count if args.mode == "slow" else 1
        self.pageable = planted and rank == args.pageable_rank
        self.sync_each_step = planted and rank == args.sync_rank
        self.no_comm = args.mode == "nocomm"
        rules = args.mode == "rules"
        self.tiny_count = args.tiny_count if rules and rank == args.tiny_rank else 0
        self.tiny_graph = args.tiny_graph and self.tiny_count > 0
        self.jit_step = args.jit_step if rules and rank == args.tiny_rank else None
        self.small_count = args.small_count if rules and rank == args.small_rank else 0
        self.churn = rules and rank == args.small_rank
        self.exposed_mb = args.exposed_mb if rules else 0


def make_hook(plan, state):
    """DDP communication hook: the default all-reduce, preceded by the planted
    host sleep on the first bucket of the chosen step. Registered in both modes
    so that the clean and the planted traces have the same structure."""

    def hook(process_group, bucket):
        step = state["step"]
        if step is not None and step == plan.sleep_step and not state["slept"]:
            state["slept"] = True
            with record_function("planted_sleep"):
                time.sleep(plan.sleep_s)
        if plan.no_comm:
            # The gradients as they are, without an all-reduce: the loop
            # with communication taken away (what `comm=0` asks).
            fut = torch.futures.Future()
            fut.set_result(bucket.buffer())
            return fut
        return default_hooks.allreduce_hook(process_group, bucket)

    return hook


def worker(rank, world, port, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    torch.manual_seed(rank)
    dev = torch.device("cuda", rank)
    plan = Plan(args, rank)

    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    tp_group = dp_group = None
    if plan.groups:
        # Every rank creates every group, in one order: the groups' names
        # are the same on all ranks.
        tp = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        dp = [dist.new_group([0, 2]), dist.new_group([1, 3])]
        tp_group, dp_group = tp[rank // 2], dp[rank % 2]
    state = {"step": -1, "slept": False}
    if plan.fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel
        # One unit per Linear layer: an all-gather before each layer's
        # forward and backward, a reduce-scatter after its backward.
        model = FullyShardedDataParallel(
            nn.Sequential(*layers).to(dev),
            auto_wrap_policy=lambda module, recurse, nonwrapped_numel: recurse or isinstance(module, nn.Linear),
            device_id=dev,
        )
    else:
        model = DDP(nn.Sequential(*layers).to(dev), device_ids=[rank], process_group=dp_group)
        # The planted sleep of --mode groups is before the activation
        # all-reduce, not in the gradients' hook. DDP passes the hook's
        # state, its first argument here, to the hook as the group to
        # all-reduce over (None: the default group, all ranks).
        model.register_comm_hook(dp_group, make_hook(plan, {"step": None, "slept": True} if plan.groups else state))
    activation = torch.zeros(4 * 2**20, device=dev) if plan.groups else None
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()

    # A few host batches made once; pinned except on the pageable rank.
    batches = []
    for _ in range(2):
        x = torch.randn(args.batch, args.hidden)
        y = torch.randn(args.batch, args.hidden)
        if not plan.pageable:
            x, y = x.pin_memory(), y.pin_memory()
        batches.append((x, y))
    big = torch.randn(args.slow_size, args.slow_size, device=dev) if plan.slow_step is not None else None
    tiny = torch.zeros(1024, device=dev)
    smalls = [torch.full((1024,), float(i)).pin_memory() for i in range(plan.small_count)]
    exposed = torch.ones(plan.exposed_mb * 2**20 // 4, device=dev) if plan.exposed_mb else None
    graph = None
    if plan.tiny_graph:
        # The same additions, launched as one graph: what taking their
        # launches off the host does (a what-if's re-run).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                tiny.add_(1.0)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(plan.tiny_count):
                tiny.add_(1.0)

    def train_step(i, step_id):
        state["step"] = step_id
        if plan.churn:
            torch.cuda.empty_cache()
        x_host, y_host = batches[i % len(batches)]
        with record_function("data_to_device"):
            x = x_host.to(dev, non_blocking=True)
            y = y_host.to(dev, non_blocking=True)
        if plan.fsdp and step_id is not None and step_id == plan.sleep_step:
            with record_function("planted_sleep"):
                time.sleep(plan.sleep_s)
        with record_function("forward"):
            loss = loss_fn(model(x), y)
        if plan.groups:
            if step_id is not None and step_id == plan.sleep_step:
                with record_function("planted_sleep"):
                    time.sleep(plan.sleep_s)
            with record_function("tp_allreduce"):
                activation.fill_(loss.detach())
                dist.all_reduce(activation, group=tp_group)
        if plan.sync_each_step:
            torch.cuda.synchronize()
        if plan.tiny_count:
            with record_function("planted_tiny_kernels"):
                if graph is not None:
                    graph.replay()
                else:
                    for _ in range(plan.tiny_count):
                        tiny.add_(1.0)
        if plan.small_count:
            with record_function("planted_small_copies"):
                for t in smalls:
                    t.to(dev, non_blocking=True)
        if step_id is not None and step_id == plan.jit_step:
            with record_function("planted_jit"):
                # A kernel no earlier step ran: compiled (NVRTC) and its
                # module loaded now, inside the steady state.
                fn = torch.cuda.jiterator._create_jit_fn(
                    "template <typename T> T planted_jit(T x) { return x * T(3) + T(1); }"
                )
                fn(tiny)
        if step_id is not None and step_id == plan.slow_step:
            with record_function("planted_slow_matmul"):
                for _ in range(plan.slow_count):
                    big.matmul(big)
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        if exposed is not None:
            with record_function("planted_exposed_allreduce"):
                dist.all_reduce(exposed)

    untraced = 0 if args.cold else args.untraced_steps
    for i in range(untraced):
        train_step(i, None)
    if untraced:
        torch.cuda.synchronize()
        dist.barrier()

    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, f"rank{rank}.pt.trace.json.gz")

    def on_ready(prof):
        prof.export_chrome_trace(out)

    if args.no_step_markers:
        # No schedule and no prof.step(): the trace has no ProfilerStep
        # ranges; the planted steps count from 0 all the same.
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            record_shapes=True,
            with_stack=args.with_stack,
        ) as prof:
            for i in range(args.active):
                train_step(i, i)
        torch.cuda.synchronize()
        prof.export_chrome_trace(out)
        dist.barrier()
        dist.destroy_process_group()
        return
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=0 if args.cold else 1, warmup=0 if args.cold else 1, active=args.active, repeat=1),
        on_trace_ready=on_ready,
        record_shapes=True,
        with_stack=args.with_stack,
    ) as prof:
        for i in range((0 if args.cold else 2) + args.active):
            # prof.step_num is the N of the ProfilerStep#N range this iteration runs in.
            train_step(i, prof.step_num)
            prof.step()
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()


def write_env(args, world):
    def nvsmi(query):
        try:
            r = subprocess.run(
                ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                capture_output=True, text=True, check=True,
            )
            return r.stdout.strip().splitlines()
        except (OSError, subprocess.CalledProcessError):
            return []

    nccl = torch.cuda.nccl.version()
    env = {
        "mode": args.mode,
        "world_size": world,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl),
        "gpus": [torch.cuda.get_device_name(i) for i in range(world)],
        "driver": sorted(set(nvsmi("driver_version"))),
        "args": vars(args),
    }
    with open(os.path.normpath(args.out) + ".env.json", "w") as f:
        json.dump(env, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    args = parse_args()
    world = args.world_size or min(torch.cuda.device_count(), 4)
    # One rank is enough for the per-rank problems of --mode rules.
    if world < (1 if args.mode == "rules" else 2):
        raise SystemExit("record_kineto_ddp.py: needs at least 2 GPUs")
    if args.mode == "groups" and world != 4:
        raise SystemExit("record_kineto_ddp.py: --mode groups needs 4 GPUs")
    if args.mode != "clean":
        names = {
            "slow": ("slow_rank",),
            "sleep": ("straggler_rank",),
            "nocomm": (),
            "groups": ("straggler_rank",),
            "fsdp": ("straggler_rank",),
            "rules": ("tiny_rank", "small_rank"),
        }.get(args.mode, ("straggler_rank", "slow_rank", "pageable_rank", "sync_rank"))
        for name in names:
            if not 0 <= getattr(args, name) < world:
                raise SystemExit(f"record_kineto_ddp.py: --{name.replace('_', '-')} must be below {world}")
    os.makedirs(args.out, exist_ok=True)
    mp.spawn(worker, args=(world, free_port(), args), nprocs=world, join=True)
    write_env(args, world)


if __name__ == "__main__":
    main()
