//! The JSON and the `.pftrace` form of the same generated run give the same
//! device commands, host spans, flows and names through the trace source
//! `core::timeline` (testdata/trace/pftrace/README.md), and the source
//! reads gzip and blank-led JSON by content.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use unitrace_core::timeline::{
    self, DeviceOp, FlowPoint, HostSpan, Names, RankSlot, TimelineFormat, TraceSink,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace/pftrace")
        .join(rel)
}

/// (name, category, start, dur, instance) -> count, the flow ids seen, the
/// process and thread names.
#[derive(Default)]
struct Seen {
    device: BTreeMap<(String, String, i64, i64, Option<u64>), u32>,
    host: BTreeMap<(String, i64, i64, bool), u32>,
    flows: Vec<u64>,
    names: Vec<String>,
}

impl TraceSink for Seen {
    fn process(&mut self, _: RankSlot, _: u64, name: &str) {
        self.names.push(name.to_string());
    }
    fn thread(&mut self, _: RankSlot, _: u64, _: u64, name: &str) {
        self.names.push(name.to_string());
    }
    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> std::io::Result<()> {
        let key = (
            names.name(op.name).to_string(),
            names.cat_name(op.cat).to_string(),
            op.start,
            op.end - op.start,
            op.instance,
        );
        *self.device.entry(key).or_default() += 1;
        Ok(())
    }
    fn host_span(&mut self, names: &Names, s: &HostSpan<'_>) -> std::io::Result<()> {
        let key = (names.name(s.name).to_string(), s.start, s.end, s.closed);
        *self.host.entry(key).or_default() += 1;
        Ok(())
    }
    fn flow(&mut self, f: &FlowPoint) {
        self.flows.push(f.id);
    }
}

fn read(path: &Path) -> (Seen, timeline::TimelineRead) {
    let mut seen = Seen::default();
    let read = timeline::read_file(path, &mut seen).unwrap();
    assert!(read.cut.is_none());
    seen.flows.sort_unstable();
    seen.flows.dedup();
    seen.names.sort();
    (seen, read)
}

#[test]
fn both_formats_of_one_run_give_the_same_timeline() {
    for stem in ["python.100028.0", "python.107924.1"] {
        let (j, jr) = read(&data(&format!("legacy_json/{stem}.json")));
        let (p, pr) = read(&data(&format!("legacy/{stem}.pftrace")));
        assert_eq!(jr.format, TimelineFormat::ChromeJson);
        assert_eq!(pr.format, TimelineFormat::Pftrace);
        assert!(j.device.len() > 10, "{}", j.device.len());
        assert!(j.host.len() > 20, "{}", j.host.len());
        assert_eq!(j.device, p.device, "{stem}");
        assert_eq!(j.host, p.host, "{stem}");
        // JSON writes H2D and D2H flows as `s`/`t` points, pftrace only the
        // H2D ids on both slices (docs/formats.md#pftrace): the same ids.
        assert_eq!(j.flows, p.flows, "{stem}");
        // Host threads have no name record in JSON; pftrace describes them.
        for n in &j.names {
            assert!(p.names.contains(n), "{stem}: {n}");
        }
        // The path names the rank.
        let rank = stem.rsplit('.').next().unwrap().parse::<u32>().unwrap();
        assert_eq!(jr.router.rank(0), Some(rank));
        assert_eq!(pr.router.rank(0), Some(rank));
    }
}

#[test]
fn gzip_and_leading_blanks_read_like_the_plain_file() {
    let plain = data("legacy_json/python.100028.0.json");
    let bytes = std::fs::read(&plain).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A blank-led copy (its first byte is 0x0a, the tag of a .pftrace
    // record) and a gzipped one, under names that say nothing.
    let blank = dir.path().join("python.100028.0.trace");
    let mut led = b"\n\r\n \t".to_vec();
    led.extend_from_slice(&bytes);
    std::fs::write(&blank, &led).unwrap();
    let gz = dir.path().join("python.100028.0.data");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let (a, _) = read(&plain);
    let (b, br) = read(&blank);
    let (c, cr) = read(&gz);
    assert!(!br.gzipped && cr.gzipped);
    assert_eq!(cr.format, TimelineFormat::ChromeJson);
    assert_eq!(a.device, b.device);
    assert_eq!(a.device, c.device);
    assert_eq!(a.host, c.host);
    // And the gzipped .pftrace.
    let pf = std::fs::read(data("legacy/python.100028.0.pftrace")).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&pf).unwrap();
    let mut seen = Seen::default();
    let r = timeline::read_bytes(&enc.finish().unwrap(), Path::new("x.gz"), &mut seen).unwrap();
    assert_eq!(r.format, TimelineFormat::Pftrace);
    assert_eq!(seen.device, a.device);
}

#[test]
fn files_that_are_not_traces_say_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.json");
    std::fs::write(
        &csv,
        "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns]\n",
    )
    .unwrap();
    let e = timeline::read_file(&csv, &mut Seen::default())
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}: not a trace: a metric CSV (unitrace -k/-q)",
            csv.display()
        )
    );
    let e = timeline::read_file(dir.path(), &mut Seen::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("is a directory"), "{e}");
    let empty = dir.path().join("e.json");
    std::fs::write(&empty, "").unwrap();
    let r = timeline::read_file(&empty, &mut Seen::default()).unwrap();
    assert!(r.empty);
    let object = dir.path().join("o.json");
    std::fs::write(&object, "{\"other\": 1}").unwrap();
    let e = timeline::read_file(&object, &mut Seen::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.ends_with("not a trace: no traceEvents array"), "{e}");
}
