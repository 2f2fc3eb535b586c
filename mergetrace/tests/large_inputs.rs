//! Inputs of many megabytes, read through many buffer refills and batches:
//! every option merges them, and a pass-through merge is the inputs'
//! events joined by `,\n` whatever separators the inputs use
//! (docs/benchmarks.md#the-json-trace-scanner).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_core::trace::TraceReader;

/// A trace of about `bytes` bytes for `rank`: kernels with flows, host
/// calls, a metadata event, and every few events another separator
/// (`,\n\n`, `, `, `\n,`) or an event with an escape, so that runs of
/// `,\n`-joined events break and the walker hands some to the byte parser.
fn rank_trace(rank: u32, bytes: usize) -> Vec<u8> {
    let mut t = format!(
        "{{\"traceEvents\": [\n{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {p}, \"args\": {{\"name\": \"RANK {rank} HOST\"}}}}",
        p = 1000 + rank
    )
    .into_bytes();
    let mut i = 0u64;
    while t.len() < bytes {
        let sep: &[u8] = match i % 97 {
            13 => b",\n\n",
            41 => b", ",
            77 => b"\n,",
            _ => b",\n",
        };
        t.extend_from_slice(sep);
        let ts = 1_733_400_000_000_000u64 + i * 7;
        let ev = match i % 5 {
            0 | 1 => format!(
                "{{\"ph\": \"X\", \"tid\": 2, \"pid\": 4294967295, \"name\": \"gemm_kernel_{k}\", \"cat\": \"gpu_op\", \"ts\": {ts}.250000, \"dur\": {d}.5, \"args\": {{\"id\": \"{i}\"}}}}",
                k = i % 7,
                d = 1 + i % 13
            ),
            2 => format!(
                "{{\"ph\": \"X\", \"tid\": {t}, \"pid\": {p}, \"name\": \"zeCommandListAppendLaunchKernel\", \"cat\": \"cpu_op\", \"ts\": {ts}.000000, \"dur\": 0.390000, \"id\": {i}}}",
                t = 1000 + rank,
                p = 1000 + rank
            ),
            3 => format!(
                "{{\"ph\": \"s\", \"tid\": 2, \"pid\": 4294967295, \"name\": \"dep\", \"cat\": \"Flow_H2D_{i}_0\", \"ts\": {ts}.000000, \"id\": {i}}}"
            ),
            _ => format!(
                "{{\"ph\": \"i\", \"pid\": {p}, \"tid\": {p}, \"name\": \"mark \\\"{i}\\\"\", \"ts\": {ts}}}",
                p = 1000 + rank
            ),
        };
        t.extend_from_slice(ev.as_bytes());
        i += 1;
    }
    t.extend_from_slice(b"\n]\n}\n");
    t
}

fn run(dir: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(dir)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

/// The events of `bytes` as the stream reader yields them.
fn raw_events(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut r = TraceReader::new(bytes);
    let mut v = Vec::new();
    while let Some(ev) = r.next_event().unwrap() {
        v.push(ev.raw().to_vec());
    }
    v
}

#[test]
fn large_inputs_merge_with_every_option() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for rank in 0..3 {
        // Rank 1 is large enough for many batches and buffer refills;
        // rank 2 is cut in the middle of an event (a killed writer).
        let mut t = rank_trace(rank, if rank == 1 { 40 << 20 } else { 3 << 20 });
        if rank == 2 {
            t.truncate(t.len() - 300);
        }
        let p = dir.path().join(format!("app.{}.{rank}.json", 1000 + rank));
        fs::write(&p, &t).unwrap();
        inputs.push(p);
    }
    let option_sets: [&[&str]; 6] = [
        &[],
        &["--stats", "s.csv"],
        &["--remap-pids"],
        &["--filter", "gemm|^dep$"],
        &["--align", "start", "--stats"],
        &["--time-window", "1ms:3ms"],
    ];
    let out = dir.path().join("merged.json");
    for opts in option_sets {
        let mut args = vec!["-o", out.to_str().unwrap()];
        args.extend_from_slice(opts);
        let o = run(dir.path(), &args, &inputs);
        assert!(
            o.status.success(),
            "{opts:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("app.1002.2.json") && stderr.contains("cut short"),
            "{opts:?}: {stderr}"
        );
        let merged = fs::read(&out).unwrap();
        assert!(
            serde_json::from_slice::<serde_json::Value>(&merged).is_ok(),
            "{opts:?}: the merged trace is not JSON"
        );
        if opts.is_empty() {
            // Pass-through: the events of every input joined by `,\n`.
            let mut want = b"{\n\"traceEvents\": [\n".to_vec();
            let mut first = true;
            for p in &inputs {
                for ev in raw_events(&fs::read(p).unwrap()) {
                    if !first {
                        want.extend_from_slice(b",\n");
                    }
                    first = false;
                    want.extend_from_slice(&ev);
                }
            }
            want.extend_from_slice(b"\n]\n}\n");
            assert!(
                merged == want,
                "pass-through output is not the joined events"
            );
        } else if opts.contains(&"--stats") {
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(stdout.contains("rank"), "{stdout}");
        }
        let _ = fs::remove_file(dir.path().join("s.csv"));
    }
}
