//! PyTorch profiler (Kineto) traces through tracestat, checked against
//! Meta's Holistic Trace Analysis (HTA): its numbers on every committed
//! trace are in testdata/kineto/expected/*.hta.json
//! (testdata/kineto/README.md#hta-reference).
//!
//! HTA changes the data before it measures (testdata/kineto/README.md#loading):
//! it rounds every time to whole microseconds (start up, end down) and
//! drops the last profiler step and the kernels no remaining call launched.
//! [`hta_view`] writes that view of a trace as a Kineto trace; tracestat on
//! the view gives HTA's numbers exactly where the definitions agree, and
//! where they do not, the difference is the one docs/compatibility.md#hta
//! states, checked here term by term. The `pins_*` tests then hold both
//! tools' numbers on the real traces where they differ.
//!
//! And the "done when" of the Kineto input: every committed Kineto trace
//! gives a report whose device busy time is the union of its `kernel`,
//! `gpu_memcpy` and `gpu_memset` events and whose op count is their number,
//! computed here independently from the JSON text.

use crate::common::*;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn kineto(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto")
        .join(rel)
}

/// The text of a trace file, inflated when gzipped.
fn text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

/// Every Kineto trace committed under testdata/kineto.
fn all_traces() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.to_string_lossy().ends_with(".gz")
                || p.extension().is_some_and(|e| e == "json")
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&kineto("hta"), &mut out);
    walk(&kineto("recorded"), &mut out);
    // The recording environments beside the runs are not traces.
    out.retain(|p| !p.to_string_lossy().ends_with(".env.json"));
    out.sort();
    out
}

/// The files HTA loads for a case: every `*.json` / `*.gz` directly in it.
fn case_files(case: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kineto(case))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let s = p.to_string_lossy();
            s.ends_with(".json") || s.ends_with(".gz")
        })
        .collect();
    files.sort();
    files
}

/// HTA's expected results of every case.
fn expected_cases() -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kineto("expected"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect()
}

/// Exact nanoseconds of a JSON number of microseconds, from its text.
fn us_text_to_ns(t: &str) -> i128 {
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut digits: Vec<u8> = frac.bytes().collect();
    digits.resize(4, b'0');
    let frac_ns: i128 = std::str::from_utf8(&digits[..3]).unwrap().parse().unwrap();
    let round = i128::from(digits[3] >= b'5');
    int.parse::<i128>().unwrap() * 1000 + frac_ns + round
}

const DEVICE_CATS: &[&str] = &[
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "Kernel",
    "Memcpy",
    "Memset",
];

/// One event's fields as the tests need them, with `ts`/`dur` as text.
#[derive(serde::Deserialize)]
struct RawEvent<'a> {
    ph: Option<&'a str>,
    cat: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    ts: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    dur: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize)]
struct RawTrace<'a> {
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<RawEvent<'a>>,
}

/// `(union of the device events' intervals in ns, their number)`.
fn device_union(path: &Path) -> (i128, usize) {
    let text = text(path);
    let trace: RawTrace = serde_json::from_str(&text).unwrap();
    let mut iv: Vec<(i128, i128)> = trace
        .events
        .iter()
        .filter(|e| e.ph == Some("X"))
        .filter(|e| e.cat.as_deref().is_some_and(|c| DEVICE_CATS.contains(&c)))
        .map(|e| {
            let ts = us_text_to_ns(e.ts.unwrap().get());
            (ts, ts + us_text_to_ns(e.dur.unwrap().get()))
        })
        .collect();
    let n = iv.len();
    iv.sort();
    let (mut total, mut cur): (i128, Option<(i128, i128)>) = (0, None);
    for (s, e) in iv {
        cur = match cur {
            Some((a, b)) if s <= b => Some((a, b.max(e))),
            Some((a, b)) => {
                total += b - a;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((a, b)) = cur {
        total += b - a;
    }
    (total, n)
}

#[test]
fn every_kineto_trace_reports_the_union_and_count_of_its_device_events() {
    let traces = all_traces();
    assert!(traces.len() >= 28, "{}", traces.len());
    for path in &traces {
        let (union_ns, count) = device_union(path);
        let (doc, _, _) = report(std::slice::from_ref(path), &[]);
        let all = |table: &str| -> Vec<&Value> {
            doc[table]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["device"] == "all")
                .collect()
        };
        let b = all("breakdown");
        let l = all("launches");
        assert_eq!(b.len(), 1, "{}", path.display());
        let busy_us = f(&b[0]["busy_us"]);
        assert!(
            (busy_us - union_ns as f64 / 1000.0).abs() < 1e-6,
            "{}: busy {busy_us} us, union of device events {union_ns} ns",
            path.display()
        );
        assert_eq!(
            l[0]["kernels"].as_u64().unwrap() as usize,
            count,
            "{}",
            path.display()
        );
        assert_eq!(doc["implausible"].as_array().unwrap().len(), 0);
        // The rank: `distributedInfo.rank`, which is where HTA finds it
        // too on every trace that has one (docs/compatibility.md#hta-6).
        let t = text(path);
        if t.contains("\"distributedInfo\"") && hta_rank(&t) > 0 || t.contains("\"rank\": 0") {
            assert_eq!(b[0]["rank"], hta_rank(&t).to_string(), "{}", path.display());
        }
    }
}

/// One row of HTA's view: what its analyses read of an event.
#[derive(Debug, Clone)]
struct Row {
    cat: String,
    name: String,
    /// µs after HTA's rounding.
    ts: f64,
    dur: f64,
    /// `stream` as HTA normalises it (−1 when absent or not an integer).
    stream: i64,
    correlation: i64,
}

impl Row {
    fn device(&self) -> bool {
        DEVICE_CATS.contains(&self.cat.as_str())
    }
    /// A GPU row of HTA's temporal and overlap analyses.
    fn gpu(&self) -> bool {
        self.stream != -1
    }
    /// HTA's GPU kernel of the load-time filter.
    fn gpu_kernel(&self) -> bool {
        (self.stream >= 0 && self.correlation >= 0)
            || self.name == "Event Sync"
            || self.name == "Context Sync"
    }
}

/// HTA's kernel class (testdata/kineto/README.md#kernel-classes-by-name-only).
fn hta_class(name: &str) -> &'static str {
    let nccl = name.starts_with("nccl") && name.contains("Kernel");
    if nccl {
        "COMMUNICATION"
    } else if name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma") {
        "MEMORY"
    } else if name.contains("Memcpy") || name.contains("Sync") {
        "OTHER"
    } else {
        "COMPUTATION"
    }
}

/// The rank HTA gives a file: the first `"rank":` followed by blanks and
/// digits in its text, else 0.
fn hta_rank(text: &str) -> u32 {
    let mut rest = text;
    while let Some(i) = rest.find("\"rank\":") {
        rest = &rest[i + 7..];
        let blanks = rest.len() - rest.trim_start().len();
        let digits: String = rest[blanks..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if blanks > 0 && !digits.is_empty() {
            return digits.parse().unwrap();
        }
    }
    0
}

/// HTA's view of one case: per file (in `files` order) its rank and rows,
/// written as Kineto traces into `dir` (testdata/kineto/README.md#loading:
/// times rounded when any `ts` is fractional, rows without `dur` or `cat`
/// and the `Trace` span dropped, and with two or more step names the CPU
/// rows from the last step's start on and the GPU kernels no remaining row
/// launched).
fn hta_view(files: &[PathBuf], dir: &Path) -> Vec<(PathBuf, u32, Vec<Row>)> {
    let docs: Vec<(Value, u32)> = files
        .iter()
        .map(|p| {
            let t = text(p);
            (serde_json::from_str(&t).unwrap(), hta_rank(&t))
        })
        .collect();
    let mut steps = BTreeSet::new();
    let kept = |e: &Value| {
        e.get("dur").is_some_and(|d| !d.is_null())
            && e.get("cat").is_some_and(|c| !c.is_null())
            && e["cat"] != "Trace"
    };
    for (d, _) in &docs {
        for e in d["traceEvents"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or("");
            if kept(e) && name.contains("ProfilerStep") {
                steps.insert(name.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for (i, (doc, rank)) in docs.iter().enumerate() {
        let events = doc["traceEvents"].as_array().unwrap();
        let round = events.iter().any(|e| e["ts"].is_f64());
        let mut rows: Vec<(Value, Row)> = Vec::new();
        for e in events.iter().filter(|e| kept(e)) {
            let ts = e["ts"].as_f64().unwrap();
            let dur = e["dur"].as_f64().unwrap();
            let (ts, dur) = if round {
                let end = ts + dur;
                (ts.ceil(), end.floor() - ts.ceil())
            } else {
                (ts, dur)
            };
            let args = &e["args"];
            let stream = match &args["stream"] {
                Value::Number(n) => n.as_i64().unwrap_or(-1),
                Value::String(s) => s.trim().parse().unwrap_or(-1),
                _ => -1,
            };
            let row = Row {
                cat: e["cat"].as_str().unwrap_or("").to_string(),
                name: e["name"].as_str().unwrap_or("").to_string(),
                ts,
                dur,
                stream,
                correlation: args["correlation"].as_i64().unwrap_or(-1),
            };
            let mut e = e.clone();
            e["ts"] = json!(ts as i64);
            e["dur"] = json!(dur as i64);
            if !round {
                e["ts"] = json!(ts);
                e["dur"] = json!(dur);
            }
            rows.push((e, row));
        }
        if steps.len() >= 2 {
            let last = rows
                .iter()
                .filter(|(_, r)| !r.gpu_kernel() && steps.contains(&r.name))
                .map(|(_, r)| r.ts)
                .fold(f64::NAN, f64::max);
            let cpu: Vec<(Value, Row)> = rows
                .iter()
                .filter(|(_, r)| !r.gpu_kernel() && r.ts < last)
                .cloned()
                .collect();
            let launched: BTreeSet<i64> = cpu.iter().map(|(_, r)| r.correlation).collect();
            let mut gpu: Vec<(Value, Row)> = rows
                .into_iter()
                .filter(|(_, r)| r.gpu_kernel() && launched.contains(&r.correlation))
                .collect();
            gpu.extend(cpu);
            rows = gpu;
        }
        let events: Vec<&Value> = rows.iter().map(|(e, _)| e).collect();
        let path = dir.join(format!("view{i}.json"));
        let view = json!({"distributedInfo": {"rank": rank}, "traceEvents": events});
        std::fs::write(&path, serde_json::to_vec(&view).unwrap()).unwrap();
        out.push((path, *rank, rows.into_iter().map(|(_, r)| r).collect()));
    }
    out
}

/// The rows of `table` for device "all", by rank label.
fn by_rank<'a>(doc: &'a Value, table: &str) -> HashMap<String, &'a Value> {
    doc[table]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["device"] == "all")
        .map(|r| (r["rank"].as_str().unwrap().to_string(), r))
        .collect()
}

/// Device rows that HTA's rounding turned into `[t, t − 1]` (kernels
/// shorter than a microsecond that straddle none): HTA's union counts each
/// that stands alone as −1 µs; tracestat leaves them out as implausible.
fn inverted(rows: &[Row], class: Option<&str>) -> f64 {
    rows.iter()
        .filter(|r| r.device() && r.dur < 0.0)
        .filter(|r| class.is_none_or(|c| hta_class(&r.name) == c))
        .count() as f64
}

/// GPU rows of HTA's that are no device activity of tracestat's: the
/// `cuda_sync` events and any other event with an integer `stream` arg.
fn foreign_gpu_rows(rows: &[Row]) -> usize {
    rows.iter().filter(|r| r.gpu() && !r.device()).count()
}

/// `ours` equals `hta` up to the inverted rows (`ours - hta` is between 0
/// and their number).
fn up_to_inverted(ours: f64, hta: f64, inverted: f64, what: &str) {
    let d = ours - hta;
    assert!(
        (-1e-6..=inverted + 1e-6).contains(&d),
        "{what}: tracestat {ours}, HTA {hta}, {inverted} inverted rows"
    );
    if inverted == 0.0 {
        close(ours, hta, what);
    }
}

#[test]
fn hta_view_gives_htas_numbers_where_the_definitions_agree() {
    let mut checked = BTreeMap::new();
    for exp in expected_cases() {
        let case = exp["case"].as_str().unwrap().to_string();
        if exp["temporal_breakdown"].get("error").is_some() {
            // CPU-only traces: HTA fails; the done-when test covers them.
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let view = hta_view(&case_files(&case), dir.path());
        let paths: Vec<PathBuf> = view.iter().map(|v| v.0.clone()).collect();
        let (doc, _, _) = report(&paths, &[]);
        let rows: HashMap<String, &Vec<Row>> =
            view.iter().map(|v| (v.1.to_string(), &v.2)).collect();
        let bd = by_rank(&doc, "breakdown");
        let mut n = 0;
        n += temporal(&case, &exp, &bd, &rows);
        n += overlap(&case, &exp, &bd);
        n += kernel_breakdown(&case, &exp, &doc, &bd, &rows);
        n += idle_time(&case, &exp, &doc, &rows);
        n += launch_stats(&case, &exp, &doc, &rows);
        checked.insert(case, n);
    }
    // Every GPU case was compared, on every analysis: HTA's 17, our two
    // 4-rank recordings, the seven 2-rank re-runs, the two one-rank
    // recordings and the 2-rank one of the findings.
    assert_eq!(checked.len(), 29, "{checked:?}");
    assert!(checked.values().all(|&n| n >= 5), "{checked:?}");
}

/// Temporal breakdown: busy (`kernel_time − idle_time`) and compute time.
fn temporal(
    case: &str,
    exp: &Value,
    bd: &HashMap<String, &Value>,
    rows: &HashMap<String, &Vec<Row>>,
) -> usize {
    for t in exp["temporal_breakdown"].as_array().unwrap() {
        let rank = t["rank"].to_string();
        let (b, r) = (bd[&rank], rows[&rank]);
        let hta_busy = f(&t["kernel_time(us)"]) - f(&t["idle_time(us)"]);
        let hta_compute = f(&t["compute_time(us)"]);
        let (busy, compute) = (f(&b["busy_us"]), f(&b["compute_us"]));
        let what = format!("{case} rank {rank}");
        if foreign_gpu_rows(r) > 0 {
            // HTA counts `cuda_sync` rows (and a `cpu_op` with a `stream`
            // arg) as GPU time, some as computation: docs/compatibility.md#hta.
            assert!(busy < hta_busy && compute <= hta_compute, "{what}");
            continue;
        }
        up_to_inverted(busy, hta_busy, inverted(r, None), &format!("{what} busy"));
        up_to_inverted(
            compute,
            hta_compute,
            inverted(r, Some("COMPUTATION")),
            &format!("{what} compute"),
        );
    }
    1
}

/// Communication–computation overlap, % of communication time.
fn overlap(case: &str, exp: &Value, bd: &HashMap<String, &Value>) -> usize {
    for o in exp["comm_comp_overlap"].as_array().unwrap() {
        let b = bd[&o["rank"].to_string()];
        let comm = f(&b["communication_total_us"]);
        match o["comp_comm_overlap_pctg"].as_f64() {
            None => assert_eq!(comm, 0.0, "{case}"),
            Some(p) => {
                let ours = (100.0 * f(&b["overlap_us"]) / comm * 100.0).round() / 100.0;
                close(ours, p, &format!("{case} overlap"));
                close(
                    f(&b["overlap_pct"]),
                    100.0 * f(&b["overlap_us"]) / comm,
                    case,
                );
            }
        }
    }
    1
}

/// Kernel breakdown: per kernel name the sum and the longest (over all
/// ranks), per class the time by HTA's sweep.
fn kernel_breakdown(
    case: &str,
    exp: &Value,
    doc: &Value,
    bd: &HashMap<String, &Value>,
    rows: &HashMap<String, &Vec<Row>>,
) -> usize {
    let all_rows: Vec<Row> = rows.values().flat_map(|r| r.iter().cloned()).collect();
    let mut hta: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for k in exp["kernel_breakdown"]["by_kernel"].as_array().unwrap() {
        let e = hta
            .entry(k["name"].as_str().unwrap().to_string())
            .or_insert((0.0, f64::MIN));
        e.0 += f(&k["sum (us)"]);
        e.1 = e.1.max(f(&k["max (us)"]));
    }
    let ours: BTreeMap<String, (f64, f64)> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let name = k["name"].as_str().unwrap().to_string();
            (name, (f(&k["total_us"]), f(&k["max_us"])))
        })
        .collect();
    for (name, &(hsum, hmax)) in &hta {
        let Some(&(osum, omax)) = ours.get(name) else {
            // HTA's foreign GPU rows (`Stream Wait Event`, a `cpu_op` with
            // a stream) are no device activity of ours, and rows that the
            // rounding left without length are implausible to tracestat.
            let of_name = || all_rows.iter().filter(|r| &r.name == name);
            assert!(
                of_name().any(|r| r.gpu() && !r.device()) || of_name().all(|r| r.dur <= 0.0),
                "{case}: {name} missing"
            );
            continue;
        };
        let foreign = all_rows
            .iter()
            .any(|r| &r.name == name && !r.device() && r.gpu());
        if foreign {
            assert!(osum <= hsum, "{case}: {name}");
            continue;
        }
        let inv = all_rows
            .iter()
            .filter(|r| &r.name == name && r.device() && r.dur < 0.0)
            .count() as f64;
        assert!(
            (osum - hsum - inv).abs() < 1e-6,
            "{case}: {name}: sum {osum} against HTA's {hsum} with {inv} inverted rows"
        );
        if hmax > 0.0 {
            close(omax, hmax, &format!("{case}: {name} max"));
        }
    }
    assert_eq!(
        hta.keys().filter(|n| ours.contains_key(*n)).count(),
        ours.len(),
        "{case}: kernels of ours that HTA does not list"
    );
    // By class: ours are exclusive with precedence compute > communication
    // > memory; HTA's sweep names the overlaps: the sums line up as below.
    let mut by_type: HashMap<String, f64> = HashMap::new();
    for t in exp["kernel_breakdown"]["by_type"].as_array().unwrap() {
        by_type.insert(t["kernel_type"].as_str().unwrap().to_string(), f(&t["sum"]));
    }
    let sum = |prefix: &str| -> f64 {
        by_type
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    };
    let total = |field: &str| -> f64 { bd.values().map(|b| f(&b[field])).sum() };
    let foreign: usize = rows.values().map(|r| foreign_gpu_rows(r)).sum();
    let (hc, hm, hmem) = (sum("COMPUTATION"), sum("COMMUNICATION"), sum("MEMORY"));
    let (oc, om, omem) = (
        total("compute_us"),
        total("communication_us"),
        total("memory_us"),
    );
    if foreign > 0 {
        assert!(oc <= hc && om == hm && omem == hmem, "{case}");
    } else {
        // An inverted row of one class moves HTA's sweep by 1 µs in
        // whichever class runs at that moment.
        let inv = inverted(&all_rows, None);
        for (o, h, class) in [
            (oc, hc, "COMPUTATION"),
            (om, hm, "COMMUNICATION"),
            (omem, hmem, "MEMORY"),
        ] {
            assert!(
                (o - h).abs() <= inv + 1e-6,
                "{case} {class}: {o} against {h}, {inv} inverted"
            );
        }
    }
    1
}

/// Idle time: HTA sums per stream, tracestat per device (the union of its
/// streams): equal where a rank has one stream.
fn idle_time(case: &str, exp: &Value, doc: &Value, rows: &HashMap<String, &Vec<Row>>) -> usize {
    let mut per_rank: BTreeMap<String, (f64, BTreeSet<i64>, f64)> = BTreeMap::new();
    let it = &exp["idle_time_breakdown"];
    for r in it["by_category"].as_array().unwrap() {
        let e = per_rank.entry(r["rank"].to_string()).or_default();
        e.0 += f(&r["idle_time"]);
        e.1.insert(r["stream"].as_i64().unwrap());
    }
    for r in it["interval_stats"].as_array().unwrap() {
        per_rank.entry(r["rank"].to_string()).or_default().2 += f(&r["count"]);
    }
    let gaps = by_rank(doc, "idle_gaps");
    for (rank, (hta_idle, streams, hta_count)) in per_rank {
        let g = gaps[&rank];
        let (idle, count) = (f(&g["total_us"]), f(&g["count"]));
        let what = format!("{case} rank {rank}");
        let overlapping_on_a_stream = {
            let mut dev: Vec<&Row> = rows[&rank].iter().filter(|r| r.device()).collect();
            dev.sort_by(|a, b| (a.stream, a.ts).partial_cmp(&(b.stream, b.ts)).unwrap());
            dev.windows(2)
                .any(|w| w[0].stream == w[1].stream && w[1].ts < w[0].ts + w[0].dur)
        };
        // Several streams: HTA's per-stream gaps and the device's are
        // different quantities (pinned in
        // `pins_idle_time_per_stream_against_per_device`).
        if streams.len() == 1 && !overlapping_on_a_stream {
            // A row HTA's rounding inverts (a copy of under 1 us: start
            // rounded up, end down) ends 1 us before it starts, so the
            // gap after it is up to 1 us longer in HTA's sum.
            let inv = inverted(rows[&rank], None);
            up_to_inverted(hta_idle, idle, inv, &format!("{what} idle"));
            // HTA also counts the gaps of zero length.
            assert!(count <= hta_count, "{what}: {count} gaps, HTA {hta_count}");
        }
    }
    1
}

/// HTA's launch calls (testdata/kineto/README.md#kernel-launch-statistics).
const HTA_LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
];

/// Kernel launches: tracestat counts every device activity linked to a
/// call and measures from the call's start; HTA pairs four CUDA calls with
/// GPU rows and measures from the call's end, clipped at 0: both are
/// recomputed from the view and compared.
fn launch_stats(case: &str, exp: &Value, doc: &Value, rows: &HashMap<String, &Vec<Row>>) -> usize {
    let la = by_rank(doc, "launches");
    for (rank, s) in exp["kernel_launch_stats"].as_object().unwrap() {
        let r = rows[rank];
        let l = la[rank];
        // Ours: device rows of positive length linked to any call.
        let calls: HashMap<i64, &Row> = r
            .iter()
            .filter(|x| !x.gpu_kernel() && x.correlation >= 0 && !x.device())
            .map(|x| (x.correlation, x))
            .collect();
        let linked: Vec<(f64, &Row)> = r
            .iter()
            .filter(|k| k.device() && k.dur > 0.0)
            .filter_map(|k| calls.get(&k.correlation).map(|c| (k.ts - c.ts, *c)))
            .collect();
        assert_eq!(
            l["with_flow"].as_u64().unwrap() as usize,
            linked.len(),
            "{case} rank {rank}"
        );
        if !linked.is_empty() {
            let sum: f64 = linked.iter().map(|x| x.0).sum();
            near(
                f(&l["latency_mean_us"]) * linked.len() as f64,
                sum,
                1e-9,
                &format!("{case} rank {rank} latency"),
            );
        }
        // HTA's: its calls and the GPU rows with their correlation.
        let ids: BTreeSet<i64> = r
            .iter()
            .filter(|x| HTA_LAUNCHES.contains(&x.name.as_str()))
            .map(|x| x.correlation)
            .collect();
        let cpu: Vec<&Row> = r
            .iter()
            .filter(|x| x.stream == -1 && ids.contains(&x.correlation))
            .collect();
        let mut pairs = 0usize;
        let mut total = 0.0;
        for g in r
            .iter()
            .filter(|x| x.stream != -1 && ids.contains(&x.correlation))
        {
            for c in cpu.iter().filter(|c| c.correlation == g.correlation) {
                pairs += 1;
                total += c.dur + (g.ts - c.ts - c.dur).max(0.0);
            }
        }
        let launches = s["launches"].as_u64().unwrap_or(0) as usize;
        assert_eq!(launches, pairs, "{case} rank {rank}: HTA launches");
        if pairs > 0 {
            let hta_total = f(&s["cpu_duration"]["sum"]) + f(&s["launch_delay"]["sum"]);
            close(hta_total, total, &format!("{case} rank {rank}: HTA's sum"));
        }
    }
    1
}

/// The rows of a real (not HTA-viewed) report.
fn real(files: &[PathBuf]) -> Value {
    report(files, &[]).0
}

/// The device-"all" row of a one-rank report's `table`.
fn only<'a>(doc: &'a Value, table: &str) -> &'a Value {
    let rows = by_rank(doc, table);
    assert_eq!(rows.len(), 1);
    rows.into_values().next().unwrap()
}

fn hta(case: &str) -> Value {
    let name = format!("{}.hta.json", case.replace('/', "."));
    serde_json::from_slice(&std::fs::read(kineto("expected").join(name)).unwrap()).unwrap()
}

#[test]
fn pins_rounding_and_the_dropped_last_step() {
    // recorded/planted, rank 0: tracestat measures the whole trace in ns;
    // HTA rounds to µs and drops step #6 (testdata/kineto/README.md#loading).
    let doc = real(&case_files("recorded/planted"));
    let b = by_rank(&doc, "breakdown");
    close(f(&b["0"]["busy_us"]), 120226.494, "ours");
    let t = &hta("recorded/planted")["temporal_breakdown"][0];
    close(
        f(&t["kernel_time(us)"]) - f(&t["idle_time(us)"]),
        106850.0,
        "HTA",
    );
    // In HTA's view tracestat finds 4 µs more: of the five kernels that
    // the rounding inverted to [t, t − 1], four stand alone, and HTA counts
    // each of those as −1 µs.
    let dir = tempfile::tempdir().unwrap();
    let view = hta_view(&case_files("recorded/planted"), dir.path());
    let paths: Vec<PathBuf> = view.iter().map(|v| v.0.clone()).collect();
    let v = report(&paths, &[]).0;
    close(
        f(&by_rank(&v, "breakdown")["0"]["busy_us"]),
        106854.0,
        "view",
    );
    assert_eq!(inverted(&view[0].2, None), 5.0);
}

#[test]
fn pins_htas_gpu_rows_that_are_no_device_work() {
    // triton_example: a `cpu_op` carries `stream`: HTA counts its 94 µs as
    // compute, tracestat the 1.76 µs Triton kernel.
    let doc = real(&case_files("hta/triton_example"));
    close(f(&only(&doc, "breakdown")["compute_us"]), 1.76, "ours");
    let t = &hta("hta/triton_example")["temporal_breakdown"][0];
    close(f(&t["compute_time(us)"]), 94.0, "HTA");
    // alexnet: 41 `cuda_sync` rows; `Stream Wait Event` is computation to HTA.
    let t = &hta("hta/critical_path/alexnet")["temporal_breakdown"][0];
    close(f(&t["compute_time(us)"]), 10637.0, "HTA");
    let doc = real(&case_files("hta/critical_path/alexnet"));
    let ours = f(&only(&doc, "breakdown")["compute_us"]);
    assert!((10630.0..10640.0).contains(&ours), "{ours}");
}

#[test]
fn pins_idle_time_per_stream_against_per_device() {
    // recorded/planted rank 0, streams 7 and 19: HTA sums the gaps of each
    // stream, tracestat the gaps of the device (both streams merged).
    let doc = real(&case_files("recorded/planted"));
    let g = by_rank(&doc, "idle_gaps");
    close(f(&g["0"]["total_us"]), 9835.948, "ours");
    let hta_idle: f64 = hta("recorded/planted")["idle_time_breakdown"]["by_category"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["rank"] == 0)
        .map(|r| f(&r["idle_time"]))
        .sum();
    close(hta_idle, 98255.0, "HTA");
}

#[test]
fn pins_launches_htas_list_leaves_out() {
    // amd_trace: HIP launches; HTA counts only four CUDA calls.
    let doc = real(&case_files("hta/amd_trace"));
    assert_eq!(only(&doc, "launches")["with_flow"], 16);
    assert_eq!(
        hta("hta/amd_trace")["kernel_launch_stats"]["0"]["launches"],
        0
    );
    // trace_diff/test: NCCL and other kernels through driver calls.
    let doc = real(&case_files("hta/trace_diff/test"));
    let l = by_rank(&doc, "launches");
    assert_eq!(
        (l["1"]["kernels"].as_u64(), l["1"]["with_flow"].as_u64()),
        (Some(15632), Some(15018))
    );
    assert_eq!(
        hta("hta/trace_diff/test")["kernel_launch_stats"]["1"]["launches"],
        8310
    );
}

#[test]
fn the_planted_straggler_arrives_last_at_the_all_reduce_of_step_3() {
    // recorded/README.md: rank 1 sleeps 50 ms right before the first
    // all-reduce of ProfilerStep#3. NCCL's host calls return at once: the
    // arrival is the all-reduce kernel's start (docs/tracestat.md#collectives).
    let (doc, stdout, _) = report(&case_files("recorded/planted"), &[]);
    let instances = doc["collectives"].as_array().unwrap();
    assert_eq!(instances.len(), 15);
    assert!(instances.iter().all(|c| c["consistent"] == true));
    let worst = instances
        .iter()
        .max_by(|a, b| f(&a["skew_us"]).total_cmp(&f(&b["skew_us"])))
        .unwrap();
    assert_eq!(worst["last_rank"], "1");
    assert_eq!(worst["name"], "allreduce");
    assert!(f(&worst["skew_us"]) > 45_000.0, "{worst}");
    // It is the 3rd all-reduce of 4196352 floats, and rank 1's 3rd such
    // `record_param_comms` lies inside its ProfilerStep#3.
    assert_eq!(
        (worst["bytes"].as_u64(), worst["occurrence"].as_u64()),
        (Some(16785408), Some(3))
    );
    let trace: Value =
        serde_json::from_str(&text(&kineto("recorded/planted/rank1.pt.trace.json.gz"))).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let step = events
        .iter()
        .find(|e| e["name"] == "ProfilerStep#3")
        .unwrap();
    let (s0, s1) = (f(&step["ts"]), f(&step["ts"]) + f(&step["dur"]));
    let mut calls: Vec<f64> = events
        .iter()
        .filter(|e| e["name"] == "record_param_comms" && e["args"]["In msg nelems"] == 4196352)
        .map(|e| f(&e["ts"]))
        .collect();
    calls.sort_by(f64::total_cmp);
    assert!(s0 <= calls[2] && calls[2] <= s1);
    assert!(
        stdout.contains("straggler: rank 1: arrived last at"),
        "{stdout}"
    );
    // Rank 2's slow matmul in step #5 makes it the last at the 7th.
    let slow = instances
        .iter()
        .find(|c| c["occurrence"] == 7 && c["bytes"] == 16785408)
        .unwrap();
    assert_eq!(slow["last_rank"], "2");
    assert!(f(&slow["skew_us"]) > 15_000.0, "{slow}");
    // The clean run has no such wait.
    let (clean, _, _) = report(&case_files("recorded/clean"), &[]);
    let max_skew = clean["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| f(&c["skew_us"]))
        .fold(0.0, f64::max);
    assert!(max_skew < 5_000.0, "{max_skew}");
}

#[test]
fn device_rows_are_labelled_from_device_properties() {
    // One rank driving two GPUs: the device rows take their names from
    // `deviceProperties` (docs/formats.md#kineto-json-envelope).
    let trace = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}, {"id": 1, "name": "NVIDIA H100"}],
"distributedInfo": {"rank": 5}, "traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 10.0, "dur": 2.0, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 13.0, "dur": 2.0, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 20.0, "dur": 5.0, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "b", "pid": 1, "tid": 7, "ts": 21.0, "dur": 3.0, "args": {"correlation": 2}}
]}"#;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pt.trace.json");
    std::fs::write(&p, trace).unwrap();
    let (doc, _, _) = report(&[p], &[]);
    let devices: Vec<(&str, f64)> = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["device"].as_str().unwrap(), f(&b["busy_us"])))
        .collect();
    assert_eq!(
        devices,
        [
            ("all", 5.0),
            ("GPU 0: NVIDIA H200", 5.0),
            ("GPU 1: NVIDIA H100", 3.0)
        ]
    );
    assert_eq!(doc["breakdown"][0]["rank"], "5");
    // Launch latency from the call's start: 10 and 8 µs.
    close(
        f(&only(&doc, "launches")["latency_mean_us"]),
        9.0,
        "latency",
    );
}

#[test]
fn directories_gzip_and_partials_of_kineto_traces() {
    // A directory holds `*.pt.trace.json.gz`: found by the name's end,
    // read by content; --partial/--combine give the one-run report.
    let dir = kineto("recorded/planted");
    let (whole, _, _) = report(std::slice::from_ref(&dir), &[]);
    let (files, _, _) = report(&case_files("recorded/planted"), &[]);
    assert_eq!(whole["breakdown"], files["breakdown"]);
    assert_eq!(whole["collectives"], files["collectives"]);
    let tmp = tempfile::tempdir().unwrap();
    let mut partials = Vec::new();
    for (i, half) in case_files("recorded/planted").chunks(2).enumerate() {
        let part = tmp.path().join(format!("p{i}.json"));
        let mut args: Vec<&std::ffi::OsStr> = half.iter().map(|p| p.as_os_str()).collect();
        args.push("--partial".as_ref());
        args.push(part.as_os_str());
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        partials.push(part);
    }
    let (combined, _, _) = report(&partials, &["--combine"]);
    assert_eq!(combined["breakdown"], files["breakdown"]);
    assert_eq!(combined["collectives"], files["collectives"]);
}

#[test]
fn bad_kineto_input_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let good = text(&kineto("hta/trace_compare/base/base.json.gz"));
    let cases: [(&str, Vec<u8>, &str); 3] = [
        // A syntax error inside an event: its line.
        (
            "broken.json",
            good.replacen("\"ph\": \"X\",", "\"ph\": \"X\" ", 1)
                .into_bytes(),
            "invalid JSON",
        ),
        // A Kineto envelope without events.
        (
            "no_events.json",
            br#"{"schemaVersion": 1, "deviceProperties": []}"#.to_vec(),
            "not a trace: no traceEvents array",
        ),
        // gzip of something else.
        (
            "other.json.gz",
            {
                use std::io::Write;
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(b"%PDF-1.4 not a trace").unwrap();
                e.finish().unwrap()
            },
            "not a trace",
        ),
    ];
    for (name, bytes, problem) in cases {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = run(&[p.as_os_str()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("tracestat: {}", p.display())),
            "{stderr}"
        );
        assert!(stderr.contains(problem), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn host_ranges_project_onto_kernels_through_the_launching_call() {
    // `cpu_op` -> launching call (same thread, inside it) -> kernel (same
    // `correlation`): the host-range table fills, with or without flow
    // events in the file.
    let (doc, _, _) = report(&case_files("recorded/planted"), &[]);
    let ranges = doc["host_ranges"].as_array().unwrap();
    let named = |n: &str| {
        ranges
            .iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    // Every NCCL kernel whose launch (`cuLaunchKernelEx` inside
    // nccl:all_reduce) is in the trace has nccl:all_reduce as its
    // innermost range; counted here from the JSON (6 of the 66 were
    // launched before the profiling window).
    let (mut linked, mut linked_ns) = (0u64, 0i128);
    for path in case_files("recorded/planted") {
        let trace: Value = serde_json::from_str(&text(&path)).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let calls: BTreeSet<u64> = events
            .iter()
            .filter(|e| e["cat"] == "cuda_driver" || e["cat"] == "cuda_runtime")
            .filter_map(|e| e["args"]["correlation"].as_u64())
            .collect();
        for k in events.iter().filter(|e| e["cat"] == "kernel") {
            let nccl = k["name"].as_str().unwrap().starts_with("ncclDevKernel");
            if nccl
                && k["args"]["correlation"]
                    .as_u64()
                    .is_some_and(|c| calls.contains(&c))
            {
                linked += 1;
                linked_ns += us_text_to_ns(&k["dur"].to_string());
            }
        }
    }
    let nccl = named("nccl:all_reduce");
    assert_eq!(nccl["self_launches"].as_u64(), Some(linked));
    assert_eq!(linked, 60);
    close(
        f(&nccl["gpu_self_us"]),
        linked_ns as f64 / 1000.0,
        "NCCL time",
    );
    assert!(f(&named("aten::mm")["gpu_self_us"]) > 0.0);
    // Steps are ranges of the main thread: the launches made there (the
    // backward pass launches from the autograd thread).
    assert!(named("ProfilerStep#3")["launches"].as_u64().unwrap() > 0);
    // HTA's sampled ranks carry no flow event at all: the same links.
    let (sampled, _, _) = report(&case_files("hta/trace_filter"), &[]);
    let launches = by_rank(&sampled, "launches");
    assert_eq!(launches["0"]["with_flow"], launches["0"]["kernels"]);
    assert!(sampled["host_ranges"].as_array().unwrap().len() > 50);
}

/// `(cat, id)` of the flow events of `events` whose rank `rank_of` tells,
/// with the ranks each pair appears in.
fn flow_ranks(
    events: &[Value],
    rank_of: impl Fn(&Value) -> Option<String>,
) -> BTreeMap<(String, u64), BTreeSet<String>> {
    let mut flows: BTreeMap<(String, u64), BTreeSet<String>> = BTreeMap::new();
    for e in events {
        if matches!(e["ph"].as_str(), Some("s" | "t" | "f")) {
            let key = (
                e["cat"].as_str().unwrap().to_string(),
                e["id"].as_u64().unwrap(),
            );
            flows.entry(key).or_default().extend(rank_of(e));
        }
    }
    flows
}

/// `--annotate OUT.json` on several PyTorch profiler ranks keeps them
/// apart as mergetrace's merge does (docs/tracestat.md#annotated-trace):
/// each rank's processes and flow ids its own (the files all number their
/// GPUs 0..15 and restart their `ac2g`/`fwdbwd` ids), every process named
/// with its rank before its first event, the clock base stated; tracestat
/// reads the annotated trace back as the same four ranks.
#[test]
fn annotated_kineto_ranks_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("annotated.json");
    let (files, _, stderr) = report(
        &case_files("recorded/planted"),
        &["--annotate", out.to_str().unwrap()],
    );
    assert!(stderr.is_empty(), "{stderr}");
    // The inputs share flow ids across ranks: what the annotated trace
    // must not.
    let inputs: Vec<Value> = case_files("recorded/planted")
        .iter()
        .map(|p| serde_json::from_str(&text(p)).unwrap())
        .collect();
    let input_events: Vec<Value> = inputs
        .iter()
        .enumerate()
        .flat_map(|(r, d)| {
            d["traceEvents"].as_array().unwrap().iter().map(move |e| {
                let mut e = e.clone();
                e["rank"] = Value::from(r.to_string());
                e
            })
        })
        .collect();
    let shared = |flows: &BTreeMap<(String, u64), BTreeSet<String>>| {
        flows.values().filter(|ranks| ranks.len() > 1).count()
    };
    let in_flows = flow_ranks(&input_events, |e| e["rank"].as_str().map(String::from));
    assert!(shared(&in_flows) > 100, "{}", shared(&in_flows));

    let trace: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(
        trace["baseTimeNanoseconds"],
        inputs[0]["baseTimeNanoseconds"]
    );
    let events = trace["traceEvents"].as_array().unwrap();
    let added = |e: &Value| e["pid"].as_u64().is_some_and(|p| p >= 0x7ac0_0000);
    // Each input process is named with its rank before its events (or
    // first of all, a process without events), and by one rank only.
    let mut rank_of_pid: BTreeMap<u64, String> = BTreeMap::new();
    let mut from_inputs = 0;
    for e in events.iter().filter(|e| !added(e)) {
        let pid = e["pid"].as_u64().unwrap();
        if e["ph"] == "M" && e["name"] == "process_name" {
            let name = e["args"]["name"].as_str().unwrap();
            let rank: String = name.split(' ').take(2).collect::<Vec<_>>().join(" ");
            assert!(rank.starts_with("rank "), "{name}");
            let known = rank_of_pid.entry(pid).or_insert_with(|| rank.clone());
            assert_eq!(*known, rank, "pid {pid} named by two ranks");
            if e.get("ts").is_none() {
                continue;
            }
        }
        assert!(rank_of_pid.contains_key(&pid), "pid {pid} before its name");
        from_inputs += 1;
    }
    assert_eq!(from_inputs, input_events.len(), "every input event, once");
    let ranks: BTreeSet<&String> = rank_of_pid.values().collect();
    assert_eq!(ranks.len(), 4);
    // 16 GPUs per rank, each a process of its own.
    let gpus = events
        .iter()
        .filter(|e| e["name"] == "process_labels" && !added(e))
        .filter(|e| {
            e["args"]["labels"]
                .as_str()
                .unwrap_or("")
                .starts_with("GPU")
        })
        .map(|e| e["pid"].as_u64().unwrap())
        .collect::<BTreeSet<u64>>();
    assert_eq!(gpus.len(), 4 * 16);
    let out_flows = flow_ranks(events, |e| {
        rank_of_pid.get(&e["pid"].as_u64().unwrap()).cloned()
    });
    assert_eq!(
        out_flows.len(),
        in_flows.values().map(BTreeSet::len).sum::<usize>()
    );
    assert_eq!(shared(&out_flows), 0, "a flow id in two ranks");

    // Read back: the four ranks of the files, with their numbers.
    let (again, _, stderr) = report(&[out], &[]);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(again["ranks"], 4);
    for table in ["breakdown", "launches"] {
        let rows = |doc: &Value| -> Vec<(Value, Value, Value)> {
            doc[table]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r["rank"].clone(),
                        r["busy_us"].clone(),
                        r["kernels"].clone(),
                    )
                })
                .collect()
        };
        assert_eq!(rows(&again), rows(&files), "{table}");
    }
    assert_eq!(again["collectives"], files["collectives"]);
}

/// A `baseTimeNanoseconds` or `distributedInfo.rank` that is no JSON
/// integer in range is ignored with one warning naming it, gzipped or not:
/// the report is that of the file without the member (a rank `"1"` is no
/// rank 1, the file is `#0`), as mergetrace reads it
/// (docs/formats.md#kineto-json-reading).
#[test]
fn an_unusable_clock_base_or_rank_is_one_warning_and_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let text = text(&kineto("recorded/clean/rank1.pt.trace.json.gz"));
    let base = "\"baseTimeNanoseconds\": 1790857026000000000,";
    let rank = "\"rank\": 1, \"world_size\"";
    assert!(text.contains(base) && text.contains(rank));
    // The report of `text` as `name` (its path left out), and the warnings.
    let report_of = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        let bytes = if name.ends_with(".gz") {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap()
        } else {
            text.as_bytes().to_vec()
        };
        std::fs::write(&p, bytes).unwrap();
        let (doc, _, err) = report(std::slice::from_ref(&p), &["-q"]);
        let doc = doc.to_string().replace(&p.display().to_string(), "FILE");
        (doc, err.replace(&p.display().to_string(), "FILE"))
    };
    let (without_base, err) = report_of("r.json", &text.replace(base, ""));
    assert_eq!(err, "");
    let (without_rank, err) = report_of("r.json", &text.replace(rank, "\"world_size\""));
    assert_eq!(err, "");
    assert!(without_rank.contains("\"rank\":\"#0\""));
    for name in ["r.json", "r.json.gz"] {
        for (value, shown) in [
            (
                "\"1790857026000000000\"",
                "`\"1790857026000000000\"` (a string)",
            ),
            ("-1790857026000000000", "`-1790857026000000000`"),
            ("1.5", "`1.5`"),
            ("18446744073709551615", "`18446744073709551615`"),
        ] {
            let bad = text.replace(base, &format!("\"baseTimeNanoseconds\": {value},"));
            let (doc, err) = report_of(name, &bad);
            assert_eq!(
                err,
                format!(
                    "tracestat: warning: FILE: baseTimeNanoseconds {shown} is not a whole number \
                     of nanoseconds from 0 to 9223372036854775807; ignored: times are read as if \
                     the file had none\n"
                )
            );
            assert!(doc == without_base, "{name} {value}");
        }
        for (value, shown) in [
            ("\"1\"", "`\"1\"` (a string)"),
            ("-1", "`-1`"),
            ("4294967296", "`4294967296`"),
            ("[1]", "(an array)"),
        ] {
            let bad = text.replace(rank, &format!("\"rank\": {value}, \"world_size\""));
            let (doc, err) = report_of(name, &bad);
            assert_eq!(
                err,
                format!(
                    "tracestat: warning: FILE: distributedInfo.rank {shown} is not a whole \
                     number from 0 to 4294967295; ignored\n"
                )
            );
            assert!(doc == without_rank, "{name} {value}");
        }
    }
}
