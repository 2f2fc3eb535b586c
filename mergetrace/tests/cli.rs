//! End-to-end tests of the `mergetrace` binary: golden outputs of the
//! original mergetrace.py (testdata/trace/golden, compared after JSON
//! normalisation), byte pass-through, untouched inputs, bad inputs, and the
//! options beyond the original.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use serde_json::Value;
use unitrace_core::trace::decimal::Decimal;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace")
        .join(rel)
}

/// The `.json` files of a test-data folder, sorted like a shell glob.
fn traces(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(data(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// Copies inputs into `dir`, returning the copies (in order).
fn copy_to(dir: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    files
        .iter()
        .map(|f| {
            let to = dir.join(f.file_name().unwrap());
            fs::copy(f, &to).unwrap();
            to
        })
        .collect()
}

fn mergetrace(cwd: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()))
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().expect("traceEvents array")
}

/// Snapshot of bytes and mtime, to prove inputs are never modified.
fn snapshot(files: &[PathBuf]) -> Vec<(Vec<u8>, SystemTime)> {
    files
        .iter()
        .map(|f| {
            (
                fs::read(f).unwrap(),
                fs::metadata(f).unwrap().modified().unwrap(),
            )
        })
        .collect()
}

/// The event lines of a unitrace file (one event per line, trailing comma
/// dropped).
fn event_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split(|&c| c == b'\n')
        .filter(|l| l.starts_with(b"{\"ph\""))
        .map(|l| l.strip_suffix(b",").unwrap_or(l).to_vec())
        .collect()
}

#[test]
fn golden_two_ranks_and_byte_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    let before = snapshot(&inputs);
    let o = mergetrace(dir.path(), &["-o", "all.json"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // Same trace as the original after JSON normalisation (the original
    // re-serialises events with `", "` / `": "` and shortest floats,
    // docs/compatibility.md#mergetrace-bytes; we keep the source bytes).
    assert_eq!(
        json(&dir.path().join("all.json")),
        json(&data("golden/two.orig.json"))
    );
    // Byte pass-through: our event lines are the inputs' lines, in order.
    let out = fs::read(dir.path().join("all.json")).unwrap();
    let mut expect = Vec::new();
    for f in &inputs {
        expect.extend(event_lines(&fs::read(f).unwrap()));
    }
    assert_eq!(event_lines(&out), expect);
    assert!(out.starts_with(b"{\n\"traceEvents\": [\n{\"ph\""));
    assert!(out.ends_with(b"}\n]\n}\n"));
    assert_eq!(snapshot(&inputs), before, "inputs must not change");
}

/// Three ranks written by the repository's generator (unitrace-gen, two
/// training steps, B/E and X ranges, chart links; testdata/trace/README.md):
/// the same trace as the original's merge.
#[test]
fn golden_generated_ranks_match_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("ugen"));
    assert_eq!(inputs.len(), 3);
    let o = mergetrace(dir.path(), &["-o", "all.json"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    assert_eq!(
        json(&dir.path().join("all.json")),
        json(&data("golden/ugen.orig.json"))
    );
    assert_eq!(fs::read(data("golden/ugen.orig.stdout")).unwrap(), b"");
}

/// Batches that no option changes are written whole (the events already
/// joined by `,\n`, docs/benchmarks.md#the-json-trace-scanner): across
/// several 1 MiB batches per input, two inputs, and separators of any
/// shape in the inputs, the output is the events joined by `,\n`, the same
/// bytes as the event-by-event path (`--filter` matching every name) and,
/// with `--stats`, the same statistics.
#[test]
fn whole_batches_equal_event_by_event_writing() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    let mut expect: Vec<Vec<u8>> = Vec::new();
    for rank in 0..2u64 {
        let mut text = b"{\"traceEvents\": [".to_vec();
        for i in 0..30_000u64 {
            let ev = format!(
                "{{\"ph\": \"X\", \"tid\": {rank}, \"pid\": {rank}, \"name\": \"k{}\", \
                 \"cat\": \"gpu_op\", \"ts\": {}.250000, \"dur\": 1.5}}",
                i % 7,
                1_000_000 + i
            );
            if i > 0 {
                // separators of several shapes: the output has `,\n` only
                text.extend_from_slice([&b",\n"[..], b", ", b"\n,\t"][(i % 3) as usize]);
            }
            text.extend_from_slice(ev.as_bytes());
            expect.push(ev.into_bytes());
        }
        text.extend_from_slice(b"]}\n");
        assert!(text.len() > 2 << 20, "input must fill several batches");
        inputs.push(write(dir.path(), &format!("rank{rank}.json"), &text));
    }
    let mut joined = b"{\n\"traceEvents\": [\n".to_vec();
    joined.extend_from_slice(&expect.join(&b",\n"[..]));
    joined.extend_from_slice(b"\n]\n}\n");
    let o = mergetrace(dir.path(), &["-o", "whole.json"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(dir.path().join("whole.json")).unwrap() == joined);
    let o = mergetrace(dir.path(), &["-o", "each.json", "--filter", "^k"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(dir.path().join("each.json")).unwrap() == joined);
    let o = mergetrace(
        dir.path(),
        &["-o", "stats.json", "--stats", "s1.csv"],
        &inputs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(dir.path().join("stats.json")).unwrap() == joined);
    let o = mergetrace(
        dir.path(),
        &["-o", "stats2.json", "--filter", "^k", "--stats", "s2.csv"],
        &inputs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read(dir.path().join("s1.csv")).unwrap(),
        fs::read(dir.path().join("s2.csv")).unwrap()
    );
}

#[test]
fn truncated_ranks_are_repaired_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("trunc"));
    let before = snapshot(&inputs);
    // Ranks 0 and 1 (cut right after an event): what the original writes
    // after repairing rank 1 in place.
    let o = mergetrace(dir.path(), &["-o", "a.json"], &inputs[..2]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        json(&dir.path().join("a.json")),
        json(&data("golden/trunc.orig.json"))
    );
    let err = stderr(&o);
    assert!(
        err.contains("python.100066.1.json: trace not closed (writer killed?): kept all 98 events"),
        "{err}"
    );
    // Rank 2 is cut mid-event: the original drops the whole file; we keep
    // its complete events (deliberate difference, docs/compatibility.md#mergetrace-truncated).
    let o = mergetrace(dir.path(), &["-o", "b.json"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = fs::read(dir.path().join("b.json")).unwrap();
    let value = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).ok();
    let expected = unitrace_system_tests::expected::file_unless_same(
        &data("golden/trunc_keep_complete.fixed.json"),
        &ours,
        |a, b| value(a) == value(b),
    );
    assert_eq!(value(&ours).unwrap(), value(&expected).unwrap());
    let err = stderr(&o);
    assert!(
        err.contains("python.100075.2.json:103: trace cut short (writer killed?): kept 102 complete events, dropped 157 bytes"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert_eq!(snapshot(&inputs), before, "inputs must not change");
}

#[test]
fn default_output_name_and_no_event_gives_valid_json() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    fs::write(&empty, b"").unwrap();
    let none = dir.path().join("none.json");
    fs::write(&none, b"{\"traceEvents\": []}").unwrap();
    let o = mergetrace(dir.path(), &[], &[empty.clone(), none]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("empty.json: empty file, skipped"));
    let out = fs::read(dir.path().join("unitrace.all.json")).unwrap();
    // docs/compatibility.md#mergetrace-2 fixed: the original writes `"traceEvents": \n]\n}` here.
    assert_eq!(out, b"{\n\"traceEvents\": [\n]\n}\n");
    assert!(events(&json(&dir.path().join("unitrace.all.json"))).is_empty());
}

/// A run that must fail: one line on stderr naming the file, exit 1, no
/// output file, inputs untouched.
fn assert_fails(dir: &Path, inputs: &[PathBuf], args: &[&str], expect: &str) {
    let before = snapshot(inputs);
    let mut all = vec!["-o", "out.json"];
    all.extend_from_slice(args);
    let o = mergetrace(dir, &all, inputs);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("mergetrace: "), "{err}");
    assert!(err.contains(expect), "expected {expect:?} in {err}");
    assert!(!dir.join("out.json").exists());
    let leftovers: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(snapshot(inputs), before);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn missing_input_fails_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let good = copy_to(dir.path(), &traces("two"));
    let missing = dir.path().join("nope.json");
    let before = snapshot(&good);
    let o = mergetrace(dir.path(), &["-o", "out.json"], &[good[0].clone(), missing]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("nope.json: no such file"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("out.json").exists());
    assert_eq!(snapshot(&good), before);
}

#[test]
fn not_json_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = copy_to(dir.path(), &traces("two"));
    inputs.insert(0, write(dir.path(), "text.json", b"API Timing Summary\n"));
    assert_fails(
        dir.path(),
        &inputs,
        &[],
        "text.json:1: not a JSON trace: starts with 'A', expected '{' or '[' \
         (--skip-invalid merges the other files)",
    );
    // With --skip-invalid: a warning, and the other files are merged.
    let o = mergetrace(dir.path(), &["-o", "out.json", "--skip-invalid"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("text.json:1: not a JSON trace"));
    assert_eq!(
        json(&dir.path().join("out.json")),
        json(&data("golden/two.orig.json"))
    );
}

/// A gzip file whose deflate data is corrupt from its first block cannot
/// even be opened: without `--skip-invalid` one line and no output, with
/// it a warning and the other files merged, as any invalid input.
#[test]
fn a_gzip_input_that_cannot_be_opened_is_skipped_with_skip_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = copy_to(dir.path(), &traces("two"));
    // gzip's header, then bytes that are no deflate data.
    let mut bad = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3];
    bad.extend(std::iter::repeat_n(0xff_u8, 64));
    inputs.insert(1, write(dir.path(), "bad.json.gz", &bad));
    let o = mergetrace(dir.path(), &["-o", "out.json"], &inputs);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.json.gz: gzip: "), "{}", stderr(&o));
    assert!(!dir.path().join("out.json").exists());
    let o = mergetrace(dir.path(), &["-o", "out.json", "--skip-invalid"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad.json.gz: gzip: ") && stderr(&o).contains("; skipping this file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        json(&dir.path().join("out.json")),
        json(&data("golden/two.orig.json"))
    );
}

#[test]
fn json_without_trace_events_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = copy_to(dir.path(), &traces("two"));
    inputs.insert(
        1,
        write(
            dir.path(),
            "run_config.json",
            b"{\"app\": \"python\", \"ranks\": [0, 1]}\n",
        ),
    );
    let o = mergetrace(dir.path(), &["-o", "out.json"], &inputs);
    assert!(o.status.success());
    assert!(stderr(&o).contains("run_config.json: no traceEvents array, skipped"));
    assert_eq!(
        json(&dir.path().join("out.json")),
        json(&data("golden/two.orig.json"))
    );
}

#[test]
fn bare_array_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let arr = write(
        dir.path(),
        "chrome.json",
        b"[{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"name\": \"a\", \"ts\": 5.000000, \"dur\": 1.5},\n{\"ph\": \"i\", \"pid\": 1, \"tid\": 1, \"name\": \"b\", \"ts\": 7}\n",
    );
    let o = mergetrace(dir.path(), &["-o", "out.json"], &[arr]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Chrome's array form may omit the closing ']': no warning.
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let out = fs::read_to_string(dir.path().join("out.json")).unwrap();
    assert!(out.contains("\"ts\": 5.000000, \"dur\": 1.5}"));
    assert_eq!(events(&json(&dir.path().join("out.json"))).len(), 2);
}

#[test]
fn event_that_is_not_an_object_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.json",
        b"{ \"traceEvents\":[\n{\"ph\": \"M\"},\n\"oops\"\n]\n}\n",
    );
    assert_fails(
        dir.path(),
        &[bad],
        &[],
        "bad.json:3: traceEvents element 1 is not a JSON object",
    );
}

#[test]
fn invalid_utf8_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.json",
        b"{ \"traceEvents\":[\n{\"ph\": \"X\", \"name\": \"k\xc3\x28\"}\n]\n}\n",
    );
    assert_fails(
        dir.path(),
        &[bad],
        &[],
        "bad.json:2: invalid UTF-8 in a string",
    );
}

#[test]
fn invalid_event_json_fails_or_is_skipped_on_request() {
    // unitrace's `"args": {, "mpi_counter": N}` bug (gen --mpi-counter-bug).
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "python.1.3.json",
        b"{ \"traceEvents\":[\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1.000000},\n{\"ph\": \"X\", \"name\": \"MPI::MPI_Internal_operation\", \"args\": {, \"mpi_counter\": 4}},\n{\"ph\": \"X\", \"name\": \"c\", \"ts\": 3.000000}\n]\n}\n",
    );
    assert_fails(
        dir.path(),
        std::slice::from_ref(&bad),
        &[],
        "python.1.3.json:3: invalid JSON: expected a key, found ','",
    );
    let o = mergetrace(dir.path(), &["-o", "out.json", "--skip-invalid"], &[bad]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipping the rest of this file"));
    assert_eq!(events(&json(&dir.path().join("out.json"))).len(), 1);
}

#[test]
fn huge_single_line_is_bounded_by_the_event_limit() {
    // A 2 GB line is too slow to generate in a test; the same code path is
    // exercised with the hidden limit knob at 1 MiB: a 3 MB single-line
    // trace of small events merges (the buffer holds one event, not the
    // line), and one 2 MB event is refused with a clear error.
    let dir = tempfile::tempdir().unwrap();
    let mut line = b"{\"traceEvents\":[".to_vec();
    for i in 0..60_000 {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(
            format!("{{\"ph\":\"X\",\"name\":\"k\",\"ts\":{i}.250000,\"dur\":1}}").as_bytes(),
        );
    }
    line.extend_from_slice(b"]}");
    assert!(line.len() > 2_500_000);
    let one_line = write(dir.path(), "line.json", &line);
    let o = mergetrace(
        dir.path(),
        &["-o", "out.json", "--max-event-mib", "1"],
        &[one_line],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(events(&json(&dir.path().join("out.json"))).len(), 60_000);
    fs::remove_file(dir.path().join("out.json")).unwrap();

    let mut big = b"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'x', 2 << 20));
    big.extend_from_slice(b"\"}]}");
    let big = write(dir.path(), "big.json", &big);
    assert_fails(
        dir.path(),
        &[big],
        &["--max-event-mib", "1"],
        "big.json:1: an event (or top-level value) is longer than 1048576 bytes",
    );
}

#[test]
fn duplicate_inputs_are_merged_once() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    let alias = dir.path().join(".").join(inputs[0].file_name().unwrap());
    let o = mergetrace(
        dir.path(),
        &["-o", "out.json"],
        &[inputs[0].clone(), inputs[1].clone(), alias],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("given more than once; merged once"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        json(&dir.path().join("out.json")),
        json(&data("golden/two.orig.json"))
    );
}

#[test]
fn output_equal_to_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    let before = snapshot(&inputs);
    let target = inputs[1].to_string_lossy().into_owned();
    let o = mergetrace(dir.path(), &["-o", &target], &inputs);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("refusing to overwrite it"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert_eq!(snapshot(&inputs), before);
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn remap_pids_separates_colliding_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("collision"));
    // Same host pid in both files (different nodes).
    let plain = mergetrace(dir.path(), &["-o", "plain.json"], &inputs);
    assert!(plain.status.success());
    let o = mergetrace(dir.path(), &["-o", "out.json", "--remap-pids"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = json(&dir.path().join("plain.json"));
    let out = json(&dir.path().join("out.json"));
    let (pe, oe) = (events(&plain), events(&out));
    assert_eq!(pe.len(), oe.len());
    let first_of_second = pe
        .iter()
        .position(|e| {
            e["ph"] == "M"
                && e["name"] == "process_name"
                && e["args"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("RANK 12 HOST")
        })
        .unwrap();
    assert_eq!(pe[0]["pid"], pe[first_of_second]["pid"], "inputs collide");
    assert_ne!(oe[0]["pid"], oe[first_of_second]["pid"]);
    // pids of the two inputs are disjoint; tid == pid is kept for main threads.
    let pids = |evs: &[Value]| -> std::collections::BTreeSet<u64> {
        evs.iter().filter_map(|e| e["pid"].as_u64()).collect()
    };
    let (a, b) = (pids(&oe[..first_of_second]), pids(&oe[first_of_second..]));
    assert!(a.is_disjoint(&b), "{a:?} {b:?}");
    for (p, o) in pe.iter().zip(oe) {
        if p.get("tid").is_some() && p["tid"] == p["pid"] {
            assert_eq!(o["tid"], o["pid"]);
        }
        // Everything else untouched.
        for key in ["ph", "name", "cat", "ts", "dur", "args"] {
            assert_eq!(p.get(key), o.get(key), "{key}");
        }
    }
    let flow_ids = |evs: &[Value]| -> std::collections::BTreeSet<u64> {
        evs.iter()
            .filter(|e| e["ph"] == "s" || e["ph"] == "t")
            .map(|e| num(&e["id"]))
            .collect()
    };
    let (fa, fb) = (
        flow_ids(&oe[..first_of_second]),
        flow_ids(&oe[first_of_second..]),
    );
    assert!(!fa.is_empty() && fa.is_disjoint(&fb));
    assert!(fb.iter().all(|&id| id >> 32 == 1));
}

#[test]
fn remap_labels_processes_with_the_rank_of_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(
        dir.path(),
        "app.4242.5.json",
        b"{ \"traceEvents\":[\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 4242, \"ts\": 1.000000, \"args\": {\"name\": \"HOST<n1>\"}},\n{\"ph\": \"X\", \"tid\": 4242, \"pid\": 4242, \"name\": \"zeInit\", \"cat\": \"cpu_op\", \"ts\": 2.000000, \"dur\": 1.000000, \"id\": 0}\n]\n}\n",
    );
    let o = mergetrace(dir.path(), &["-o", "out.json", "--remap-pids"], &[t]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = fs::read_to_string(dir.path().join("out.json")).unwrap();
    assert!(out.contains("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"ts\": 1.000000, \"args\": {\"name\": \"rank 5 HOST<n1>\"}}"), "{out}");
    assert!(
        out.contains("\"tid\": 1, \"pid\": 1, \"name\": \"zeInit\""),
        "{out}"
    );
}

#[test]
fn align_start_shifts_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("collision"));
    let o = mergetrace(dir.path(), &["-o", "out.json", "--align", "start"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = fs::read(dir.path().join("out.json")).unwrap();
    let lines = event_lines(&out);
    let a = event_lines(&fs::read(&inputs[0]).unwrap());
    let b = event_lines(&fs::read(&inputs[1]).unwrap());
    assert_eq!(lines.len(), a.len() + b.len());
    // The earliest input is untouched.
    let ts = |l: &[u8]| -> Decimal {
        let s = std::str::from_utf8(l).unwrap();
        let at = s.find("\"ts\": ").unwrap() + 6;
        let end = at + s[at..].find([',', '}']).unwrap();
        Decimal::parse(&s.as_bytes()[at..end]).unwrap()
    };
    let (first_a, first_b) = (ts(&a[0]), ts(&b[0]));
    let (early, late, late_out) = if first_a <= first_b {
        assert_eq!(&lines[..a.len()], &a[..]);
        (first_a, &b, &lines[a.len()..])
    } else {
        assert_eq!(&lines[a.len()..], &b[..]);
        (first_b, &a, &lines[..a.len()])
    };
    let delta = ts(&late[0]).checked_sub(early).unwrap();
    assert!(!delta.is_zero());
    for (src, out) in late.iter().zip(late_out) {
        let want = ts(src).checked_sub(delta).unwrap();
        assert_eq!(ts(out), want);
        // Six decimals kept, the rest of the event byte for byte.
        let s = std::str::from_utf8(out).unwrap();
        assert!(s.contains(&format!("\"ts\": {want}")), "{s}");
        assert_eq!(want.scale(), 6);
        let strip = |l: &[u8]| {
            let s = String::from_utf8(l.to_vec()).unwrap();
            let at = s.find("\"ts\": ").unwrap();
            let end = at + s[at..].find([',', '}']).unwrap();
            format!("{}{}", &s[..at], &s[end..])
        };
        assert_eq!(strip(src), strip(out));
    }
}

#[test]
fn filter_ranks_and_time_window() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    let all = json(&data("golden/two.orig.json"));
    let all = events(&all);

    let o = mergetrace(dir.path(), &["-o", "f.json", "--filter", "^ze"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = json(&dir.path().join("f.json"));
    let expect = all
        .iter()
        .filter(|e| e["ph"] == "M" || e["name"].as_str().is_some_and(|n| n.starts_with("ze")))
        .count();
    assert_eq!(events(&f).len(), expect);
    assert!(expect < all.len());

    let o = mergetrace(dir.path(), &["-o", "r.json", "--ranks", "1"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&dir.path().join("r.json"));
    let rank1 = serde_json::from_slice::<Value>(&fs::read(&inputs[1]).unwrap()).unwrap();
    assert_eq!(r, serde_json::json!({"traceEvents": events(&rank1)}));

    // Window: the first millisecond of the merged trace.
    let origin = all
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .take(1)
        .fold(f64::INFINITY, f64::min);
    let origin = origin.min(
        events(&rank1)
            .iter()
            .filter_map(|e| e["ts"].as_f64())
            .next()
            .unwrap(),
    );
    let o = mergetrace(
        dir.path(),
        &["-o", "w.json", "--time-window", ":1ms"],
        &inputs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let w = json(&dir.path().join("w.json"));
    let expect = all
        .iter()
        .filter(|e| e["ph"] == "M" || e["ts"].as_f64().is_some_and(|t| t <= origin + 1000.0))
        .count();
    assert_eq!(events(&w).len(), expect);
    assert!(expect < all.len());

    let o = mergetrace(dir.path(), &["-o", "x.json", "--ranks", "3-1"], &inputs);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--ranks: empty range '3-1'"));
}

#[test]
fn stats_table_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    // `--stats` followed by a trace: the trace stays an input.
    let o = mergetrace(dir.path(), &["-o", "s.json", "--stats"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        json(&dir.path().join("s.json")),
        json(&data("golden/two.orig.json"))
    );
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.starts_with("GPU time per rank (2 ranks, median "),
        "{table}"
    );
    assert!(table.contains("straggler: rank "), "{table}");
    assert!(table.contains("[PyTorch::"), "{table}");

    let o = mergetrace(
        dir.path(),
        &["-o", "s2.json", "--stats", "stats.csv"],
        &inputs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = fs::read_to_string(dir.path().join("stats.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("row,rank,file,kernel,category,count,total_us"));
    assert_eq!(rows.iter().filter(|r| r.starts_with("rank,")).count(), 2);
    // Device commands in the inputs = sum of the kernel counts.
    let gpu_ops = events(&json(&data("golden/two.orig.json")))
        .iter()
        .filter(|e| e["cat"] == "gpu_op")
        .count() as u64;
    let counted: u64 = rows
        .iter()
        .filter(|r| r.starts_with("kernel,"))
        .map(|r| {
            let mut rd = csv_fields(r);
            rd.swap_remove(5).parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(counted, gpu_ops);
}

/// Splits one CSV line (quoted fields allowed).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn stats_csv_may_not_overwrite_an_input_or_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &traces("two"));
    let before = snapshot(&inputs);
    let o = mergetrace(dir.path(), &["-o", "m.json", "--stats", "m.json"], &inputs);
    // `m.json` does not end in .csv: it is taken as an input, which does not
    // exist.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("m.json: no such file"),
        "{}",
        stderr(&o)
    );
    let o = mergetrace(dir.path(), &["-o", "m.csv", "--stats", "m.csv"], &inputs);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("same file as the merged trace"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("m.csv").exists());
    assert_eq!(snapshot(&inputs), before);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// An input that yields no event — cut right after `"traceEvents": [`, in
/// its envelope, in its gzip header or early in its gzip data, a
/// `.pftrace` cut in its first record — is skipped as an empty file is
/// (docs/mergetrace.md), with one warning in tracestat's words that says it
/// was cut; the merge is that of the other inputs, byte for byte.
#[test]
fn an_input_cut_before_its_first_event_is_skipped_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let good = copy_to(dir.path(), &traces("two")).remove(0);
    let text = fs::read(&good).unwrap();
    let bracket = text.iter().position(|&c| c == b'[').unwrap() + 1;
    let gz = gzip(&text);
    let cut = "cut short (writer killed?): no trace events before the cut";
    let cases = [
        (
            write(dir.path(), "bracket.json", &text[..bracket]),
            cut.to_string(),
        ),
        (
            write(dir.path(), "envelope.json", &text[..bracket - 4]),
            cut.to_string(),
        ),
        (
            write(dir.path(), "header.json.gz", &gz[..2]),
            "gzip stream cut short in a member's header (writer killed?): no trace events"
                .to_string(),
        ),
        (
            write(dir.path(), "data.json.gz", &gz[..12]),
            format!("gzip stream {cut}"),
        ),
    ];
    let o = mergetrace(
        dir.path(),
        &["-o", "alone.json"],
        std::slice::from_ref(&good),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let alone = fs::read(dir.path().join("alone.json")).unwrap();
    for (bad, why) in cases {
        let o = mergetrace(
            dir.path(),
            &["-o", "out.json"],
            &[good.clone(), bad.clone()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("mergetrace: warning: {}: {why}; skipped\n", bad.display())
        );
        assert_eq!(fs::read(dir.path().join("out.json")).unwrap(), alone);
    }
    // The same for a `.pftrace` cut in its first record.
    let pf = data("../tracestat/gen-pftrace/python.100065.1.pftrace");
    let bytes = fs::read(&pf).unwrap();
    let bad = write(dir.path(), "cut.pftrace", &bytes[..2]);
    let o = mergetrace(
        dir.path(),
        &["-o", "pf.pftrace"],
        &[pf.clone(), bad.clone()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("mergetrace: warning: {}: {cut}; skipped\n", bad.display())
    );
    assert_eq!(fs::read(dir.path().join("pf.pftrace")).unwrap(), bytes);
}

/// A gzipped input whose gzip stream ends badly around a whole trace — its
/// 8-byte trailer cut, or 1 to 100 bytes after it, zeros or not — merges
/// as the plain trace does, with one warning saying what is wrong
/// (docs/robustness.md#gzip); a corrupt second member is an error.
#[test]
fn gzip_damage_around_a_whole_input_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let good = copy_to(dir.path(), &traces("two")).remove(0);
    let text = fs::read(&good).unwrap();
    let gz = gzip(&text);
    let at = gz.len();
    let o = mergetrace(
        dir.path(),
        &["-o", "plain.json"],
        std::slice::from_ref(&good),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = fs::read(dir.path().join("plain.json")).unwrap();
    let mut cases = vec![(
        write(dir.path(), "trailer.json.gz", &gz[..at - 5]),
        "gzip stream cut short in its 8-byte trailer (writer killed?): \
         the content is whole but its CRC was not checked"
            .to_string(),
    )];
    for (n, byte, what) in [
        (1, b'\n', "no gzip member"),
        (8, 0, "zero bytes"),
        (100, b'#', "no gzip member"),
    ] {
        let mut bytes = gz.clone();
        bytes.extend(std::iter::repeat_n(byte, n));
        let s = if n == 1 { "" } else { "s" };
        cases.push((
            write(dir.path(), &format!("junk{n}.json.gz"), &bytes),
            format!("{n} byte{s} after the end of the gzip data at byte {at} ({what}); ignored"),
        ));
    }
    for (input, why) in cases {
        let o = mergetrace(
            dir.path(),
            &["-o", "out.json"],
            std::slice::from_ref(&input),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("mergetrace: warning: {}: {why}\n", input.display())
        );
        assert_eq!(fs::read(dir.path().join("out.json")).unwrap(), plain);
    }
    let mut second = gz.clone();
    second.extend_from_slice(b"\x1f\x8b and then no gzip at all");
    let bad = write(dir.path(), "second.json.gz", &second);
    fs::remove_file(dir.path().join("out.json")).unwrap();
    assert_fails(
        dir.path(),
        std::slice::from_ref(&bad),
        &[],
        &format!("(member 2 at byte {at})"),
    );
}
