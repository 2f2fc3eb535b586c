//! Small per-rank traces with totals known by construction, for the tests
//! that run tracestat under real launchers (`launchers.rs`) and read its
//! events dataset with several engines (`engines.rs`).
//!
//! Rank `r` runs [`STEPS`] steps 1 ms apart. Step `k` (at `k` ms):
//! a `gemm_kernel` launched at 0 us, running from 5 us for
//! [`gemm_ns`]`(r)`; a host-to-device copy launched at 250 us, running from
//! 260 us for 20 us; a oneCCL allreduce call the ranks enter at 300 us (the
//! straggler, rank [`STRAGGLER`], at 400 us) and all leave at 700 us, which
//! launches `oneccl_allreduce_kernel`, running from 600 us for 50 us. So per
//! rank: compute = the gemms, memory = the copies, communication = the
//! allreduce kernels ([`known_category_sums`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const STEPS: i64 = 3;
pub const STRAGGLER: i64 = 1;
const T0_US: i64 = 1_700_000_000_000_000;
pub const COPY_NS: i64 = 20_000;
pub const ALLREDUCE_KERNEL_NS: i64 = 50_000;

/// The length of rank `r`'s gemm: 100 us + 10 us per rank.
pub fn gemm_ns(r: i64) -> i64 {
    (100 + 10 * r) * 1000
}

/// A complete (`X`) event; `at` and `dur` in microseconds from the start.
fn x(pid: u64, name: &str, cat: &str, at: i64, dur: i64, args: &str) -> String {
    format!(
        "{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"{name}\", \"cat\": \"{cat}\", \"ts\": {}.000000, \"dur\": {dur}.000000, \"args\": {{{args}}}}}",
        T0_US + at
    )
}

/// The host end of the flow from a launch call to its device command.
fn flow(pid: u64, id: i64, rank: i64, at: i64) -> String {
    format!(
        "{{\"ph\": \"s\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"dep\", \"cat\": \"Flow_H2D_{id}_{rank}\", \"ts\": {}.000000, \"id\": {id}}}",
        T0_US + at
    )
}

/// The trace text of rank `r` (see the module's comment).
pub fn rank_trace(r: i64) -> String {
    assert!((0..10).contains(&r), "the gemms of ranks 0..10 fit a step");
    let host = 20_000 + r as u64;
    let dev = 4_294_967_295 - r as u64;
    let meta = |pid: u64, what: &str, name: &str| {
        format!("{{\"ph\": \"M\", \"name\": \"{what}\", \"pid\": {pid}, \"tid\": {pid}, \"ts\": {T0_US}.000000, \"args\": {{\"name\": \"{name}\"}}}}")
    };
    let mut events = vec![
        meta(host, "process_name", &format!("RANK {r} HOST<node0>")),
        meta(
            dev,
            "process_name",
            &format!("RANK {r} DEVICE<node0>[Intel(R) Data Center GPU Max 1550] 0:18:0:0 #0"),
        ),
        meta(
            dev,
            "thread_name",
            &format!("Thread {host} L0 Compute Engine<0,0>"),
        ),
    ];
    let arrive = if r == STRAGGLER { 400 } else { 300 };
    for k in 0..STEPS {
        let (base, id) = (k * 1000, 3 * k + 1);
        let launch = "zeCommandListAppendLaunchKernel";
        events.push(x(host, launch, "cpu_op", base, 2, ""));
        events.push(flow(host, id, r, base));
        events.push(x(
            dev,
            "gemm_kernel[SIMD16 {64; 1; 1} {256; 1; 1}]",
            "gpu_op",
            base + 5,
            gemm_ns(r) / 1000,
            &format!("\"id\": \"{id}\""),
        ));
        let copy = "zeCommandListAppendMemoryCopy";
        events.push(x(host, copy, "cpu_op", base + 250, 2, ""));
        events.push(flow(host, id + 1, r, base + 250));
        events.push(x(
            dev,
            "zeCommandListAppendMemoryCopy(M2D)[4096]",
            "gpu_op",
            base + 260,
            COPY_NS / 1000,
            &format!("\"id\": \"{}\"", id + 1),
        ));
        events.push(x(
            host,
            "oneCCL::API::ALLREDUCE_SMALL",
            "cpu_op",
            base + arrive,
            700 - arrive,
            "\"send_size\":[4096]",
        ));
        events.push(x(host, launch, "cpu_op", base + arrive + 1, 2, ""));
        events.push(flow(host, id + 2, r, base + arrive + 1));
        events.push(x(
            dev,
            "oneccl_allreduce_kernel[SIMD16 {1; 1; 1} {64; 1; 1}]",
            "gpu_op",
            base + 600,
            ALLREDUCE_KERNEL_NS / 1000,
            &format!("\"id\": \"{}\"", id + 2),
        ));
    }
    let mut text = String::from("{ \"traceEvents\":[\n");
    for (i, e) in events.iter().enumerate() {
        let sep = if i + 1 < events.len() { ",\n" } else { "\n" };
        write!(text, "{e}{sep}").unwrap();
    }
    text.push_str("]\n}\n");
    text
}

/// The file name unitrace gives rank `r`'s trace: `app.<pid>.<rank>.json`.
pub fn rank_file_name(r: i64) -> String {
    format!("app.{}.{r}.json", 20_000 + r)
}

/// Writes ranks `0..n` into `dir` (created) and returns their real paths,
/// in rank order.
pub fn write_ranks(dir: &Path, n: i64) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|r| {
            let path = dir.join(rank_file_name(r));
            std::fs::write(&path, rank_trace(r)).unwrap();
            path.canonicalize().unwrap()
        })
        .collect()
}

/// `(rank, category, kernels, total ns)` of ranks `0..n`, ordered by rank
/// then category: the per-rank, per-category sums of the events dataset.
pub fn known_category_sums(n: i64) -> Vec<(i64, String, i64, i64)> {
    (0..n)
        .flat_map(|r| {
            [
                ("communication", ALLREDUCE_KERNEL_NS),
                ("compute", gemm_ns(r)),
                ("memory", COPY_NS),
            ]
            .map(|(cat, ns)| (r, cat.to_string(), STEPS, STEPS * ns))
        })
        .collect()
}
