//! `--partial` / `--combine` give the report of one run; bad inputs give
//! one error line and no output file; `--schema` categories.

use crate::common::*;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn os(p: &Path) -> &OsStr {
    p.as_os_str()
}

fn partial(inputs: &[PathBuf], out: &Path, extra: &[&str]) {
    let mut args: Vec<&OsStr> = inputs.iter().map(|p| p.as_os_str()).collect();
    args.push("--partial".as_ref());
    args.push(os(out));
    for e in extra {
        args.push(e.as_ref());
    }
    let r = run(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(r.stdout.is_empty(), "a partial run prints no report");
}

fn combine(parts: &[&Path], extra: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let mut args: Vec<&OsStr> = vec!["--combine".as_ref()];
    args.extend(parts.iter().map(|p| os(p)));
    args.push("--json".as_ref());
    args.push(os(&json));
    args.push("--quiet".as_ref());
    for e in extra {
        args.push(e.as_ref());
    }
    let r = run(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn partial_then_combine_equals_one_run() {
    let dir = tempfile::tempdir().unwrap();
    for (files, extra) in [
        (coll_files(), vec!["--tree=2"]),
        (gen_files(), vec!["--short-kernel", "5us", "--tree=3"]),
    ] {
        let (whole, _, _) = report(&files, &extra);
        // Blocks of ranks, given in another order than the files.
        let (a, b) = files.split_at(files.len() / 2);
        let pa = dir.path().join("a.json");
        let pb = dir.path().join("b.json");
        partial(b, &pb, &extra);
        partial(a, &pa, &extra);
        // --bins is a combine-time option, the rest must match the partials.
        let combined = combine(&[&pb, &pa], &["--bins", "200"]);
        assert_eq!(combined, whole, "partial + combine differs from one run");
        // One block per rank combines the same way.
        let parts: Vec<PathBuf> = files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let p = dir.path().join(format!("p{i}.json"));
                partial(std::slice::from_ref(f), &p, &extra);
                p
            })
            .collect();
        let refs: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
        assert_eq!(combine(&refs, &[]), whole);
    }
}

#[test]
fn combine_refuses_partials_made_with_other_options() {
    let dir = tempfile::tempdir().unwrap();
    let files = coll_files();
    let pa = dir.path().join("a.json");
    let pb = dir.path().join("b.json");
    partial(&files[..2], &pa, &["--short-kernel", "5us"]);
    partial(&files[2..], &pb, &[]);
    let out_json = dir.path().join("out.json");
    let r = run(&[
        "--combine".as_ref(),
        os(&pa),
        os(&pb),
        "--json".as_ref(),
        os(&out_json),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("tracestat: "), "{err}");
    assert!(err.contains("made with other options"), "{err}");
    // The line names the option that differs, as the partial writes it.
    assert!(
        err.contains("(short_kernel_ns: 10000 against 5000)"),
        "{err}"
    );
    assert!(!out_json.exists());
    // Per-rank options belong to the partials.
    let r = run(&["--combine".as_ref(), os(&pa), "--tree".as_ref()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("chosen when the partials are made"));
    // A trace given to --combine is not a partial.
    let r = run(&["--combine".as_ref(), os(&files[0])]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.starts_with(&format!("tracestat: {}", files[0].display())),
        "{err}"
    );
    assert!(err.contains("not a tracestat partial"), "{err}");
    // A partial of a version this build does not read: the line says which
    // it reads (4, the first with the analyzers' own parts, to the current).
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&pb).unwrap()).unwrap();
    doc["version"] = 99.into();
    let future = dir.path().join("future.json");
    std::fs::write(&future, serde_json::to_vec(&doc).unwrap()).unwrap();
    let r = run(&[
        "--combine".as_ref(),
        os(&future),
        "--json".as_ref(),
        os(&out_json),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("version 99 (expected \"tracestat-partial\" 4 to 8)"),
        "{err}"
    );
    assert!(!out_json.exists());
}

#[test]
fn bad_input_one_line_exit_1_no_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": 01}\n]}\n",
    )
    .unwrap();
    let json = dir.path().join("out.json");
    let csv = dir.path().join("csv");
    let good = data("hand.1000.0.json");
    let r = run(&[
        os(&good),
        os(&bad),
        "--json".as_ref(),
        os(&json),
        "--csv".as_ref(),
        os(&csv),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("tracestat: {}:2: invalid JSON", bad.display())),
        "{err}"
    );
    assert!(r.stdout.is_empty());
    assert!(!json.exists());
    assert!(!csv.exists());
    // Not a trace at all; a missing file.
    std::fs::write(&bad, "hello").unwrap();
    let r = run(&[os(&bad)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not a trace: text"));
    let missing = dir.path().join("missing.json");
    let r = run(&[os(&missing)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr)
        .starts_with(&format!("tracestat: {}", missing.display())));
    // An output that is an input is refused before anything is written.
    let copy = dir.path().join("t.json");
    std::fs::copy(&good, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let r = run(&[os(&copy), "--json".as_ref(), os(&copy)]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // Usage errors exit 2.
    let r = run(&[os(&good), "--short-kernel".as_ref(), "5 parsecs".as_ref()]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr)
        .starts_with("error: invalid value '5 parsecs' for '--short-kernel <DUR>': unknown unit"));
    let r = run(&[os(&good), "--bins".as_ref(), "0".as_ref()]);
    assert_eq!(r.status.code(), Some(2));
}

#[test]
fn ranks_selection() {
    let (doc, _, _) = report(&coll_files(), &["--ranks", "0,2-3"]);
    let ranks: Vec<&str> = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rank"].as_str().unwrap())
        .collect();
    assert_eq!(ranks, ["0", "2", "3"]);
    // Space-separated, before the files.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args: Vec<std::ffi::OsString> = vec![
        "--json".into(),
        json.clone().into(),
        "--ranks".into(),
        "1".into(),
        "3".into(),
    ];
    args.extend(coll_files().into_iter().map(Into::into));
    let refs: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    assert!(run(&refs).status.success());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ranks: Vec<&str> = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rank"].as_str().unwrap())
        .collect();
    assert_eq!(ranks, ["1", "3"]);
}

#[test]
fn schema_categories_and_their_classes() {
    // testdata/trace/categories/schema.json: gemm_kernel -> gemm,
    // Allreduce_small_kernel -> allreduce, copies -> copy, ...
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/categories/schema.json");
    let (doc, _, _) = report(&gen_files(), &["--schema", schema.to_str().unwrap()]);
    let cats: Vec<(&str, &str)> = doc["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap(),
                c["class"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(cats.contains(&("gemm", "compute")), "{cats:?}");
    assert!(cats.contains(&("allreduce", "communication")), "{cats:?}");
    // Kernels no rule matches keep the default category `device`.
    assert!(cats.iter().any(|c| c.0 == "device"), "{cats:?}");
    // The schema does not change the breakdown's busy time.
    let (plain, _, _) = report(&gen_files(), &[]);
    for (a, b) in doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .zip(plain["breakdown"].as_array().unwrap())
    {
        close(f(&a["busy_us"]), f(&b["busy_us"]), "busy");
    }
}

#[test]
fn result_dir_with_ranks() {
    // testdata/trace/pftrace/resultdir: a `unitrace --result-dir` tree with
    // chrome_trace.pftrace per rank.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/pftrace/resultdir");
    let root = root.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let r = run(&[
        "--result-dir".as_ref(),
        root.as_ref(),
        "--ranks".as_ref(),
        "0".as_ref(),
        "2".as_ref(),
        "--json".as_ref(),
        os(&json),
        "-q".as_ref(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ranks: Vec<&str> = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rank"].as_str().unwrap())
        .collect();
    assert_eq!(ranks, ["0", "2"]);
    assert!(doc["launches"][0]["kernels"].as_u64().unwrap() > 0);
    // All ranks without --ranks; a rank that is not there is a warning.
    let r = run(&[
        "--result-dir".as_ref(),
        root.as_ref(),
        "--ranks".as_ref(),
        "1,7".as_ref(),
        "-q".as_ref(),
    ]);
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("no trace of rank 7"));
    let r = run(&["--result-dir".as_ref(), dir.path().as_os_str()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("no chrome_trace.json or chrome_trace.pftrace")
    );
}

/// Data after the trace's closing bracket: one warning line naming the file
/// and line, then the report of the trace as if the data were not there
/// (mergetrace does the same: docs/tracestat.md#usage).
#[test]
fn data_after_the_end_of_the_trace_is_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let good = data("hand.1000.0.json");
    let text = std::fs::read(&good).unwrap();
    let lines = text.iter().filter(|&&c| c == b'\n').count();
    let garbage = dir.path().join("garbage.1000.0.json");
    let mut with_garbage = text.clone();
    with_garbage.extend_from_slice(b"\n  oops, a second document\n");
    std::fs::write(&garbage, &with_garbage).unwrap();
    let (clean_json, dirty_json) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let r = run(&[os(&good), "-q".as_ref(), "--json".as_ref(), os(&clean_json)]);
    assert!(r.status.success());
    assert!(
        r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let r = run(&[
        os(&garbage),
        "-q".as_ref(),
        "--json".as_ref(),
        os(&dirty_json),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        err,
        format!(
            "tracestat: warning: {}:{}: data after the end of the trace; ignored\n",
            garbage.display(),
            lines + 2
        )
    );
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    // The reports differ only by the file's path.
    let dirty = read(&dirty_json)
        .to_string()
        .replace(&garbage.display().to_string(), &good.display().to_string());
    assert_eq!(read(&clean_json).to_string(), dirty);
}

/// Bad input with every output option at once (`--json`, `--csv`,
/// `--parquet`, `--html`) or with `--partial`: one line, exit 1, no
/// output of any kind; the same for a malformed `.pftrace` and for a
/// partial cut short given to `--combine`.
#[test]
fn bad_input_leaves_no_output_of_any_kind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let outputs = |tag: &str| -> Vec<std::ffi::OsString> {
        vec![
            "--json".into(),
            out.join(format!("{tag}.json")).into(),
            "--csv".into(),
            out.join(format!("{tag}-csv")).into(),
            "--parquet".into(),
            out.join(format!("{tag}-pq")).into(),
            "--html".into(),
            out.join(format!("{tag}.html")).into(),
        ]
    };
    std::fs::create_dir(&out).unwrap();
    let check = |args: Vec<std::ffi::OsString>, starts: String, contains: &str| {
        let refs: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let r = run(&refs);
        let err = String::from_utf8_lossy(&r.stderr).into_owned();
        assert_eq!(r.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&starts), "{err}");
        assert!(err.contains(contains), "{err}");
        assert!(r.stdout.is_empty());
        let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
        assert!(left.is_empty(), "outputs left: {left:?}");
    };

    // A JSON trace with a syntax error on line 3, after a good trace.
    let bad = dir.path().join("bad.5.1.json");
    let good = data("hand.1000.0.json");
    std::fs::write(
        &bad,
        "{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1, \"name\": \"a\"},\n{\"ph\": \"X\" \"ts\": 2}\n]}\n",
    )
    .unwrap();
    let mut args: Vec<std::ffi::OsString> = vec![good.clone().into(), bad.clone().into()];
    args.extend(outputs("a"));
    check(
        args,
        format!("tracestat: {}:3: ", bad.display()),
        "invalid JSON",
    );
    let partial_out = out.join("p.json");
    check(
        vec![
            good.clone().into(),
            bad.clone().into(),
            "--partial".into(),
            partial_out.clone().into(),
        ],
        format!("tracestat: {}:3: ", bad.display()),
        "invalid JSON",
    );

    // A .pftrace whose last record holds a packet of an unknown wire type.
    let pf = dir.path().join("python.100065.1.pftrace");
    let mut bytes = std::fs::read(data("gen-pftrace/python.100065.1.pftrace")).unwrap();
    bytes.extend_from_slice(b"\x0a\x02\x43\x00");
    std::fs::write(&pf, &bytes).unwrap();
    let mut args: Vec<std::ffi::OsString> = vec![pf.clone().into()];
    args.extend(outputs("b"));
    check(
        args,
        format!("tracestat: {}: byte ", pf.display()),
        "malformed TracePacket",
    );

    // A partial cut short, given to --combine with a good one.
    let good_part = dir.path().join("good.part.json");
    partial(std::slice::from_ref(&good), &good_part, &[]);
    let text = std::fs::read(&good_part).unwrap();
    let cut = dir.path().join("cut.part.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let mut args: Vec<std::ffi::OsString> =
        vec!["--combine".into(), good_part.into(), cut.clone().into()];
    args.extend(outputs("c"));
    check(
        args,
        format!("tracestat: {}", cut.display()),
        "not a tracestat partial",
    );

    // A table folder that is a file: said as such, not as "File exists".
    let file = dir.path().join("tables");
    std::fs::write(&file, "").unwrap();
    for flag in ["--csv", "--parquet"] {
        let r = run(&[
            good.as_os_str(),
            "-q".as_ref(),
            flag.as_ref(),
            file.as_os_str(),
        ]);
        assert_eq!(r.status.code(), Some(1));
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(
            err.trim_end(),
            format!(
                "tracestat: {}: a file, not a folder for the tables",
                file.display()
            )
        );
    }
}

/// `--result-dir` over a tree of JSON traces (`chrome_trace.json` in
/// `rank_<r>.*` folders) gives the report of its files given one by one;
/// `--ranks` keeps those ranks' folders.
#[test]
fn result_dir_of_json_traces_equals_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/upstream/resdir_json");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("chrome_trace.json"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3);
    let root_s = root.to_str().unwrap();
    let strip = |mut doc: serde_json::Value| {
        for row in doc["breakdown"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("file");
        }
        doc
    };
    let (by_dir, _, stderr) = report(&[], &["--result-dir", root_s]);
    assert!(stderr.is_empty(), "{stderr}");
    let (by_files, _, _) = report(&files, &[]);
    assert_eq!(by_dir["ranks"], 3);
    assert_eq!(strip(by_dir), strip(by_files));
    let (some, _, _) = report(&[], &["--result-dir", root_s, "--ranks", "0", "2"]);
    let (same, _, _) = report(&[files[0].clone(), files[2].clone()], &[]);
    assert_eq!(strip(some), strip(same));
}

/// An edit of one rank of a partial.
type Edit = fn(&mut serde_json::Value);

/// A partial given twice, or edited so that a rank ends before it starts,
/// has a negative time or lost its breakdown, is a one-line error naming
/// the file: not a report with ranks counted twice, negative walls or a
/// rank gone.
#[test]
fn combine_refuses_partials_no_partial_run_writes() {
    let dir = tempfile::tempdir().unwrap();
    let files = coll_files();
    let good = dir.path().join("good.json");
    partial(&files[..1], &good, &[]);
    let rest = dir.path().join("rest.json");
    partial(&files[1..], &rest, &[]);
    let text = std::fs::read_to_string(&good).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let edits: [(&str, Edit, &str); 3] = [
        (
            "wall",
            |r| r["breakdown"][0]["wall_ns"] = (-5).into(),
            "breakdown all wall_ns -5",
        ),
        (
            "span",
            |r| r["first_ns"] = (r["last_ns"].as_i64().unwrap() + 1).into(),
            "its last event before its first",
        ),
        (
            "breakdown",
            |r| r["breakdown"] = serde_json::json!([]),
            "no breakdown of the whole rank",
        ),
    ];
    for (name, edit, problem) in edits {
        let mut d = doc.clone();
        edit(&mut d["ranks"][0]);
        let bad = dir.path().join(format!("{name}.json"));
        std::fs::write(&bad, serde_json::to_string(&d).unwrap()).unwrap();
        let r = run(&["--combine".as_ref(), os(&rest), os(&bad), "-q".as_ref()]);
        assert_eq!(r.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("tracestat: {}: rank ", bad.display())),
            "{err}"
        );
        assert!(err.contains(problem), "{name}: {err}");
    }
    let r = run(&["--combine".as_ref(), os(&good), os(&rest), os(&good)]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        err.trim_end(),
        format!("tracestat: {}: given twice to --combine", good.display())
    );
}

/// Standard input is read as `/dev/stdin`, a pipe read as it comes
/// (docs/robustness.md): the report of a trace piped in is that of the
/// file.
#[test]
fn a_trace_piped_to_dev_stdin_is_read_as_its_file() {
    let file = gen_files().remove(0);
    let (whole, _, _) = report(std::slice::from_ref(&file), &[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .args(["/dev/stdin", "-q", "--json"])
        .arg(&json)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A pipe, written as the reader reads.
    let mut pipe = child.stdin.take().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        pipe.write_all(&bytes).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let piped: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        piped["breakdown"][0]["busy_us"],
        whole["breakdown"][0]["busy_us"]
    );
    assert_eq!(piped["kernels"], whole["kernels"]);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A trace that yields no event — cut right after `"traceEvents": [`, in
/// its envelope, in its gzip header or early in its gzip data, a
/// `.pftrace` cut in its first record — is an error alone, as an empty
/// file is, in words that say it was cut: never an exit 0 with a report of
/// zeros. Among good inputs it is left out with one warning; `--events`
/// does the same and leaves no DIR (docs/tracestat.md#inputs).
#[test]
fn a_trace_that_yields_no_event_is_an_error_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let good = data("hand.1000.0.json");
    let text = std::fs::read(&good).unwrap();
    let bracket = text.iter().position(|&c| c == b'[').unwrap() + 1;
    let gz = gzip(&text);
    let pf = std::fs::read(data("gen-pftrace/python.100065.1.pftrace")).unwrap();
    let cut = "cut short (writer killed?): no trace events before the cut";
    let cases: [(&str, &[u8], String); 6] = [
        ("after_bracket.json", &text[..bracket], cut.to_string()),
        ("in_envelope.json", &text[..bracket - 5], cut.to_string()),
        (
            "gz_header.json.gz",
            &gz[..2],
            "gzip stream cut short in a member's header (writer killed?): no trace events"
                .to_string(),
        ),
        ("gz_data.json.gz", &gz[..12], format!("gzip stream {cut}")),
        ("first_record.pftrace", &pf[..2], cut.to_string()),
        (
            "empty.json",
            b"",
            "no trace events (an empty file?)".to_string(),
        ),
    ];
    let json = dir.path().join("out.json");
    for (name, bytes, why) in &cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let r = run(&[os(&p), "--json".as_ref(), os(&json)]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err, format!("tracestat: {}: {why}\n", p.display()));
        assert!(r.stdout.is_empty() && !json.exists(), "{name}");
        // --events: the same line, no dataset folder.
        let events = dir.path().join("ev");
        let r = run(&[os(&p), "--events".as_ref(), os(&events)]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err, format!("tracestat: {}: {why}\n", p.display()));
        assert!(!events.exists(), "{name}: --events left its DIR");
        // Beside a good trace: left out with a warning, the good rank kept.
        let r = run(&[
            os(&good),
            os(&p),
            "-q".as_ref(),
            "--json".as_ref(),
            os(&json),
        ]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{name}: {err}");
        assert_eq!(
            err,
            format!("tracestat: warning: {}: {why}; left out\n", p.display())
        );
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(doc["breakdown"].as_array().unwrap().len(), 1, "{name}");
        std::fs::remove_file(&json).unwrap();
    }
}

/// A gzipped trace whose gzip stream ends badly but holds the whole trace
/// — its 8-byte trailer cut, or bytes after it (1, 8 or 100, zeros or
/// not) — gives the report of the plain trace with one warning that says
/// what is wrong (docs/robustness.md#gzip); a bad CRC is an error.
#[test]
fn gzip_damage_around_a_whole_trace_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let good = data("hand.1000.0.json");
    let text = std::fs::read(&good).unwrap();
    let gz = gzip(&text);
    let (plain, _, _) = report(std::slice::from_ref(&good), &[]);
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let at = gz.len();
    let mut cases = vec![(
        file("hand.1000.0.json.gz", &gz[..at - 3]),
        "gzip stream cut short in its 8-byte trailer (writer killed?): \
         the content is whole but its CRC was not checked"
            .to_string(),
    )];
    for (n, byte, what) in [
        (1, 0u8, "zero bytes"),
        (8, b'x', "no gzip member"),
        (100, 0, "zero bytes"),
    ] {
        let mut bytes = gz.clone();
        bytes.extend(std::iter::repeat_n(byte, n));
        let s = if n == 1 { "" } else { "s" };
        cases.push((
            file(&format!("hand.1000.0.json.{n}.gz"), &bytes),
            format!("{n} byte{s} after the end of the gzip data at byte {at} ({what}); ignored"),
        ));
    }
    let json = dir.path().join("r.json");
    for (p, why) in cases {
        let r = run(&[os(&p), "-q".as_ref(), "--json".as_ref(), os(&json)]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{err}");
        assert_eq!(err, format!("tracestat: warning: {}: {why}\n", p.display()));
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(doc["kernels"], plain["kernels"], "{}", p.display());
    }
    let mut crc = gz.clone();
    crc[at - 8] ^= 1;
    let p = file("crc.json.gz", &crc);
    let r = run(&[os(&p)]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&r.stderr),
        format!(
            "tracestat: {}: gzip: corrupt gzip stream does not have a matching checksum\n",
            p.display()
        )
    );
}
