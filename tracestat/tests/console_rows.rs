//! The console's per-rank tables show at most `--rank-rows` ranks (32 by
//! default): the straggler, then in turn the ranks with the most and least
//! GPU busy time and wait at collectives; the files keep every rank
//! (docs/tracestat.md#console-report).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::common::*;

const T: f64 = 1_700_000_000_000_000.0;
const RANKS: u32 = 100;

/// GPU busy time of rank r: one gemm of 100-199 us, a different length on
/// every rank (37 and 100 are coprime).
fn busy_us(r: u32) -> u32 {
    100 + (r * 37) % 100
}

/// When rank r enters the allreduce (300-399 us); all leave it at 500 us.
fn arrival_us(r: u32) -> u32 {
    300 + (r * 13) % 100
}

fn rank_file(dir: &Path, r: u32) -> PathBuf {
    let ts = |us: u32| format!("{:.6}", T + us as f64);
    let (pid, dev) = (10_000 + r, 50_000 + r);
    let events = [
        format!("{{\"ph\": \"X\", \"tid\": {dev}, \"pid\": {dev}, \"name\": \"gemm\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": {}.000000, \"args\": {{\"id\": \"1\"}}}}", ts(10), busy_us(r)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"oneCCL::API::ALLREDUCE\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": {}.000000, \"args\": {{\"send_size\":[4096]}}}}", ts(arrival_us(r)), 500 - arrival_us(r)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"zeCommandQueueSynchronize\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": 1.000000, \"id\": 0}}", ts(0)),
    ];
    let path = dir.join(format!("app.{pid}.{r}.json"));
    std::fs::write(
        &path,
        format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
    )
    .unwrap();
    path
}

fn console(files: &[PathBuf], extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    args.extend(extra.iter().map(OsStr::new));
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The rank column of the rows of the console table under `heading`,
/// whose rows start `skip` lines after the heading's line.
fn table_ranks(stdout: &str, heading: &str, skip: usize) -> Vec<u32> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with(heading))
        .skip(skip)
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        // The launch table's last row is all ranks together.
        .filter(|l| !l.trim_start().starts_with("all "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// The ranks listed after `why: ` in the console's header.
fn listed(stdout: &str, why: &str) -> Vec<u32> {
    let prefix = format!("  {why}: ");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{why}` line: {stdout}"));
    line[prefix.len()..]
        .split(' ')
        .map(|r| r.parse().unwrap())
        .collect()
}

/// Ranks by a key, largest first when `most`; ties in rank order.
fn by(key: fn(u32) -> u32, most: bool) -> Vec<u32> {
    let mut v: Vec<u32> = (0..RANKS).collect();
    v.sort_by_key(|&r| if most { u32::MAX - key(r) } else { key(r) });
    v
}

#[test]
fn per_rank_tables_show_the_ranks_that_matter_and_say_what_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..RANKS).map(|r| rank_file(dir.path(), r)).collect();
    let csv = dir.path().join("csv");
    let mut extra = vec!["--csv", csv.to_str().unwrap()];
    let stdout = console(&files, &extra);

    // Every collective lines up: the last arrival (rank with the latest
    // arrival, 399 us) made the others wait and is the straggler.
    let straggler = by(arrival_us, true)[0];
    assert_eq!(arrival_us(straggler), 399);
    assert!(
        stdout.contains(&format!("\nstraggler: rank {straggler}: arrived last")),
        "{stdout}"
    );
    assert!(stdout.contains(
        "\nPer-rank tables show 32 of 100 ranks (every rank: --rank-rows all, or --csv DIR / --json FILE):\n"
    ));
    assert_eq!(listed(&stdout, "straggler"), [straggler]);
    // Then in turn: most busy, least busy, most wait (earliest arrival),
    // least wait (latest arrival), each skipping ranks already shown,
    // until 32: 8, 8, 8 and 7 ranks.
    let lists = [
        by(busy_us, true),
        by(busy_us, false),
        by(arrival_us, false),
        by(arrival_us, true),
    ];
    let mut chosen = vec![straggler];
    let mut expected: [Vec<u32>; 4] = Default::default();
    'fill: loop {
        for (k, list) in lists.iter().enumerate() {
            if chosen.len() == 32 {
                break 'fill;
            }
            let next = *list.iter().find(|r| !chosen.contains(r)).unwrap();
            chosen.push(next);
            expected[k].push(next);
        }
    }
    assert_eq!(
        expected.iter().map(Vec::len).collect::<Vec<_>>(),
        [8, 8, 8, 7]
    );
    // The busiest rank and the one that waited longest are there.
    assert_eq!(expected[0][0], by(busy_us, true)[0]);
    assert_eq!(busy_us(expected[0][0]), 199);
    assert_eq!(busy_us(expected[1][0]), 100);
    // Rank 0 waited longest (arrival 300 us) but is already shown as the
    // least busy one (100 us): the wait list goes on with the next.
    assert_eq!(expected[1][0], 0);
    assert_eq!(arrival_us(0), 300);
    assert_eq!(arrival_us(expected[2][0]), 301);
    for (why, ranks) in [
        "most GPU busy time",
        "least GPU busy time",
        "most wait at collectives",
        "least wait at collectives",
    ]
    .iter()
    .zip(&expected)
    {
        assert_eq!(&listed(&stdout, why), ranks, "{why}");
    }
    // Every per-rank table shows exactly those ranks, in rank order, and
    // says how many it leaves out.
    chosen.sort();
    // (lines from a heading to its first row: the column header; the
    // histogram has none; the straggler table a line on the collectives).
    for (heading, skip) in [
        ("Where the time went", 2),
        ("Communication overlapped by compute", 2),
        ("GPU idle gaps", 2),
        ("Kernel launches", 2),
        ("Stragglers", 3),
    ] {
        assert_eq!(table_ranks(&stdout, heading, skip), chosen, "{heading}");
    }
    assert_eq!(
        stdout
            .matches("\n(68 more ranks not shown: --rank-rows all)\n")
            .count(),
        5
    );
    // The numbers of a shown rank are its own.
    let top = expected[0][0];
    let row = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Stragglers"))
        .find(|l| l.split_whitespace().next() == Some(&top.to_string()))
        .unwrap();
    assert!(row.split_whitespace().nth(1) == Some("0.199"), "{row}");
    // The CSV has every rank.
    let breakdown = std::fs::read_to_string(csv.join("breakdown.csv")).unwrap();
    assert_eq!(breakdown.lines().count(), 1 + RANKS as usize);

    // --rank-rows all: every rank, no note; --rank-rows 3: the straggler,
    // the busiest and the least busy.
    extra.extend(["--rank-rows", "all"]);
    let all = console(&files, &extra);
    assert_eq!(
        table_ranks(&all, "Where the time went", 2),
        (0..RANKS).collect::<Vec<_>>()
    );
    assert!(!all.contains("more ranks not shown"));
    assert!(!all.contains("Per-rank tables show"));
    let three = console(&files, &["--rank-rows", "3"]);
    let mut want = vec![straggler, expected[0][0], expected[1][0]];
    want.sort();
    assert_eq!(table_ranks(&three, "Where the time went", 2), want);
    assert!(three.contains("(97 more ranks not shown: --rank-rows all)"));

    // A bad value is a usage error.
    let bad = run(&[
        files[0].as_os_str(),
        OsStr::new("--rank-rows"),
        OsStr::new("0"),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--rank-rows"));
}

/// The list of truncated inputs is capped like the per-rank tables: when a
/// job is killed, every rank's trace is cut.
#[test]
fn truncated_inputs_are_capped_like_the_rank_tables() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..40)
        .map(|r| {
            let path = rank_file(dir.path(), r);
            // Cut after the first event: the writer was killed.
            let text = std::fs::read_to_string(&path).unwrap();
            let cut = text.find("},\n").unwrap() + 3;
            std::fs::write(&path, &text[..cut + 10]).unwrap();
            path
        })
        .collect();
    let run_with = |extra: &[&str]| -> String {
        let mut args: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
        args.extend(extra.iter().map(OsStr::new));
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let section = |text: &str| -> Vec<String> {
        let at = text
            .find("\nTruncated inputs\n")
            .expect("a truncated section");
        text[at + 1..]
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let capped = section(&run_with(&[]));
    assert_eq!(capped.len(), 33, "{capped:?}");
    assert!(capped[..32].iter().all(|l| l.starts_with("rank ")));
    assert_eq!(
        capped[32],
        "(8 more truncated inputs not shown: --rank-rows all, or --json FILE)"
    );
    let all = section(&run_with(&["--rank-rows", "all"]));
    assert_eq!(all.len(), 40);
    assert!(all
        .iter()
        .all(|l| l.starts_with("rank ") && l.contains(".json: ")));
    let five = section(&run_with(&["--rank-rows", "5"]));
    assert_eq!(five.len(), 6);
}

/// The words of the console QA read on one Kineto rank (testdata/kineto/hta/
/// triton_example: one step, nothing to compare with) and on the planted
/// four-rank recording with what-if rules (docs/tracestat.md#console-report):
/// no table has two headers of one name (the stragglers' two differences
/// were both `vs_median_%`), a change that rounds to zero is `0.0`, the
/// heatmap's heading is not said twice, and one step is `1 step`.
#[test]
fn console_headers_are_distinct_and_zero_changes_have_no_sign() {
    let kineto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto");
    let one = run(&[kineto.join("hta/triton_example").as_os_str()]);
    let planted = run(&[
        kineto.join("recorded/planted").as_os_str(),
        OsStr::new("--what-if"),
        OsStr::new("comm=0"),
        OsStr::new("--what-if"),
        OsStr::new("kernel:*gemm*=-20%"),
    ]);
    for out in [&one, &planted] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let headers = stdout.lines().filter(|l| {
            let first = l.split_whitespace().next().unwrap_or("");
            // Not the heatmap's lines (`rank 0 |...|`).
            l.starts_with("  ")
                && !l.contains(" |")
                && ["rank", "rule", "step", "count"].contains(&first)
        });
        for h in headers {
            let words: Vec<&str> = h.split_whitespace().collect();
            let mut unique = words.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), words.len(), "repeated header: {h}");
        }
        for signed_zero in [" -0.0\n", " +0.0\n", " -0.0 ", " +0.0 "] {
            assert!(!stdout.contains(signed_zero), "{signed_zero:?}:\n{stdout}");
        }
        assert_eq!(stdout.matches("GPU utilisation").count(), 1, "{stdout}");
    }
    let one = String::from_utf8_lossy(&one.stdout);
    assert!(
        one.contains("\n  rank  gpu_us  gpu_vs_median_%  compute_us  compute_vs_median_%  comm_us"),
        "{one}"
    );
    // One rank: its differences to itself are 0.
    assert!(
        one.contains("\n  #0     1.760              0.0       1.760                  0.0 "),
        "{one}"
    );
    assert!(one.contains("(the slowest rank's, over 1 step):"), "{one}");
    let planted = String::from_utf8_lossy(&planted.stdout);
    // Step 2 under comm=0: no change.
    assert!(
        planted.contains("\n  comm=0              2        29.343      29.343       0.0\n"),
        "{planted}"
    );
    assert!(
        planted.contains("(the slowest rank's, over 5 steps):"),
        "{planted}"
    );
}
