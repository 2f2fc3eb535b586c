//! Reader-only benchmark of `unitrace_core::timeline` (run by
//! `benches/timeline_scan.sh`; docs/benchmarks.md#the-pftrace-reader).
//!
//!     cargo run --release -p unitrace-core --example timeline_scan -- [--repeat R] FILE...
//!
//! Reads every FILE (unitrace JSON, Kineto JSON or `.pftrace`, any mix)
//! through `core::timeline` into a sink that counts what it is given and
//! keeps nothing, and prints wall and CPU MB/s beside the floor (the same
//! files `read` into a 1 MiB buffer and dropped). For `.pftrace` files it
//! also times the protobuf decoder alone (every record decoded, nothing
//! interpreted). The best of R rounds (default 2) counts: the machine may be
//! shared.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::Instant;

use unitrace_core::pftrace::{Packet, PacketData, PacketReader};
use unitrace_core::timeline::names::Names;
use unitrace_core::timeline::{self, DeviceOp, HostSpan, OtherSpan, TraceSink};

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

/// Counts what the reader delivers (so that no work is optimised away).
#[derive(Default, PartialEq, Eq, Debug, Clone, Copy)]
struct Counts {
    device_ops: u64,
    host_spans: u64,
    other_spans: u64,
    flows: u64,
    time_sum: i64,
}

impl TraceSink for Counts {
    fn device_op(&mut self, _names: &Names, op: &DeviceOp) -> io::Result<()> {
        self.device_ops += 1;
        self.time_sum = self.time_sum.wrapping_add(op.end - op.start);
        Ok(())
    }
    fn host_span(&mut self, _names: &Names, span: &HostSpan<'_>) -> io::Result<()> {
        self.host_spans += 1;
        self.time_sum = self.time_sum.wrapping_add(span.end - span.start);
        Ok(())
    }
    fn other_span(&mut self, _names: &Names, _span: &OtherSpan) -> io::Result<()> {
        self.other_spans += 1;
        Ok(())
    }
    fn flow(&mut self, _flow: &timeline::FlowPoint) {
        self.flows += 1;
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 2;
    while args.len() > 1 && args[0].starts_with("--") {
        match args[0].as_str() {
            "--repeat" => repeat = args[1].parse().expect("--repeat N"),
            other => panic!("unknown option {other}"),
        }
        args.drain(..2);
    }
    if args.is_empty() {
        eprintln!("usage: timeline_scan [--repeat R] FILE...");
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

    let pftraces: Vec<&String> = args.iter().filter(|p| p.ends_with(".pftrace")).collect();
    if pftraces.len() == args.len() {
        let (wall, cpu, events) = best(repeat, || {
            let mut events = 0u64;
            for p in &pftraces {
                let mut r = PacketReader::new(File::open(p).expect("input"));
                while let Some(rec) = r.next_record().expect("record") {
                    let mut packet = Packet::empty();
                    rec.decode_into(&mut packet).expect("packet");
                    if let PacketData::TrackEvent(te) = packet.data {
                        events += te.track_uuid.unwrap_or(0) & 1;
                    }
                }
            }
            events
        });
        line(".pftrace decode alone", wall, cpu);
        std::hint::black_box(events);
    }

    let (wall, cpu, counts) = best(repeat, || {
        let mut counts = Counts::default();
        for p in &args {
            if let Err(e) = timeline::read_file(Path::new(p), &mut counts) {
                eprintln!("timeline_scan: {p}: {e}");
                std::process::exit(1);
            }
        }
        counts
    });
    line("core::timeline, counting sink", wall, cpu);
    println!(
        "device ops {}, host spans {}, other spans {}, flows {}",
        counts.device_ops, counts.host_spans, counts.other_spans, counts.flows
    );
}
