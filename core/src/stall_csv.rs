//! Stall-sampling CSVs written by `unitrace --stall-sampling` (docs/formats.md#stall-csv):
//! typed rows and the grouping into kernel runs the original uses
//! (docs/compatibility.md#analyze-stall-charts: maximal runs of consecutive rows with equal kernel).
//!
//! Sections, headers and field splitting come from
//! [`crate::csv_sections`] (shared with metric CSVs).

use std::io::Read;
use std::ops::Range;

pub use crate::csv_sections::{
    find_device_section, open_input, scan_file_sections, scan_sections, CsvReader, Event, Field,
    FileKind, Header, RawRow, SectionInfo,
};
use crate::error::InputError;

/// Counters of a stall CSV. The first eight, in this order, are the stall
/// types the original charts and reports (docs/compatibility.md#analyze-stall-charts); `Active` and
/// `PSDep` (Xe2 only) are kept but never charted by the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StallType {
    Control,
    Pipe,
    Send,
    Dist,
    Sbid,
    Sync,
    InstrFetch,
    Other,
    Active,
    PSDep,
}

impl StallType {
    pub const COUNT: usize = 10;

    /// The stall types of docs/compatibility.md#analyze-stall-charts, in that order.
    pub const REPORTED: [StallType; 8] = [
        StallType::Control,
        StallType::Pipe,
        StallType::Send,
        StallType::Dist,
        StallType::Sbid,
        StallType::Sync,
        StallType::InstrFetch,
        StallType::Other,
    ];

    pub const ALL: [StallType; StallType::COUNT] = [
        StallType::Control,
        StallType::Pipe,
        StallType::Send,
        StallType::Dist,
        StallType::Sbid,
        StallType::Sync,
        StallType::InstrFetch,
        StallType::Other,
        StallType::Active,
        StallType::PSDep,
    ];

    /// Header name of the column.
    pub fn column_name(self) -> &'static str {
        match self {
            StallType::Control => "ControlStall[Events]",
            StallType::Pipe => "PipeStall[Events]",
            StallType::Send => "SendStall[Events]",
            StallType::Dist => "DistStall[Events]",
            StallType::Sbid => "SbidStall[Events]",
            StallType::Sync => "SyncStall[Events]",
            StallType::InstrFetch => "InstrFetchStall[Events]",
            StallType::Other => "OtherStall[Events]",
            StallType::Active => "Active[Events]",
            StallType::PSDep => "PSDepStall[Events]",
        }
    }

    pub fn from_column_name(name: &str) -> Option<StallType> {
        StallType::ALL.into_iter().find(|t| t.column_name() == name)
    }

    /// Position in [`StallType::ALL`] (index into [`StallRow::counts`]).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Name of the instruction-offset column.
pub const IP_COLUMN: &str = "IP[Address]";

/// Where the stall columns of one header are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallColumns {
    kernel: usize,
    ip: Option<usize>,
    counts: [Option<usize>; StallType::COUNT],
}

impl StallColumns {
    pub fn from_header(header: &Header) -> StallColumns {
        let mut counts = [None; StallType::COUNT];
        for t in StallType::ALL {
            counts[t.index()] = header.index_of(t.column_name());
        }
        StallColumns {
            kernel: header.kernel_index(),
            ip: header.index_of(IP_COLUMN),
            counts,
        }
    }

    /// Whether the file has a column for `t` (`PSDepStall` only on Xe2).
    pub fn has(&self, t: StallType) -> bool {
        self.counts[t.index()].is_some()
    }

    pub fn has_ip(&self) -> bool {
        self.ip.is_some()
    }
}

/// One row of a stall CSV: counts for one instruction of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallRow {
    /// Kernel name without shape (lossy UTF-8).
    pub kernel: String,
    /// Instruction offset from the kernel start.
    pub ip: u64,
    /// The offset as written in the file (`1b8`, `0x000001b8`).
    pub ip_text: String,
    /// Counts by [`StallType::index`]; 0 for columns the file lacks.
    pub counts: [u64; StallType::COUNT],
    /// 1-based line number and byte offset of the line.
    pub line: u64,
    pub offset: u64,
}

impl StallRow {
    pub fn from_raw(
        row: &RawRow<'_>,
        columns: &StallColumns,
        fields: &mut Vec<Field>,
    ) -> Result<StallRow, InputError> {
        row.split(fields)?;
        let field = |i: usize| fields.get(i).map_or(&b""[..], |f| row.field_bytes(f));
        let mut kernel = String::from_utf8_lossy(field(columns.kernel)).into_owned();
        let ip_text = match columns.ip {
            Some(i) => String::from_utf8_lossy(field(i)).into_owned(),
            None => {
                // Files before 2024-03 wrote `name!0x000001b8` in one field
                // (docs/formats.md#stall-csv-layout).
                let Some(bang) = kernel.rfind('!') else {
                    return Err(row.error(format!(
                        "no `{IP_COLUMN}` column and no `!0x…` address after the kernel name"
                    )));
                };
                let ip = kernel[bang + 1..].to_string();
                kernel.truncate(bang);
                ip
            }
        };
        let ip = parse_ip(&ip_text).ok_or_else(|| {
            row.error(format!(
                "`{ip_text}` is not a hexadecimal instruction offset"
            ))
        })?;
        let mut counts = [0u64; StallType::COUNT];
        for t in StallType::ALL {
            if let Some(i) = columns.counts[t.index()] {
                let text = field(i);
                counts[t.index()] = parse_count(text).ok_or_else(|| {
                    row.error(format!(
                        "column `{}`: `{}` is not a sample count",
                        t.column_name(),
                        String::from_utf8_lossy(text)
                    ))
                })?;
            }
        }
        Ok(StallRow {
            kernel,
            ip,
            ip_text,
            counts,
            line: row.line(),
            offset: row.offset(),
        })
    }

    pub fn count(&self, t: StallType) -> u64 {
        self.counts[t.index()]
    }

    /// True when one of the eight reported stall types is non-zero (rows
    /// kept by docs/compatibility.md#analyze-stall-charts).
    pub fn has_reported_stall(&self) -> bool {
        StallType::REPORTED.iter().any(|t| self.count(*t) != 0)
    }
}

/// Parses an instruction offset: always hexadecimal, `0x` optional, even
/// when only decimal digits appear (docs/compatibility.md#analyze-quirk-6, fixed).
pub fn parse_ip(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

fn parse_count(text: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(text).ok()?;
    s.parse::<u64>().ok().or_else(|| {
        let f = s.parse::<f64>().ok()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

/// A maximal run of consecutive rows with the same kernel name in one
/// section (the same name may come back later as another run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRun {
    pub section: usize,
    pub device: Option<i64>,
    pub kernel: String,
    /// 1-based line of the first row.
    pub first_line: u64,
    /// Bytes of the run's rows in the file.
    pub byte_range: Range<u64>,
    pub rows: Vec<StallRow>,
}

/// Streams the [`KernelRun`]s of a stall CSV. Blank lines and empty kernel
/// names end a run and are skipped (the original crashes on them,
/// docs/compatibility.md#analyze-quirk-5).
pub struct StallReader<R> {
    csv: CsvReader<R>,
    section: usize,
    device: Option<i64>,
    columns: Option<StallColumns>,
    building: Option<KernelRun>,
    fields: Vec<Field>,
}

impl<R: Read> StallReader<R> {
    pub fn new(csv: CsvReader<R>) -> StallReader<R> {
        StallReader {
            csv,
            section: 0,
            device: None,
            columns: None,
            building: None,
            fields: Vec::new(),
        }
    }

    pub fn csv(&self) -> &CsvReader<R> {
        &self.csv
    }

    /// Columns of the current section's header.
    pub fn columns(&self) -> Option<&StallColumns> {
        self.columns.as_ref()
    }

    /// The next complete run, in file order.
    pub fn next_run(&mut self) -> Result<Option<KernelRun>, InputError> {
        loop {
            let Some(event) = self.csv.next_event()? else {
                return Ok(self.building.take());
            };
            match event {
                Event::SectionStart { index, device, .. } => {
                    self.section = index;
                    self.device = device;
                }
                Event::Header(h) => {
                    self.columns = Some(StallColumns::from_header(h));
                }
                Event::Row(row) => {
                    if row.header().kind() != FileKind::Stall {
                        return Err(row.error(
                            "this is a hardware-metric section, not stall sampling (no `OtherStall[Events]` column)",
                        ));
                    }
                    let columns = self
                        .columns
                        .as_ref()
                        .ok_or_else(|| row.error("row before the header"))?;
                    let parsed = StallRow::from_raw(&row, columns, &mut self.fields)?;
                    let end = row.end_offset();
                    match &mut self.building {
                        Some(run) if run.kernel == parsed.kernel => {
                            run.byte_range.end = end;
                            run.rows.push(parsed);
                        }
                        building => {
                            let start = KernelRun {
                                section: self.section,
                                device: self.device,
                                kernel: parsed.kernel.clone(),
                                first_line: parsed.line,
                                byte_range: parsed.offset..end,
                                rows: vec![parsed],
                            };
                            if let Some(done) = building.replace(start) {
                                return Ok(Some(done));
                            }
                        }
                    }
                }
                Event::Separator { .. } | Event::SectionEnd { .. } => {
                    if let Some(run) = self.building.take() {
                        return Ok(Some(run));
                    }
                }
            }
        }
    }
}

impl<R: Read> Iterator for StallReader<R> {
    type Item = Result<KernelRun, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_run().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const BMG: &str = r#"
=== Device #0 Metrics ===

                    Kernel, IP[Address], Active[Events], PSDepStall[Events], ControlStall[Events], PipeStall[Events], SendStall[Events], DistStall[Events], SbidStall[Events], SyncStall[Events], InstrFetchStall[Events], OtherStall[Events]
"main::{lambda(auto:1)#3}",          18,              3,                  0,                    0,                 1,                 0,                 0,                 7,                 0,                       0,                  0
"main::{lambda(auto:1)#3}",         1b8,              1,                  0,                    0,                 0,                 0,                 0,               412,                 0,                       0,                  0
       "gemm(float*, int)",          c0,             12,                  4,                    2,                 0,                 0,                 0,                 0,                 0,                       5,                  0
"main::{lambda(auto:1)#3}",         1c0,              1,                  0,                    0,                 0,                 0,                 0,                 0,                 0,                       0,                  0

=== Device #1 Metrics ===

Kernel, IP[Address], Active[Events], ControlStall[Events], PipeStall[Events], SendStall[Events], DistStall[Events], SbidStall[Events], SyncStall[Events], InstrFetchStall[Events], OtherStall[Events], 
"k", 0x00000010, 1, 0, 0, 0, 0, 0, 0, 0, 0, 
"#;

    #[test]
    fn runs_rows_and_counts() {
        let runs: Vec<_> = StallReader::new(CsvReader::new(BMG.as_bytes(), Path::new("s.csv")))
            .collect::<Result<_, _>>()
            .unwrap();
        let names: Vec<_> = runs
            .iter()
            .map(|r| (r.device, r.kernel.as_str(), r.rows.len()))
            .collect();
        assert_eq!(
            names,
            [
                (Some(0), "main::{lambda(auto:1)#3}", 2),
                (Some(0), "gemm(float*, int)", 1),
                (Some(0), "main::{lambda(auto:1)#3}", 1),
                (Some(1), "k", 1),
            ]
        );
        let r = &runs[0].rows[0];
        // `18` is hex even though it has only decimal digits.
        assert_eq!((r.ip, r.ip_text.as_str()), (0x18, "18"));
        assert_eq!(r.count(StallType::Pipe), 1);
        assert_eq!(r.count(StallType::Sbid), 7);
        assert_eq!(runs[0].rows[1].count(StallType::Sbid), 412);
        let g = &runs[1].rows[0];
        assert_eq!(
            (
                g.count(StallType::PSDep),
                g.count(StallType::Control),
                g.count(StallType::InstrFetch)
            ),
            (4, 2, 5)
        );
        assert!(!runs[2].rows[0].has_reported_stall());
        assert_eq!(
            (runs[3].rows[0].ip, runs[3].rows[0].ip_text.as_str()),
            (0x10, "0x00000010")
        );
    }

    #[test]
    fn stall_type_names_round_trip() {
        for t in StallType::ALL {
            assert_eq!(StallType::from_column_name(t.column_name()), Some(t));
            assert_eq!(StallType::ALL[t.index()], t);
        }
        assert_eq!(StallType::REPORTED[0].column_name(), "ControlStall[Events]");
        assert_eq!(parse_ip("100"), Some(0x100));
        assert_eq!(parse_ip("0x"), None);
    }

    #[test]
    fn address_after_the_name_without_ip_column() {
        // Before 2024-03: `name!0x000001b8` in the kernel field.
        let text = "Kernel, Active[Events], SbidStall[Events], OtherStall[Events], \nk<a>!0x000001b8, 1, 2, 0, \n";
        let run = StallReader::new(CsvReader::new(text.as_bytes(), Path::new("s.csv")))
            .next_run()
            .unwrap()
            .unwrap();
        let row = &run.rows[0];
        assert_eq!(
            (row.kernel.as_str(), row.ip, row.ip_text.as_str()),
            ("k<a>", 0x1b8, "0x000001b8")
        );
        assert_eq!(
            (row.count(StallType::Sbid), row.count(StallType::Pipe)),
            (2, 0)
        );
    }

    #[test]
    fn bad_ip_is_an_error_with_line() {
        let text = "Kernel, IP[Address], OtherStall[Events]\n\"k\", zz, 1\n";
        let err = StallReader::new(CsvReader::new(text.as_bytes(), Path::new("s.csv")))
            .next_run()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s.csv:2: `zz` is not a hexadecimal instruction offset"
        );
    }
}
