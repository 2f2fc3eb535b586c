//! Scanner-only benchmark of `unitrace_core::trace` (run by
//! `benches/trace_scan.sh`; docs/benchmarks.md#the-json-trace-scanner).
//!
//!     cargo run --release -p unitrace-core --example trace_scan -- [--repeat R] [--kernel NAME] FILE...
//!
//! (`--kernel`: only the kernels whose name contains NAME, e.g. `AVX2`, `byte`).
//!
//! For each stage-1 kernel this CPU has (the byte parser alone first), reads
//! every FILE through a `TraceReader` that validates it and yields its
//! events (touching each event's `ts` span, as consumers do), and prints
//! wall and CPU MB/s; the first line is the floor, the same files read with
//! `read` into a 1 MiB buffer and dropped. The best of R rounds (default 2)
//! counts: the machine may be shared. Every kernel must find the same
//! events, or the run fails.

mod scan_bench;

use std::fs::File;

use scan_bench::Bench;
use unitrace_core::trace::{Field, ScanKernel, TraceReader, DEFAULT_MAX_EVENT_BYTES};

fn main() {
    let (bench, options) = Bench::from_args("trace_scan", &["--kernel"]);
    let only = options.into_iter().map(|(_, v)| v).next_back();
    let (args, repeat) = (&bench.files, bench.repeat);
    let floor_wall = bench.floor();

    let mut reference: Option<(u64, u64)> = None;
    let mut walks = (0u64, 0u64);
    for kernel in ScanKernel::available() {
        if only
            .as_ref()
            .is_some_and(|k| !kernel.name().contains(k.as_str()))
        {
            continue;
        }
        let (wall, cpu, found) = bench.best(|| {
            let (mut events, mut ts_digits) = (0u64, 0u64);
            for p in args {
                let f = File::open(p).expect("input");
                let mut r = TraceReader::with_kernel(f, DEFAULT_MAX_EVENT_BYTES, kernel);
                loop {
                    match r.next_event() {
                        Ok(Some(ev)) => {
                            events += 1;
                            ts_digits += ev.value(Field::Ts).map_or(0, |v| v.len() as u64);
                        }
                        Ok(None) => {
                            if kernel == ScanKernel::best() {
                                walks.0 += r.fast_path_events();
                                walks.1 += r.direct_walk_events();
                            }
                            break;
                        }
                        Err(e) => {
                            eprintln!("trace_scan: {p}: {e}");
                            std::process::exit(1);
                        }
                    }
                }
            }
            (events, ts_digits)
        });
        bench.line(kernel.name(), wall, cpu);
        match reference {
            None => reference = Some(found),
            Some(want) => assert_eq!(found, want, "{} disagrees", kernel.name()),
        }
        if kernel == ScanKernel::best() {
            println!(
                "best kernel vs the read floor: {:.2}x the wall time",
                wall / floor_wall
            );
        }
    }
    if let Some((events, _)) = reference {
        println!("events: {events}");
    }
    if walks.0 > 0 {
        // Summed over the rounds: per round, as a share of the events.
        println!(
            "best kernel: fast path (token or direct walk) {:.1}% of the events, direct walk {:.1}%",
            walks.0 as f64 * 100.0 / (repeat as f64 * reference.map_or(1, |r| r.0) as f64),
            walks.1 as f64 * 100.0 / (repeat as f64 * reference.map_or(1, |r| r.0) as f64)
        );
    }
}
