//! Roofline profile pairs (docs/roofline.md): a compute and a memory
//! profile per side, joined per kernel as the `roofline` tool joins them
//! (core::roofline_profile, roofline's model), on one device file.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use roofline::model::Roofline;
use unitrace_core::device_config::DeviceConfig;
use unitrace_core::roofline_profile::{read_compute_profile, read_memory_profile, ProfileInput};
use unitrace_core::InputError;

use crate::model::{Item, Run, Section};

/// `COMPUTE,MEMORY` -> the two paths.
pub fn split_pair(arg: &Path) -> Result<(PathBuf, PathBuf)> {
    let text = arg.to_string_lossy();
    match text.split_once(',') {
        Some((c, m)) if !c.is_empty() && !m.is_empty() => Ok((c.into(), m.into())),
        _ => bail!("{text}: with --roofline each side is COMPUTE,MEMORY (two profile files)"),
    }
}

fn open(p: &Path) -> Result<ProfileInput<'_>, InputError> {
    let f = File::open(p).map_err(|e| InputError::io(p, &e))?;
    Ok((
        p,
        Box::new(BufReader::with_capacity(1 << 16, f)) as Box<dyn BufRead>,
    ))
}

/// One side's joined model (also read again for the `--html` chart,
/// docs/compare.md#html-page).
pub fn model(device: &Path, pair: &Path) -> Result<Roofline> {
    let (compute_path, memory_path) = split_pair(pair)?;
    let device = DeviceConfig::from_path(device)?;
    let memory = read_memory_profile([open(&memory_path)?], &device.levels)?;
    let compute = read_compute_profile([open(&compute_path)?])?;
    Ok(Roofline::join(memory, compute, device))
}

pub fn read(device: &Path, pair: &Path) -> Result<Run> {
    let r = model(device, pair)?;
    let mut items = Vec::new();
    for v in r.views() {
        let k = &r.kernels[v.kernel];
        let mut item = Item::new(k.name.clone(), k.time_ns.as_f64() / 1e3);
        item.metrics
            .push(("instances".into(), k.memory_instances as f64));
        item.metrics.push(("gflops".into(), v.gflops));
        item.metrics.push(("time_pct".into(), v.time_pct));
        if let Some(b) = v.binding.map(|i| &v.points[i]) {
            item.metrics.push(("ai".into(), b.ai));
            item.metrics.push(("pct_of_roof".into(), b.pct_of_roof));
            item.metrics
                .push(("memory_bound".into(), f64::from(u8::from(b.memory_bound))));
        }
        items.push(item);
    }
    Ok(Run::new(
        r.total_time_ns.as_f64() / 1e3,
        "memory-profile kernel time",
        vec![Section {
            name: "kernel",
            kernel_names: true,
            items,
        }],
    ))
}
