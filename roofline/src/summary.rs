//! The console summary of the original (docs/compatibility.md#roofline-summary), kept line for line
//! so that scripts reading it keep working: same header, same columns, floats
//! in Python repr, same bound classification.
//!
//! Deliberately kept (drop-in output; docs/compatibility.md#roofline-5): the bound
//! column uses GiB (1024³) bytes and the FP32 ridge point whatever the
//! precision, the AI columns always use FP16_XMX operations and the "TFlop"
//! totals are raw operation counts. The page and `--data` use consistent
//! decimal units and each kernel's own precision instead (see `model.rs`).

use std::io::{self, Write};

use unitrace_core::device_config::Precision;
use unitrace_core::roofline_profile::Num;

use crate::model::{Kernel, Roofline};
use unitrace_core::pyfmt::float_repr as repr;

pub const HEADER: &str = "Kernel_name ,time_elapsed (s) ,% of Total time,  Bounded_by , FP16 (GFLOPS), FP32 (GFLOPS), FP64 (GFLOPS) , BF16_XMX (GFLOPS),FP16_XMX(Gops), FP16_XMX (GFLOPS),fp16_xmx_utilization [%], AI (gpu_memory), AI (L3) ,gpu_memory (GB/s), L3 (GB/s)";

/// The order in which the original builds its `ops` dict; `max` takes the
/// first of equal values.
const OPS_ORDER: [Precision; 5] = [
    Precision::Fp16,
    Precision::Bf16Xmx,
    Precision::Fp32,
    Precision::Fp64,
    Precision::Fp16Xmx,
];

fn num_str(n: Num) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => repr(f),
    }
}

/// Kernel name with everything that is not an ASCII letter removed.
pub fn letters_only(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphabetic()).collect()
}

/// The original's classification: `L3`, `gpu_memory` or `compute`.
pub fn original_bound(r: &Roofline, k: &Kernel) -> &'static str {
    let dev = &r.device;
    let t = k.time_ns.as_f64();
    let l3 = k.bytes.first().copied().flatten().map_or(0.0, Num::as_f64);
    let gm = k.bytes.get(1).copied().flatten().map_or(0.0, Num::as_f64);
    let mut num_flops = f64::NEG_INFINITY;
    let mut kind = Precision::Fp16;
    for p in OPS_ORDER {
        let v = k.ops[p.index()].as_f64() / 1e9;
        if v > num_flops || num_flops == f64::NEG_INFINITY {
            num_flops = v;
            kind = p;
        }
    }
    let num_flops = num_flops + 1e-7;
    let gflops = num_flops / (t / 1e9);
    let peak = dev.peak(kind);
    let gib = 1024.0f64 * 1024.0 * 1024.0;
    let headroom = |bytes: f64, bw: f64| {
        let ai = num_flops / (bytes / gib + 1e-7);
        (ai / (ai * (1.0 / peak) + (1.0 / bw))) / (gflops + 1e-7)
    };
    let h_l3 = headroom(l3, dev.l3_bw());
    let h_gm = headroom(gm, dev.gpu_memory_bw());
    let (name, bytes, bw) = if h_gm < h_l3 {
        ("gpu_memory", gm, dev.gpu_memory_bw())
    } else {
        ("L3", l3, dev.l3_bw())
    };
    let ai = num_flops / (bytes / gib);
    let ridge = dev.peak(Precision::Fp32) / bw;
    if ai < ridge {
        name
    } else {
        "compute"
    }
}

pub fn write_summary(r: &Roofline, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{HEADER}")?;
    let mut totals = [Num::Int(0); 5];
    let mut total_flops = 0.0f64;
    let mut total_time = 0.0f64;
    let mut any = false;
    for k in &r.kernels {
        let t = k.time_ns.as_f64();
        let g = |p: Precision| k.ops[p.index()].as_f64() / 1e9;
        let l3 = k.bytes.first().copied().flatten().map_or(0.0, Num::as_f64);
        let gm = k.bytes.get(1).copied().flatten().map_or(0.0, Num::as_f64);
        let xmx = g(Precision::Fp16Xmx);
        let fields = [
            letters_only(&k.name),
            repr(t / 1e9),
            format!("{} %", repr(r.time_pct(k))),
            original_bound(r, k).to_string(),
            repr(1e9 * g(Precision::Fp16) / t),
            repr(1e9 * g(Precision::Fp32) / t),
            repr(1e9 * g(Precision::Fp64) / t),
            repr(1e9 * g(Precision::Bf16Xmx) / t),
            repr(1e9 * xmx),
            repr(1e9 * xmx / t),
            repr(k.xmx_fp16_utilization),
            repr(1e9 * xmx / gm),
            repr(1e9 * xmx / l3),
            repr((gm / 1e9) / (t / 1e9)),
            repr((l3 / 1e9) / (t / 1e9)),
        ];
        writeln!(out, "{}", fields.join(" , "))?;
        for p in Precision::ALL {
            totals[p.index()] = totals[p.index()].plus(k.ops[p.index()]);
        }
        // `sum(ops.values())` in the dict's order, starting from 0.
        let mut s = 0.0;
        for p in OPS_ORDER {
            s += g(p);
        }
        total_flops += s;
        total_time += t / 1e9;
        any = true;
    }
    let tot = |p: Precision| num_str(totals[p.index()]);
    writeln!(out, "FP16_total TFlop : {}", tot(Precision::Fp16))?;
    writeln!(out, "FP16_XMX_total TFlop : {}", tot(Precision::Fp16Xmx))?;
    writeln!(out, "BF16_XMX_total TFlop : {}", tot(Precision::Bf16Xmx))?;
    writeln!(out, "FP32_total Tflop : {}", tot(Precision::Fp32))?;
    writeln!(out, "FP64_total Tflop : {}", tot(Precision::Fp64))?;
    if any {
        writeln!(out, "Total_time {}", repr(total_time))?;
        writeln!(
            out,
            "Total achieved Flops {}",
            repr(total_flops / total_time)
        )?;
    } else {
        writeln!(out, "Total_time 0")?;
    }
    Ok(())
}
