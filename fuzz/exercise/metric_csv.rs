//! Metric CSV (docs/formats.md#metric-csv): the section reader, row splitting, number
//! parsing and kernel-instance grouping must return an error, never panic,
//! on any bytes; and what they return must be self-consistent (re-reading a
//! section or an instance by its byte range gives the same rows), since the
//! chart server re-reads instances that way.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/metric_csv/*`).

use std::path::Path;

use unitrace_core::metric_csv::{
    find_device_section, parse_number, scan_sections, sniff_kind, CsvReader, Event, FileKind,
    InstanceReader, MetricRow,
};

/// Sections and instances re-read per input.
const RE_READS: usize = 4;

pub fn run(data: &[u8]) {
    let path = Path::new("fuzz.csv");
    let _ = sniff_kind(data, path);
    let _ = parse_number(data);

    // Every event of a full read, with every row split and parsed.
    let mut csv = CsvReader::new(data, path);
    let mut fields = Vec::new();
    let mut full_read_ok = true;
    loop {
        match csv.next_event() {
            Ok(Some(Event::Row(row))) => {
                assert!(row.offset() <= row.end_offset());
                assert!(row.end_offset() <= data.len() as u64);
                let _ = row.kernel();
                if row.split(&mut fields).is_ok() {
                    for f in &fields {
                        let _ = row.field_bytes(f);
                    }
                }
                if row.header().kind() == FileKind::Metric {
                    if let Ok(parsed) = MetricRow::from_raw(&row, &mut fields) {
                        let _ = parsed.section_row(row.header());
                        for i in 0..parsed.values.len() + 1 {
                            let _ = parsed.value(i);
                        }
                    }
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => {
                full_read_ok = false;
                break;
            }
        }
    }

    let Ok(sections) = scan_sections(data, path) else {
        return;
    };
    for device in [-1, 0, 1, 2] {
        let _ = find_device_section(&sections, device);
    }
    // Each section re-read on its own, from its start offset (a few: every
    // reader allocates its read buffer, which would dominate the run time).
    for section in sections.iter().take(RE_READS) {
        assert!(section.start_offset <= section.end_offset);
        assert!(section.end_offset <= data.len() as u64);
        let start = section.start_offset as usize;
        let mut one = CsvReader::for_section(&data[start..], path, section);
        while let Ok(Some(_)) = one.next_event() {}
    }

    // Instances, then each one re-read through its byte range.
    let mut instances = InstanceReader::new(CsvReader::new(data, path));
    let mut found = Vec::new();
    while let Ok(Some(inst)) = instances.next_instance() {
        assert!(inst.ordinal >= 1);
        assert!(inst.first_line <= inst.last_line);
        assert_eq!(inst.row_count, inst.rows.len() as u64);
        found.push(inst);
        if found.len() > 10_000 {
            break;
        }
    }
    for inst in found.iter().take(RE_READS) {
        let Some(section) = sections.iter().find(|s| s.index == inst.section) else {
            continue;
        };
        let (start, end) = (inst.byte_range.start as usize, inst.byte_range.end as usize);
        assert!(start <= end && end <= data.len());
        let mut rows = CsvReader::for_rows(
            &data[start..end],
            path,
            section,
            start as u64,
            inst.first_line,
        );
        let mut reread = 0u64;
        let mut ok = true;
        loop {
            match rows.next_event() {
                Ok(Some(Event::Row(row))) => {
                    reread += 1;
                    ok &= MetricRow::from_raw(&row, &mut fields).is_ok();
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if full_read_ok && ok {
            assert_eq!(reread, inst.row_count, "re-read of {:?}", inst.byte_range);
        }
    }

    // Only some columns parsed, as charts do.
    if let Some(section) = sections.first() {
        let names: Vec<&str> = section
            .header
            .columns()
            .iter()
            .take(3)
            .map(String::as_str)
            .collect();
        let mut some = InstanceReader::with_columns(CsvReader::new(data, path), &names);
        while let Ok(Some(_)) = some.next_instance() {}
        let _ = section.header.listed_metrics();
        let _ = section.header.data_columns().count();
    }
    let mut listing = InstanceReader::without_rows(CsvReader::new(data, path));
    while let Ok(Some(_)) = listing.next_instance() {}
}
