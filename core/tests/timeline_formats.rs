//! The JSON and the `.pftrace` form of the same generated run give the same
//! slices, instants and names through `core::timeline`
//! (testdata/trace/pftrace/README.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use unitrace_core::timeline::{for_each_event, TimelineEvent};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace/pftrace")
        .join(rel)
}

/// (name, category, start, dur, args.id) -> count, and the flow ids seen.
type Slices = BTreeMap<(String, String, i64, i64, Option<u64>), u32>;

fn read(path: &Path) -> (Slices, Vec<u64>, Vec<String>) {
    let mut slices = Slices::new();
    let mut flows = Vec::new();
    let mut names = Vec::new();
    let sum = for_each_event(path, |e| match *e {
        TimelineEvent::Slice(s) => {
            *slices
                .entry((
                    s.name.to_string(),
                    s.category.to_string(),
                    s.start_ns,
                    s.dur_ns,
                    // Host slices: JSON has a top-level `id`, pftrace an
                    // `id` annotation (docs/formats.md#pftrace); compare the
                    // device instance ids only.
                    (s.category == "gpu_op")
                        .then(|| s.args.get_u64("id"))
                        .flatten(),
                ))
                .or_default() += 1;
        }
        TimelineEvent::Flow { id, .. } => flows.push(id),
        TimelineEvent::Process { name, .. } | TimelineEvent::Thread { name, .. } => {
            names.push(name.to_string())
        }
        TimelineEvent::Instant(_) => {}
    })
    .unwrap();
    assert_eq!(sum.unclosed_slices, 0);
    assert!(sum.truncated.is_none());
    flows.sort_unstable();
    flows.dedup();
    names.sort();
    (slices, flows, names)
}

#[test]
fn both_formats_of_one_run_give_the_same_timeline() {
    for stem in ["python.100028.0", "python.107924.1"] {
        let (js, jf, jn) = read(&data(&format!("legacy_json/{stem}.json")));
        let (ps, pf, pn) = read(&data(&format!("legacy/{stem}.pftrace")));
        assert!(js.len() > 50, "{}", js.len());
        assert_eq!(js, ps, "{stem}");
        // JSON writes H2D and D2H flows as `s`/`t` points, pftrace only the
        // H2D ids on both slices (docs/formats.md#pftrace): the same ids.
        assert_eq!(jf, pf, "{stem}");
        // Host threads have no name record in JSON; pftrace describes them.
        for n in &jn {
            assert!(pn.contains(n), "{stem}: {n}");
        }
    }
}
