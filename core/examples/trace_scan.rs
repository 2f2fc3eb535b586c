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

use std::fs::File;
use std::io::Read;
use std::time::Instant;

use unitrace_core::trace::{Field, ScanKernel, TraceReader, DEFAULT_MAX_EVENT_BYTES};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// Runs `f` `repeat` times; returns the best wall and best CPU seconds and
/// `f`'s (last) result.
fn best<T>(repeat: usize, mut f: impl FnMut() -> T) -> (f64, f64, T) {
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    let mut out = None;
    for _ in 0..repeat {
        let (w0, c0) = (Instant::now(), cpu_seconds());
        out = Some(f());
        wall = wall.min(w0.elapsed().as_secs_f64());
        cpu = cpu.min(cpu_seconds() - c0);
    }
    (wall, cpu, out.expect("at least one round"))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 2;
    let mut only: Option<String> = None;
    while args.len() > 1 && args[0].starts_with("--") {
        match args[0].as_str() {
            "--repeat" => repeat = args[1].parse().expect("--repeat N"),
            "--kernel" => only = Some(args[1].clone()),
            other => panic!("unknown option {other}"),
        }
        args.drain(..2);
    }
    if args.is_empty() {
        eprintln!("usage: trace_scan [--repeat R] FILE...");
        std::process::exit(2);
    }
    let bytes: u64 = args
        .iter()
        .map(|p| std::fs::metadata(p).expect("input").len())
        .sum();
    let mb = bytes as f64 / 1e6;
    let line = |label: &str, wall: f64, cpu: f64| {
        println!(
            "{label:<34} {wall:7.2} s {:8.1} MB/s | cpu {cpu:7.2} s {:8.1} MB/cpu-s",
            mb / wall,
            mb / cpu
        )
    };
    println!(
        "input: {} files, {:.0} MB; best of {repeat} rounds",
        args.len(),
        mb
    );

    let (wall, cpu, _) = best(repeat, || {
        let mut buf = vec![0u8; 1 << 20];
        for p in &args {
            let mut f = File::open(p).expect("input");
            while f.read(&mut buf).expect("read") > 0 {}
        }
    });
    line("floor: read() into 1 MiB, dropped", wall, cpu);
    let floor_wall = wall;

    let mut reference: Option<(u64, u64)> = None;
    let mut walks = (0u64, 0u64);
    for kernel in ScanKernel::available() {
        if only
            .as_ref()
            .is_some_and(|k| !kernel.name().contains(k.as_str()))
        {
            continue;
        }
        let (wall, cpu, found) = best(repeat, || {
            let (mut events, mut ts_digits) = (0u64, 0u64);
            for p in &args {
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
        line(kernel.name(), wall, cpu);
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
