//! Stall CSV (docs/formats.md#stall-csv): runs, rows, instruction offsets and counts must
//! give an error, never a panic, on any bytes.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/stall_csv/*`).

use std::path::Path;

use unitrace_core::metric_csv::CsvReader;
use unitrace_core::stall_csv::{parse_ip, StallReader, StallType};

pub fn run(data: &[u8]) {
    let path = Path::new("fuzz.csv");
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_ip(text);
    }
    let mut runs = StallReader::new(CsvReader::new(data, path));
    let mut n = 0usize;
    while let Ok(Some(run)) = runs.next_run() {
        assert!(!run.rows.is_empty());
        assert!(run.byte_range.start <= run.byte_range.end);
        assert!(run.byte_range.end <= data.len() as u64);
        for row in &run.rows {
            assert_eq!(row.kernel, run.kernel);
            let _ = row.has_reported_stall();
            for t in StallType::ALL {
                let _ = row.count(t);
                assert_eq!(StallType::from_column_name(t.column_name()), Some(t));
            }
        }
        n += 1;
        if n > 10_000 {
            break;
        }
    }
}
