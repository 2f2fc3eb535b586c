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

mod scan_bench;

use std::fs::File;
use std::io;
use std::path::Path;

use scan_bench::Bench;
use unitrace_core::pftrace::{Packet, PacketData, PacketReader};
use unitrace_core::timeline::names::Names;
use unitrace_core::timeline::{self, DeviceOp, HostSpan, OtherSpan, TraceSink};

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
    let (bench, _) = Bench::from_args("timeline_scan", &[]);
    let args = &bench.files;
    bench.floor();

    let pftraces: Vec<&String> = args.iter().filter(|p| p.ends_with(".pftrace")).collect();
    if pftraces.len() == args.len() {
        let (wall, cpu, events) = bench.best(|| {
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
        bench.line(".pftrace decode alone", wall, cpu);
        std::hint::black_box(events);
    }

    let (wall, cpu, counts) = bench.best(|| {
        let mut counts = Counts::default();
        for p in args {
            if let Err(e) = timeline::read_file(Path::new(p), &mut counts) {
                eprintln!("timeline_scan: {p}: {e}");
                std::process::exit(1);
            }
        }
        counts
    });
    bench.line("core::timeline, counting sink", wall, cpu);
    println!(
        "device ops {}, host spans {}, other spans {}, flows {}",
        counts.device_ops, counts.host_spans, counts.other_spans, counts.flows
    );
}
