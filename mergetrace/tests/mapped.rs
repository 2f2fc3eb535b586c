//! Inputs of 1 MiB or more are read in place from a mapping
//! (docs/benchmarks.md#the-json-trace-scanner): every option must give the
//! same output, `--stats` table and messages as streaming the same files
//! (`UNITRACE_NO_MMAP`), and a pass-through merge must be the inputs'
//! events joined by `,\n` whatever separators the inputs use.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_core::trace::{TraceReader, NO_MAP_VARIABLE};

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

fn run(dir: &Path, args: &[&str], inputs: &[PathBuf], stream: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mergetrace"));
    cmd.current_dir(dir).args(args).args(inputs);
    if stream {
        cmd.env(NO_MAP_VARIABLE, "1");
    } else {
        cmd.env_remove(NO_MAP_VARIABLE);
    }
    cmd.output().unwrap()
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
fn mapped_inputs_merge_like_streamed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for rank in 0..3 {
        // Rank 1 is large enough for several 4 MiB batches, long runs and
        // pages handed back behind the reader while batches are in flight;
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
    for opts in option_sets {
        let mut outs = Vec::new();
        for stream in [false, true] {
            let out = dir.path().join(if stream {
                "streamed.json"
            } else {
                "mapped.json"
            });
            let mut args = vec!["-o", out.to_str().unwrap()];
            args.extend_from_slice(opts);
            let o = run(dir.path(), &args, &inputs, stream);
            assert!(
                o.status.success(),
                "{opts:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let stats = fs::read(dir.path().join("s.csv")).unwrap_or_default();
            let _ = fs::remove_file(dir.path().join("s.csv"));
            let stdout = String::from_utf8_lossy(&o.stdout).replace(out.to_str().unwrap(), "OUT");
            outs.push((fs::read(&out).unwrap(), stats, stdout, o.stderr));
        }
        assert!(outs[0].0 == outs[1].0, "{opts:?}: merged traces differ");
        assert_eq!(outs[0].1, outs[1].1, "{opts:?}: --stats tables differ");
        assert_eq!(outs[0].2, outs[1].2, "{opts:?}: stdout differs");
        assert_eq!(
            String::from_utf8_lossy(&outs[0].3),
            String::from_utf8_lossy(&outs[1].3),
            "{opts:?}: messages differ"
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
                outs[0].0 == want,
                "pass-through output is not the joined events"
            );
        } else if opts.contains(&"--stats") {
            assert!(outs[0].2.contains("rank"), "{}", outs[0].2);
        }
    }
}
