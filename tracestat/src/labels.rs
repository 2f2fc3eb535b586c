//! One allocation per distinct name over a run's ranks: thousands of ranks
//! name the same few dozen kernels, ranges and gaps, and a copy per rank
//! and name was a tenth of the peak memory of 4,096 small ranks (the
//! critical path's names; the kernels' besides: docs/tracestat.md#many-ranks).
//!
//! The table is the process's: ranks are reduced on many threads and read
//! back from partials, and a name is looked up once per rank, so one lock
//! costs nothing measurable. A label every holder dropped is made anew on
//! its next use, and the table is swept of such entries whenever it has
//! doubled since its last sweep: a process that makes many reports (the
//! server) keeps the names of those it still holds, not of every one.

use std::sync::{Arc, Mutex, Weak};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer};

/// A name on the path or of a rank's kernel: shared, not copied, by the
/// ranks and by the many stretches and rows that carry it
/// (docs/tracestat.md#scale).
pub type Label = Arc<str>;

struct Table {
    live: FxHashMap<Box<str>, Weak<str>>,
    /// Entries after the last sweep (at least [`SWEEP_FROM`]).
    swept_at: usize,
}

/// Below twice this many entries the table is never swept.
const SWEEP_FROM: usize = 1024;

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// The shared label of `text`.
pub fn label(text: &str) -> Label {
    // A panic elsewhere while the lock was held leaves the table whole:
    // each step below keeps it consistent.
    let mut guard = TABLE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let table = guard.get_or_insert_with(|| Table {
        live: FxHashMap::default(),
        swept_at: SWEEP_FROM,
    });
    if let Some(held) = table.live.get(text).and_then(Weak::upgrade) {
        return held;
    }
    let made = Label::from(text);
    table.live.insert(text.into(), Arc::downgrade(&made));
    if table.live.len() > 2 * table.swept_at {
        table.live.retain(|_, w| w.strong_count() > 0);
        table.swept_at = table.live.len().max(SWEEP_FROM);
    }
    made
}

/// Names read (from a partial) as shared labels.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Label>, D::Error> {
    let texts = Vec::<String>::deserialize(d)?;
    Ok(texts.iter().map(|t| label(t)).collect())
}

/// A name read (from a partial) as a shared label.
pub fn deserialize_one<'de, D: Deserializer<'de>>(d: D) -> Result<Label, D::Error> {
    Ok(label(&String::deserialize(d)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name is one allocation while held, made anew once dropped, and a
    /// full table is swept of the names no one holds.
    #[test]
    fn a_name_is_one_label_while_it_is_held() {
        let a = label("labels::test::a");
        assert!(Arc::ptr_eq(&a, &label("labels::test::a")));
        assert!(!Arc::ptr_eq(&a, &label("labels::test::b")));
        drop(a);
        assert_eq!(&*label("labels::test::a"), "labels::test::a");
        let held: Vec<Label> = (0..3 * SWEEP_FROM)
            .map(|i| label(&format!("labels::test::{i}")))
            .collect();
        for i in 0..10 * SWEEP_FROM {
            let _ = label(&format!("labels::test::gone-{i}"));
        }
        let entries = TABLE.lock().unwrap().as_ref().map_or(0, |t| t.live.len());
        // At most twice the entries live at the last sweep (the held names
        // and the few other tests hold): unswept, the table would hold the
        // 10,240 dropped names besides.
        assert!(entries <= 2 * (held.len() + SWEEP_FROM), "{entries}");
        assert!(Arc::ptr_eq(&held[7], &label("labels::test::7")));
    }
}
