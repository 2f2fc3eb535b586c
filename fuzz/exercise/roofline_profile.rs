//! Roofline profiles (metric CSVs read by `unitrace_core::roofline_profile`,
//! docs/formats.md#metric-csv as roofline.py reads them): the compute and the memory
//! reader, on one file and on the input split into two files (per-rank
//! profiles are aggregated), give a profile or an error, never a panic.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/roofline_profile/*`).

use std::io::BufRead;
use std::path::Path;

use unitrace_core::device_config::MemoryLevel;
use unitrace_core::roofline_profile::{read_compute_profile, read_memory_profile};

fn levels() -> Vec<MemoryLevel> {
    [
        ("l3", 2043.0),
        ("gpu_memory", 1055.0),
        ("load_store_cache", 6000.0),
    ]
    .into_iter()
    .map(|(key, bw)| MemoryLevel {
        key: key.to_string(),
        bandwidth_gb_per_s: bw,
    })
    .collect()
}

pub fn run(data: &[u8]) {
    let (a, b) = (Path::new("a.csv"), Path::new("b.csv"));
    let one = || [(a, Box::new(data) as Box<dyn BufRead>)];
    let mid = data.len() / 2;
    let two = || {
        [
            (a, Box::new(&data[..mid]) as Box<dyn BufRead>),
            (b, Box::new(&data[mid..]) as Box<dyn BufRead>),
        ]
    };
    let levels = levels();
    if let Ok(memory) = read_memory_profile(one(), &levels) {
        assert_eq!(memory.levels.len(), levels.len());
        assert_eq!(memory.level_present.len(), levels.len());
        for k in &memory.kernels {
            assert_eq!(k.bytes.len(), levels.len());
            assert!(k.instances >= 1);
            let _ = k.time_ns.as_f64();
        }
    }
    let _ = read_memory_profile(two(), &levels);
    if let Ok(compute) = read_compute_profile(one()) {
        let by_name = compute.by_name();
        assert!(by_name.len() <= compute.kernels.len());
        for k in &compute.kernels {
            for op in k.ops {
                let _ = (op.as_f64(), op.is_zero());
            }
        }
    }
    let _ = read_compute_profile(two());
}
