//! Byte-for-byte parity with summary.py, and the quirk fixes: each with an
//! input on which the original fails or differs; expected = the original
//! on the normalized tarball.

use crate::{data, expected, golden, llama, run_ok, summary, AGGREGATORS};

#[test]
fn synthetic_tarball_matches_the_original_for_every_aggregator() {
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("plain.tgz"), &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("plain.orig.{a}.json")),
            "aggregator {a}"
        );
    }
}

/// The tarball of the repository's generator (`ugen.tgz`, unitrace-gen
/// summaries, testdata/summary/README.md): four ranks, a straggler, rank 0
/// with two kernels of its own.
#[test]
fn generated_tarball_matches_the_original_for_every_aggregator() {
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("ugen.tgz"), &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("ugen.orig.{a}.json")),
            "aggregator {a}"
        );
    }
}

#[test]
fn real_summaries_match_the_original_for_every_aggregator() {
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("real_hd.tgz"), &["--aggregator", a]);
        assert_eq!(
            out,
            golden(&format!("real_hd.orig.{a}.json")),
            "aggregator {a}"
        );
    }
}

#[test]
fn result_dir_layout_with_launcher_log_matches_the_original() {
    let (out, _) = run_ok(&data("resultdir_launcher.tgz"), &[]);
    assert_eq!(out, golden("resultdir_launcher.orig.mean.json"));
}

#[test]
fn output_file_is_the_same_bytes_and_aliases_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let o = summary(&[
        "--tarfile",
        data("plain.tgz").to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
        "--aggr",
        "median",
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        golden("plain.orig.median.json")
    );
}

#[test]
fn duplicate_rows_are_summed_per_file_before_aggregating() {
    // docs/compatibility.md#summary-4: the original takes two rows of one kernel in one file
    // as two samples, so min/median/min+1 differ.
    for a in ["min", "median", "min+1"] {
        let (out, _) = run_ok(&data("dups.tgz"), &["--aggregator", a]);
        assert_eq!(out, expected(&format!("dups.fixed.{a}.json"), &out), "{a}");
        assert_ne!(out, golden(&format!("dups.orig.{a}.json")), "{a}");
    }
    let (out, _) = run_ok(&data("dups.tgz"), &[]);
    assert_eq!(out, expected("dups.fixed.mean.json", &out));
}

#[test]
fn double_ccl_block_is_counted_once() {
    // docs/compatibility.md#summary-2: the original crashes on the second banner.
    let (out, _) = run_ok(&data("ccl_twice.tgz"), &[]);
    assert_eq!(out, expected("ccl_twice.fixed.mean.json", &out));
}

#[test]
fn kernel_submission_blocks_are_ignored() {
    // docs/compatibility.md#summary-1: the original counts the totals again and fails with
    // KeyError on the submission table.
    let (out, _) = run_ok(&data("submission.tgz"), &[]);
    assert_eq!(out, expected("submission.fixed.mean.json", &out));
}

#[test]
fn old_unquoted_names_with_commas_parse() {
    // docs/compatibility.md#summary-7: the original fails converting part of a name.
    let (out, _) = run_ok(&data("old_format.tgz"), &[]);
    assert_eq!(out, expected("old_format.fixed.mean.json", &out));
}

#[test]
fn tile_prefixes_and_shapes_are_removed_from_names() {
    // docs/compatibility.md#summary-6: `Tile #n: "…"` and `[SIMD…]` names miss the schema.
    let (out, _) = run_ok(&data("tiles.tgz"), &[]);
    assert_eq!(out, expected("tiles.fixed.mean.json", &out));
    let (out, _) = run_ok(&data("verbose_names.tgz"), &[]);
    assert_eq!(out, expected("verbose_names.fixed.mean.json", &out));
}

#[test]
fn binary_member_is_a_warning_not_an_abort() {
    // docs/compatibility.md#summary-7: the original aborts with a decode error.
    let tgz = data("binary_member.tgz");
    let (out, stderr) = run_ok(&tgz, &[]);
    assert_eq!(out, golden("plain.orig.mean.json"));
    assert!(
        stderr.contains(&format!(
            "summary: warning: {}: ./zz_core.bin: binary member skipped",
            tgz.display()
        )),
        "{stderr}"
    );
}
