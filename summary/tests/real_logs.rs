//! Logs as users hand them over (docs/compatibility.md#summary): every real
//! log of a run packed together (`tar cfz x.tgz output.*` picks up the `-t`
//! timelines too), job logs holding several processes' reports back to
//! back, and folders instead of archives.

use std::path::Path;

use crate::{data, golden, llama, run_ok, summary, tgz_of, AGGREGATORS};

#[test]
fn real_logs_with_their_timelines_match_the_original() {
    // real_all.tgz: the -h, -d and -t logs of ten programs. The original
    // finds no label in a -t log and skips it silently: its output is the
    // one of the -h/-d logs alone (make_goldens.sh checks that).
    let tgz = data("real_all.tgz");
    for a in AGGREGATORS {
        let (out, stderr) = run_ok(&tgz, &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("real_hd.orig.{a}.json")),
            "aggregator {a}"
        );
        let skipped: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("only a device timeline"))
            .collect();
        assert_eq!(skipped.len(), 10, "{stderr}");
        assert_eq!(
            skipped[0],
            format!(
                "summary: warning: {}: ./cl_gemm.t.txt: only a device timeline (unitrace -t), \
                 no summary; skipped",
                tgz.display()
            )
        );
    }
}

#[test]
fn a_cat_of_rank_logs_is_one_sample_per_rank() {
    // joblog.tgz holds one member: the four logs of plain.tgz concatenated.
    // The original takes one sample per report, as for four members.
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("joblog.tgz"), &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("plain.orig.{a}.json")),
            "aggregator {a}"
        );
    }
}

#[test]
fn a_job_log_of_real_reports_matches_the_original() {
    // real_job.tgz: one member holding the -h and -d reports of ten
    // programs back to back (API then Device per process).
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("real_job.tgz"), &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("real_job.orig.{a}.json")),
            "aggregator {a}"
        );
    }
}

/// `--per-rank` CSV of `input` as rows of fields.
fn per_rank(input: &Path) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("ranks.csv");
    run_ok(input, &["--per-rank", csv_path.to_str().unwrap()]);
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect()
}

#[test]
fn each_report_of_a_job_log_is_its_own_per_rank_row() {
    // Wallclock and device total of each row are its own report's, not the
    // last report's; every other column equals the row of that rank's own
    // log (ranks and pids come from the CCL banners).
    let job = per_rank(&data("joblog.tgz"));
    let ranks = per_rank(&data("plain.tgz"));
    assert_eq!(job.len(), 5);
    assert_eq!(job[0], ranks[0]);
    let lines: Vec<String> = job[1..].iter().map(|r| r[2].clone()).collect();
    assert!(lines.iter().all(|m| m.starts_with("job.log:")), "{lines:?}");
    let starts: Vec<u64> = lines
        .iter()
        .map(|m| m["job.log:".len()..].parse().unwrap())
        .collect();
    assert_eq!(starts[0], 2);
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    for (j, r) in job[1..].iter().zip(&ranks[1..]) {
        let without_member = |row: &Vec<String>| {
            let mut row = row.clone();
            row.remove(2);
            row
        };
        assert_eq!(without_member(j), without_member(r));
    }
    let wallclocks: std::collections::BTreeSet<&String> = job[1..].iter().map(|r| &r[3]).collect();
    assert_eq!(wallclocks.len(), 4, "one wallclock per report: {job:?}");
}

/// Unpacks the gzip tarball `tgz` into `dir`.
fn unpack(tgz: &Path, dir: &Path) {
    let file = std::fs::File::open(tgz).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(file))
        .unpack(dir)
        .unwrap();
}

#[test]
fn a_folder_reads_like_its_tarball() {
    for (tgz, want) in [
        ("plain.tgz", "plain.orig.mean.json"),
        (
            "resultdir_launcher.tgz",
            "resultdir_launcher.orig.mean.json",
        ),
        ("real_all.tgz", "real_hd.orig.mean.json"),
        ("joblog.tgz", "plain.orig.mean.json"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        unpack(&data(tgz), dir.path());
        let (out, _) = run_ok(dir.path(), &[]);
        assert_eq!(out, golden(want), "{tgz} unpacked");
    }
}

#[test]
fn a_folder_names_its_bad_file_like_an_archive_member() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("rank_1.app.7")).unwrap();
    std::fs::write(
        dir.path().join("rank_1.app.7/device_timing.txt"),
        "=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", 3, lots\n",
    )
    .unwrap();
    let o = summary(&[
        "--input",
        dir.path().to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "summary: {}: rank_1.app.7/device_timing.txt:5: \"Time (ns)\" is not an integer: \"lots\"\n",
            dir.path().display()
        )
    );
    let empty = tempfile::tempdir().unwrap();
    let o = summary(&[
        "--input",
        empty.path().to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "summary: {}: empty folder (no files)\n",
            empty.path().display()
        )
    );
}

#[test]
fn a_timeline_only_member_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("t.tgz");
    let good = b"\n=== Device Timing Summary ===\n\n  Total Execution Time (ns): 5\n";
    let timeline = b"Thread 1 Device 2 : \"k\" [ns] 1 (append) 2 (submit) 3 (start) 4 (end)\n";
    tgz_of(
        &tgz,
        &[
            ("output.1.0.txt", &good[..]),
            ("output.2.1.txt", &timeline[..]),
        ],
    );
    let (out, stderr) = run_ok(&tgz, &["--no-skip-empty"]);
    assert_eq!(
        stderr,
        format!(
            "summary: warning: {}: output.2.1.txt: only a device timeline (unitrace -t), no summary; skipped\n",
            tgz.display()
        )
    );
    assert!(out.contains("\"wallclock_time\": 5.0"), "{out}");
    // Nothing but timelines: nothing to summarise.
    let only = dir.path().join("only.tgz");
    tgz_of(&only, &[("output.2.1.txt", &timeline[..])]);
    let o = summary(&[
        "--input",
        only.to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).ends_with(&format!(
        "summary: {}: none of the 1 files is a unitrace text summary\n",
        only.display()
    )));
}
