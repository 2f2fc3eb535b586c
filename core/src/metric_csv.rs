//! Hardware metric CSVs written by `unitrace -q` / `-k` (docs/formats.md#metric-csv):
//! typed rows and the kernel-instance grouping the original
//! analyzeperfmetrics.py uses (docs/compatibility.md#analyze-list, #analyze-instances).
//!
//! The section/line/field machinery is shared with stall CSVs and lives in
//! [`crate::csv_sections`]; its main types are re-exported here.
//!
//! ```no_run
//! use std::path::Path;
//! use unitrace_core::metric_csv::{open_input, CsvReader, InstanceReader};
//! let path = Path::new("perf.metrics.1234.csv");
//! let file = open_input(path)?;
//! let mut instances = InstanceReader::new(CsvReader::new(file, path));
//! while let Some(inst) = instances.next_instance()? {
//!     println!("{:?} {} #{}: {} rows", inst.device, inst.kernel, inst.ordinal, inst.rows.len());
//! }
//! # Ok::<(), unitrace_core::InputError>(())
//! ```

use std::collections::HashMap;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

pub use crate::csv_sections::{
    banner_after, banner_device, find_device_section, is_banner, is_header_line,
    open_device_section, open_input, scan_file_sections, scan_sections, sniff_kind, split_fields,
    CsvReader, Event, Field, FileKind, Header, RawRow, SectionInfo, SeparatorKind, MAX_LINE_BYTES,
};
use crate::error::InputError;

/// Name of the column holding unitrace's global kernel-instance id (the id
/// in the trace's metrics links).
pub const GLOBAL_INSTANCE_ID: &str = "GlobalInstanceId";

/// One parsed data row of a metric section.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    /// Kernel name with shape, quotes and padding removed (lossy UTF-8).
    pub kernel: String,
    /// Value of the `GlobalInstanceId` column when the file has one.
    pub global_instance_id: Option<u64>,
    /// One value per header column (`Header::columns` order); the kernel
    /// column and empty fields hold NaN.
    pub values: Vec<f64>,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line start in the file.
    pub offset: u64,
}

impl MetricRow {
    /// Parses every field of `row` (`fields` is a reused scratch buffer).
    pub fn from_raw(row: &RawRow<'_>, fields: &mut Vec<Field>) -> Result<MetricRow, InputError> {
        MetricRow::from_raw_columns(row, fields, None)
    }

    /// Like [`MetricRow::from_raw`] but parses only the columns whose
    /// index is `true` in `wanted` (and `GlobalInstanceId`); the others hold
    /// NaN. Charts need a few of ~40 columns: this skips most float parsing.
    pub fn from_raw_columns(
        row: &RawRow<'_>,
        fields: &mut Vec<Field>,
        wanted: Option<&[bool]>,
    ) -> Result<MetricRow, InputError> {
        let header = row.header();
        row.split(fields)?;
        let kernel_index = header.kernel_index();
        let id_index = header.index_of(GLOBAL_INSTANCE_ID);
        let mut values = Vec::with_capacity(header.columns().len());
        let mut global_instance_id = None;
        for (i, (field, name)) in fields.iter().zip(header.columns()).enumerate() {
            let is_wanted = wanted.is_none_or(|w| w.get(i).copied().unwrap_or(false));
            if i == kernel_index || (!is_wanted && Some(i) != id_index) {
                values.push(f64::NAN);
                continue;
            }
            let text = row.field_bytes(field);
            let value = parse_number(text).ok_or_else(|| {
                row.error(format!(
                    "column `{name}`: `{}` is not a number",
                    String::from_utf8_lossy(text)
                ))
            })?;
            if Some(i) == id_index && !text.is_empty() {
                global_instance_id = Some(parse_id(text).ok_or_else(|| {
                    row.error(format!(
                        "column `{name}`: `{}` is not an instance id",
                        String::from_utf8_lossy(text)
                    ))
                })?);
            }
            values.push(if is_wanted { value } else { f64::NAN });
        }
        Ok(MetricRow {
            kernel: row.kernel().into_owned(),
            global_instance_id,
            values,
            line: row.line(),
            offset: row.offset(),
        })
    }

    /// Value of column `index` (NaN when out of range).
    pub fn value(&self, index: usize) -> f64 {
        self.values.get(index).copied().unwrap_or(f64::NAN)
    }

    /// The original's 0-based row index of this row in its section: lines
    /// after the header, blank ones included (docs/compatibility.md#analyze-sections); the X values
    /// of the original's metric charts (docs/compatibility.md#analyze-pages).
    pub fn section_row(&self, header: &Header) -> u64 {
        self.line.saturating_sub(header.line() + 1)
    }
}

/// Parses a numeric field as the original's pandas does: any float syntax,
/// `inf`/`nan`; an empty field is missing (NaN).
pub fn parse_number(text: &[u8]) -> Option<f64> {
    if text.is_empty() {
        return Some(f64::NAN);
    }
    std::str::from_utf8(text).ok()?.parse::<f64>().ok()
}

fn parse_id(text: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(text).ok()?;
    s.parse::<u64>().ok().or_else(|| {
        let f = s.parse::<f64>().ok()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

/// One kernel instance: a maximal run of data rows of one section, ended by
/// a separator (blank line, empty-kernel row, repeated header) or by the end
/// of the section / file. Named after its first row.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelInstance {
    /// Index of the section in the file (0-based, file order).
    pub section: usize,
    /// Banner device number; `None` for a banner-less file.
    pub device: Option<i64>,
    /// Kernel name (with shape) of the first row.
    pub kernel: String,
    /// 1-based ordinal per (section, exact kernel string), as the original
    /// numbers instances for `-i` (docs/compatibility.md#analyze-instances).
    pub ordinal: u32,
    /// 1-based line numbers of the first and last row.
    pub first_line: u64,
    pub last_line: u64,
    /// Bytes of the instance's rows in the file (start of the first row to
    /// just past the last row's line end): re-read them with
    /// [`CsvReader::resume`] at `byte_range.start` / `first_line`.
    pub byte_range: Range<u64>,
    /// Number of rows (also when `rows` is not kept).
    pub row_count: u64,
    /// The parsed rows (empty when read with [`InstanceReader::without_rows`]).
    pub rows: Vec<MetricRow>,
}

/// The first row of a kernel instance, as shown to an
/// [`InstanceReader`]'s selection hook: enough to decide whether the
/// instance's rows are wanted.
#[derive(Debug, Clone, Copy)]
pub struct InstanceHead<'a> {
    /// Index of the section in the file (0-based, file order).
    pub section: usize,
    /// Banner device number; `None` for a banner-less file.
    pub device: Option<i64>,
    /// Kind of the section's header.
    pub kind: FileKind,
    /// Kernel name (with shape) of the first row.
    pub kernel: &'a str,
    /// 1-based ordinal per (section, exact kernel string).
    pub ordinal: u32,
}

/// Where one kernel instance is and what it is; `kernel` indexes the
/// section's kernel table ([`InstanceReader::section_kernels`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceSpan {
    pub section: usize,
    pub device: Option<i64>,
    /// Position of the instance's kernel in the section's kernel table
    /// (order of first appearance).
    pub kernel: usize,
    /// 1-based ordinal per (section, exact kernel string).
    pub ordinal: u32,
    /// Whether the selection hook wanted the instance's rows.
    pub selected: bool,
    /// 1-based line numbers of the first and last row.
    pub first_line: u64,
    pub last_line: u64,
    /// Byte offsets: start of the first row, just past the last row's line
    /// end.
    pub start: u64,
    pub end: u64,
    /// Rows so far (all rows once the instance has ended).
    pub row_count: u64,
}

/// One kernel of a section: its name and how many instances it has so far,
/// in the order kernels first appear (the order of `analyze -l` and of the
/// original's mode B, docs/compatibility.md#analyze-list / #analyze-instances).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionKernel {
    pub name: String,
    pub instances: u32,
}

/// One step of [`InstanceReader::next_event`]: the section structure of the
/// file with rows grouped into kernel instances. Borrowed from the reader
/// until the next call.
#[derive(Debug)]
pub enum InstanceEvent<'a> {
    /// A section starts; its kernel table starts empty.
    SectionStart { index: usize, device: Option<i64> },
    /// The header of the current section.
    Header(&'a Header),
    /// A row of an instance the selection hook wanted; rows of the other
    /// instances are passed over without being shown.
    Row {
        instance: InstanceSpan,
        row: RawRow<'a>,
    },
    /// An instance ended (wanted or not): at a separator, at the end of its
    /// section or of the file.
    End(InstanceSpan),
    /// The current section ended; its kernel table is complete.
    SectionEnd { index: usize },
}

/// Decides, at the first row of each instance, whether its rows are
/// wanted (see [`InstanceReader::with_selection`]).
pub type Selection = Box<dyn FnMut(&InstanceHead<'_>) -> bool + Send>;

/// The one grouping of CSV rows into kernel instances, used by every
/// consumer (listing, charts, the chart server's index): an instance is a
/// maximal run of data rows of one section, ended by a separator (blank
/// line, empty-kernel row, repeated header) or by the end of the section /
/// file, named after its first row and numbered per (section, kernel).
///
/// Unlike the original, the end of a section or of the file also ends an
/// instance, so the last instance of a sampling file is not lost
/// (docs/compatibility.md#analyze-quirk-3, #analyze-quirk-4).
///
/// [`InstanceReader::next_event`] streams sections, headers, the rows of
/// the selected instances and the end of every instance;
/// [`InstanceReader::next_instance`] collects whole [`KernelInstance`]s on
/// top of it.
pub struct InstanceReader<R> {
    groups: Grouping<R>,
    keep_rows: bool,
    /// Columns to parse (`None`: all), by index in the current header,
    /// computed from `wanted_names` at each header.
    wanted: Option<Vec<bool>>,
    wanted_names: Vec<String>,
    fields: Vec<Field>,
}

/// The state of the grouping proper, apart from what
/// [`InstanceReader::next_instance`] needs while a row is borrowed.
struct Grouping<R> {
    csv: CsvReader<R>,
    select: Selection,
    section: usize,
    device: Option<i64>,
    kernels: Vec<SectionKernel>,
    positions: HashMap<String, usize>,
    building: Option<InstanceSpan>,
    /// A `SectionEnd` to report after the `End` of the instance it ended.
    pending_section_end: Option<usize>,
}

impl<R: Read> InstanceReader<R> {
    /// Every instance with its rows (see [`InstanceReader::next_instance`]).
    pub fn new(csv: CsvReader<R>) -> InstanceReader<R> {
        InstanceReader::with_selection(csv, Box::new(|_| true))
    }

    /// Instances whose rows are shown (as [`InstanceEvent::Row`], or parsed
    /// by [`InstanceReader::next_instance`]) only when `select` says so at
    /// their first row; the others are still grouped, numbered and ended,
    /// which is much faster.
    pub fn with_selection(csv: CsvReader<R>, select: Selection) -> InstanceReader<R> {
        InstanceReader {
            groups: Grouping {
                csv,
                select,
                section: 0,
                device: None,
                kernels: Vec::new(),
                positions: HashMap::new(),
                building: None,
                pending_section_end: None,
            },
            keep_rows: true,
            wanted: None,
            wanted_names: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Instances without rows (names, ordinals, positions and row counts
    /// only): what listings need, and much faster.
    pub fn without_rows(csv: CsvReader<R>) -> InstanceReader<R> {
        let mut r = InstanceReader::with_selection(csv, Box::new(|_| false));
        r.keep_rows = false;
        r
    }

    /// Instances with rows in which only the named columns are parsed
    /// (others are NaN); unknown names are ignored here, validate them
    /// against the header first.
    pub fn with_columns(csv: CsvReader<R>, names: &[&str]) -> InstanceReader<R> {
        let mut r = InstanceReader::new(csv);
        r.wanted_names = names.iter().map(|n| n.to_string()).collect();
        r.wanted = Some(Vec::new());
        r
    }

    pub fn csv(&self) -> &CsvReader<R> {
        &self.groups.csv
    }

    pub fn into_csv(self) -> CsvReader<R> {
        self.groups.csv
    }

    /// The kernels of the current section so far, in order of first
    /// appearance, with their instance counts; complete at
    /// [`InstanceEvent::SectionEnd`].
    pub fn section_kernels(&self) -> &[SectionKernel] {
        &self.groups.kernels
    }

    /// The next step through the file.
    pub fn next_event(&mut self) -> Result<Option<InstanceEvent<'_>>, InputError> {
        let event = self.groups.next_event()?;
        if let (Some(InstanceEvent::Header(h)), Some(wanted)) = (&event, &mut self.wanted) {
            wanted.clear();
            wanted.extend(h.columns().iter().map(|c| self.wanted_names.contains(c)));
        }
        Ok(event)
    }

    /// The next complete instance, in file order, with its rows parsed
    /// when it is selected (and the reader keeps rows).
    pub fn next_instance(&mut self) -> Result<Option<KernelInstance>, InputError> {
        let keep_rows = self.keep_rows;
        let mut rows = Vec::new();
        loop {
            let event = self.groups.next_event()?;
            if let (Some(InstanceEvent::Header(h)), Some(wanted)) = (&event, &mut self.wanted) {
                wanted.clear();
                wanted.extend(h.columns().iter().map(|c| self.wanted_names.contains(c)));
            }
            let Some(event) = event else {
                return Ok(None);
            };
            match event {
                InstanceEvent::Row { row, .. } => {
                    if !keep_rows {
                        continue;
                    }
                    if row.header().kind() == FileKind::Stall {
                        return Err(
                            row.error("this is a stall-sampling section, not hardware metrics")
                        );
                    }
                    rows.push(MetricRow::from_raw_columns(
                        &row,
                        &mut self.fields,
                        self.wanted.as_deref(),
                    )?);
                }
                InstanceEvent::End(span) => {
                    return Ok(Some(KernelInstance {
                        section: span.section,
                        device: span.device,
                        kernel: self.groups.kernels[span.kernel].name.clone(),
                        ordinal: span.ordinal,
                        first_line: span.first_line,
                        last_line: span.last_line,
                        byte_range: span.start..span.end,
                        row_count: span.row_count,
                        rows,
                    }));
                }
                InstanceEvent::SectionStart { .. }
                | InstanceEvent::Header(_)
                | InstanceEvent::SectionEnd { .. } => {}
            }
        }
    }
}

impl<R: Read> Grouping<R> {
    fn next_event(&mut self) -> Result<Option<InstanceEvent<'_>>, InputError> {
        if let Some(index) = self.pending_section_end.take() {
            return Ok(Some(InstanceEvent::SectionEnd { index }));
        }
        /// What to do with one CSV event; owned, so that the event's borrow
        /// ends before the loop goes on (a borrowed header or row is taken
        /// again from the reader on the path that returns it).
        enum Step {
            Next,
            Header,
            Row(InstanceSpan),
            Return(InstanceEvent<'static>),
        }
        loop {
            let step = match self.csv.next_event()? {
                None => Step::Return(match self.building.take() {
                    Some(inst) => InstanceEvent::End(inst),
                    None => return Ok(None),
                }),
                Some(Event::SectionStart { index, device, .. }) => {
                    self.section = index;
                    self.device = device;
                    self.kernels.clear();
                    self.positions.clear();
                    Step::Return(InstanceEvent::SectionStart { index, device })
                }
                Some(Event::Header(_)) => Step::Header,
                Some(Event::Row(row)) => {
                    let inst = match &mut self.building {
                        Some(inst) => inst,
                        None => {
                            let kernel = row.kernel();
                            let position = match self.positions.get(kernel.as_ref()) {
                                Some(&i) => i,
                                None => {
                                    let name = kernel.into_owned();
                                    self.positions.insert(name.clone(), self.kernels.len());
                                    self.kernels.push(SectionKernel { name, instances: 0 });
                                    self.kernels.len() - 1
                                }
                            };
                            let entry = &mut self.kernels[position];
                            entry.instances += 1;
                            let selected = (self.select)(&InstanceHead {
                                section: self.section,
                                device: self.device,
                                kind: row.header().kind(),
                                kernel: &entry.name,
                                ordinal: entry.instances,
                            });
                            self.building.insert(InstanceSpan {
                                section: self.section,
                                device: self.device,
                                kernel: position,
                                ordinal: entry.instances,
                                selected,
                                first_line: row.line(),
                                last_line: row.line(),
                                start: row.offset(),
                                end: row.end_offset(),
                                row_count: 0,
                            })
                        }
                    };
                    inst.last_line = row.line();
                    inst.end = row.end_offset();
                    inst.row_count += 1;
                    if inst.selected {
                        Step::Row(*inst)
                    } else {
                        Step::Next
                    }
                }
                Some(Event::Separator { .. }) => match self.building.take() {
                    Some(inst) => Step::Return(InstanceEvent::End(inst)),
                    None => Step::Next,
                },
                Some(Event::SectionEnd { index, .. }) => Step::Return(match self.building.take() {
                    Some(inst) => {
                        self.pending_section_end = Some(index);
                        InstanceEvent::End(inst)
                    }
                    None => InstanceEvent::SectionEnd { index },
                }),
            };
            match step {
                Step::Next => {}
                Step::Return(event) => return Ok(Some(event)),
                Step::Header => return Ok(self.csv.header().map(InstanceEvent::Header)),
                Step::Row(instance) => {
                    return Ok(self
                        .csv
                        .current_row()
                        .map(|row| InstanceEvent::Row { instance, row }))
                }
            }
        }
    }
}

impl<R: Read> Iterator for InstanceReader<R> {
    type Item = Result<KernelInstance, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_instance().transpose()
    }
}

/// Re-reads the rows of one instance found earlier (its `byte_range` and
/// `first_line`) in `section` of the file at `path`, e.g. for an HTTP
/// request, without reading the rest of the file.
pub fn read_rows_at(
    path: &Path,
    section: &SectionInfo,
    byte_range: Range<u64>,
    first_line: u64,
) -> Result<Vec<MetricRow>, InputError> {
    use std::io::{Seek, SeekFrom};
    let mut file = open_input(path)?;
    file.seek(SeekFrom::Start(byte_range.start))
        .map_err(|e| InputError::io(path, &e))?;
    let len = byte_range.end.saturating_sub(byte_range.start);
    let mut csv = CsvReader::for_rows(file.take(len), path, section, byte_range.start, first_line);
    let mut rows = Vec::new();
    let mut fields = Vec::new();
    while let Some(event) = csv.next_event()? {
        if let Event::Row(row) = event {
            rows.push(MetricRow::from_raw(&row, &mut fields)?);
        }
    }
    Ok(rows)
}

/// Columns only unitrace writes (docs/formats.md#metric-csv): one of
/// them, a stall column (`...Stall[Events]`) or a validity flag in a header
/// says the file comes from unitrace. A CSV with a `Kernel` column and
/// none of these is read all the same, but may be something else.
pub const UNITRACE_COLUMNS: [&str; 12] = [
    "GpuTime[ns]",
    GLOBAL_INSTANCE_ID,
    "SubDeviceId",
    "GpuCoreClocks[cycles]",
    "AvgGpuCoreFrequencyMHz[MHz]",
    "StreamMarker",
    "QueryBeginTime[ns]",
    "ReportReason",
    "ContextId",
    "IP[Address]",
    "Active[Events]",
    "OtherStall[Events]",
];

/// Whether `header` has a column unitrace writes (see
/// [`UNITRACE_COLUMNS`]).
pub fn has_unitrace_column(header: &Header) -> bool {
    header.columns().iter().any(|c| {
        UNITRACE_COLUMNS.contains(&c.as_str())
            || c.ends_with("Stall[Events]")
            || INVALID_FLAGS.contains(&c.as_str())
            || DOUBTFUL_FLAGS.contains(&c.as_str())
    })
}

/// Report-validity columns of current `unitrace -q` files
/// (docs/formats.md#metric-csv-validity): a flag is a masked dword of the
/// query result, so a set flag reads as its mask bit (`ReportLost=1`,
/// `ReportWithoutWorkload=16`), never only as 1; any non-zero value is set.
///
/// Flags that say the report's counters are wrong: the report is left out.
pub const INVALID_FLAGS: [&str; 7] = [
    "ReportError",
    "ReportLost",
    "ReportInconsistent",
    "ReportWithoutWorkload",
    "ReportContextMismatch",
    "ReportQueryModeMismatch",
    "OverrunOccured",
];

/// Flags that say the report may be skewed (split query, something
/// happened mid-query): the report is kept but marked doubtful.
pub const DOUBTFUL_FLAGS: [&str; 10] = [
    "QuerySplitOccurred",
    "MidQueryTimer",
    "MidQueryProgramming",
    "MidQueryMarker",
    "MidQueryCtxSwitch",
    "MidQueryC6",
    "MidQueryFreqChange",
    "MidQueryMmioTrigger",
    "CoreFrequencyChanged",
    "ReportCtxSwitchLost",
];

/// Bits of [`ReportValidity`]: the invalid flags, then the doubtful ones.
const FLAG_COUNT: usize = INVALID_FLAGS.len() + DOUBTFUL_FLAGS.len();

fn flag_name(bit: usize) -> &'static str {
    if bit < INVALID_FLAGS.len() {
        INVALID_FLAGS[bit]
    } else {
        DOUBTFUL_FLAGS[bit - INVALID_FLAGS.len()]
    }
}

/// Which validity flags one report has set (a bit set per flag, in the
/// order of [`INVALID_FLAGS`] then [`DOUBTFUL_FLAGS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportValidity {
    flags: u32,
}

impl ReportValidity {
    /// One of the [`INVALID_FLAGS`] is set.
    pub fn is_invalid(self) -> bool {
        self.flags & ((1 << INVALID_FLAGS.len()) - 1) != 0
    }

    /// Only [`DOUBTFUL_FLAGS`] are set.
    pub fn is_doubtful(self) -> bool {
        !self.is_invalid() && self.flags != 0
    }

    pub fn is_valid(self) -> bool {
        self.flags == 0
    }

    /// Names of the set flags, invalid ones first.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        (0..FLAG_COUNT)
            .filter(move |bit| self.flags & (1 << bit) != 0)
            .map(flag_name)
    }

    /// `valid`, `doubtful` or `invalid`: the mark of `--data` files.
    pub fn label(self) -> &'static str {
        if self.is_invalid() {
            "invalid"
        } else if self.is_doubtful() {
            "doubtful"
        } else {
            "valid"
        }
    }

    /// Both reports' flags.
    pub fn union(self, other: ReportValidity) -> ReportValidity {
        ReportValidity {
            flags: self.flags | other.flags,
        }
    }
}

/// Where a header's validity columns are: `None` from
/// [`ValidityColumns::of`] when it has none (older files, sampling files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidityColumns {
    /// `(column index, flag bit)`.
    columns: Vec<(usize, usize)>,
}

impl ValidityColumns {
    /// The validity columns of `header`, if it has any.
    pub fn of(header: &Header) -> Option<ValidityColumns> {
        let columns: Vec<(usize, usize)> = (0..FLAG_COUNT)
            .filter_map(|bit| header.index_of(flag_name(bit)).map(|column| (column, bit)))
            .collect();
        (!columns.is_empty()).then_some(ValidityColumns { columns })
    }

    /// Column indices to parse for [`ValidityColumns::classify`].
    pub fn column_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().map(|&(column, _)| column)
    }

    /// The flags of one report; `value(column)` gives a column's value
    /// (NaN for an empty field, which counts as not set).
    pub fn classify(&self, mut value: impl FnMut(usize) -> f64) -> ReportValidity {
        let mut flags = 0u32;
        for &(column, bit) in &self.columns {
            let v = value(column);
            if v != 0.0 && !v.is_nan() {
                flags |= 1 << bit;
            }
        }
        ReportValidity { flags }
    }

    /// The flags of a raw row (`fields` already split from it).
    pub fn classify_raw(&self, row: &RawRow<'_>, fields: &[Field]) -> ReportValidity {
        self.classify(|column| {
            fields
                .get(column)
                .and_then(|f| parse_number(row.field_bytes(f)))
                .unwrap_or(f64::NAN)
        })
    }

    /// The flags of a parsed row (its flag columns must have been parsed).
    pub fn classify_row(&self, row: &MetricRow) -> ReportValidity {
        self.classify(|column| row.value(column))
    }
}

/// What to do with flagged reports (`--keep-invalid`, `--strict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValidityPolicy {
    /// Invalid reports are left out, doubtful ones kept (the default).
    #[default]
    DropInvalid,
    /// Every report is kept (`--keep-invalid`).
    KeepAll,
    /// Invalid and doubtful reports are left out (`--strict`).
    Strict,
}

impl ValidityPolicy {
    /// Whether a report with these flags is used.
    pub fn keeps(self, validity: ReportValidity) -> bool {
        match self {
            ValidityPolicy::DropInvalid => !validity.is_invalid(),
            ValidityPolicy::KeepAll => true,
            ValidityPolicy::Strict => validity.is_valid(),
        }
    }
}

/// Counts of the reports of one file, for the one warning line per file;
/// what is left out follows from the policy given to
/// [`ValidityTally::warning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValidityTally {
    pub reports: u64,
    pub invalid: u64,
    pub doubtful: u64,
    /// Flags set in the invalid reports, and in the doubtful ones.
    pub invalid_flags: ReportValidity,
    pub doubtful_flags: ReportValidity,
}

impl ValidityTally {
    /// Counts one report.
    pub fn add(&mut self, validity: ReportValidity) {
        self.reports += 1;
        if validity.is_invalid() {
            self.invalid += 1;
            self.invalid_flags = self.invalid_flags.union(validity);
        } else if validity.is_doubtful() {
            self.doubtful += 1;
            self.doubtful_flags = self.doubtful_flags.union(validity);
        }
    }

    /// Counts one report; returns whether `policy` keeps it.
    pub fn count(&mut self, policy: ValidityPolicy, validity: ReportValidity) -> bool {
        self.add(validity);
        policy.keeps(validity)
    }

    /// The warning for `path` (without the tool prefix), or `None` when
    /// every report is valid:
    /// `FILE: N of M reports left out: ReportError/...; --keep-invalid keeps them`,
    /// then the doubtful reports kept.
    pub fn warning(&self, path: &Path, policy: ValidityPolicy) -> Option<String> {
        if self.invalid == 0 && self.doubtful == 0 {
            return None;
        }
        let join = |v: ReportValidity| v.names().collect::<Vec<_>>().join("/");
        let (left_out, left_out_flags) = match policy {
            ValidityPolicy::DropInvalid => (self.invalid, self.invalid_flags),
            ValidityPolicy::KeepAll => (0, ReportValidity::default()),
            ValidityPolicy::Strict => (
                self.invalid + self.doubtful,
                self.invalid_flags.union(self.doubtful_flags),
            ),
        };
        let mut parts = Vec::new();
        if left_out > 0 {
            parts.push(format!(
                "{left_out} of {} reports left out: {}; --keep-invalid keeps them",
                self.reports,
                join(left_out_flags)
            ));
        }
        if policy == ValidityPolicy::KeepAll && self.invalid > 0 {
            parts.push(format!(
                "{} of {} reports flagged invalid ({}), kept as --keep-invalid asks",
                self.invalid,
                self.reports,
                join(self.invalid_flags)
            ));
        }
        if policy != ValidityPolicy::Strict && self.doubtful > 0 {
            parts.push(format!(
                "{} of {} reports doubtful, kept: {}; --strict leaves them out",
                self.doubtful,
                self.reports,
                join(self.doubtful_flags)
            ));
        }
        Some(format!("{}: {}", path.display(), parts.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLING: &str = "
=== Device #0 Metrics ===

Kernel, GlobalInstanceId, GpuTime[ns], XVE_ACTIVE[%]
\"k<a, b>[SIMD32 {1; 1; 1} {2; 1; 1}]\", 12, 50104, 71.25
\"k<a, b>[SIMD32 {1; 1; 1} {2; 1; 1}]\", 12, 49980, 8.85e1

\"q\", 13, 1, nan
, 14, 0, 0

\"k<a, b>[SIMD32 {1; 1; 1} {2; 1; 1}]\", 15, 3, 4


=== Device #1 Metrics ===

Kernel, GlobalInstanceId, GpuTime[ns], XVE_ACTIVE[%]
\"q\", 16, 5, 6
\"q\", 16, 7, 8
";

    fn instances(text: &str) -> Vec<KernelInstance> {
        InstanceReader::new(CsvReader::new(text.as_bytes(), Path::new("m.csv")))
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    }

    #[test]
    fn foreign_headers_have_no_unitrace_column() {
        let path = Path::new("x.csv");
        let parse = |text: &[u8]| Header::parse(text, 1, path).unwrap();
        assert!(!has_unitrace_column(&parse(b"Kernel,Time[ms],Bytes")));
        assert!(has_unitrace_column(&parse(
            b"Kernel,GpuTime[ns],XVE_ACTIVE[%]"
        )));
        assert!(has_unitrace_column(&parse(b"Kernel,GlobalInstanceId,A[%]")));
        assert!(has_unitrace_column(&parse(b"Kernel,SendStall[Events]")));
    }

    #[test]
    fn validity_flags_read_as_mask_bits_and_sort_reports() {
        let path = Path::new("v.csv");
        let header = Header::parse(
            b"Kernel,GpuTime[ns],QuerySplitOccurred,OverrunOccured,MidQueryC6,ReportLost,ReportCtxSwitchLost",
            1,
            path,
        )
        .unwrap();
        assert!(
            ValidityColumns::of(&Header::parse(b"Kernel,GpuTime[ns]", 1, path).unwrap()).is_none()
        );
        let columns = ValidityColumns::of(&header).unwrap();
        let of = |values: [f64; 7]| columns.classify(|c| values[c]);
        let valid = of([0.0, 5.0, 0.0, 0.0, 0.0, 0.0, f64::NAN]);
        assert!(valid.is_valid());
        let lost = of([0.0, 5.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        assert!(lost.is_invalid());
        let c6 = of([0.0, 5.0, 0.0, 0.0, 16.0, 0.0, 8.0]);
        assert!(c6.is_doubtful());
        assert_eq!(
            c6.names().collect::<Vec<_>>(),
            ["MidQueryC6", "ReportCtxSwitchLost"]
        );
        let overrun_and_split = of([0.0, 5.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        assert!(overrun_and_split.is_invalid());
        assert_eq!(overrun_and_split.label(), "invalid");
        let mut tally = ValidityTally::default();
        for v in [valid, lost, c6, overrun_and_split] {
            tally.count(ValidityPolicy::DropInvalid, v);
        }
        assert_eq!(
            tally.warning(path, ValidityPolicy::DropInvalid).unwrap(),
            "v.csv: 2 of 4 reports left out: ReportLost/OverrunOccured/QuerySplitOccurred; \
             --keep-invalid keeps them; 1 of 4 reports doubtful, kept: MidQueryC6/ReportCtxSwitchLost; \
             --strict leaves them out"
        );
        assert_eq!(
            tally.warning(path, ValidityPolicy::Strict).unwrap(),
            "v.csv: 3 of 4 reports left out: ReportLost/OverrunOccured/QuerySplitOccurred/MidQueryC6/\
             ReportCtxSwitchLost; --keep-invalid keeps them"
        );
        assert!(!ValidityPolicy::Strict.keeps(c6));
        assert!(ValidityPolicy::KeepAll.keeps(lost));
        let mut clean = ValidityTally::default();
        clean.count(ValidityPolicy::Strict, valid);
        assert_eq!(clean.warning(path, ValidityPolicy::Strict), None);
    }

    #[test]
    fn groups_instances_with_ordinals_and_ranges() {
        let all = instances(SAMPLING);
        let summary: Vec<_> = all
            .iter()
            .map(|i| {
                (
                    i.device,
                    i.kernel.as_str(),
                    i.ordinal,
                    i.first_line,
                    i.rows.len(),
                )
            })
            .collect();
        let k = "k<a, b>[SIMD32 {1; 1; 1} {2; 1; 1}]";
        assert_eq!(
            summary,
            [
                (Some(0), k, 1, 5, 2),
                (Some(0), "q", 1, 8, 1),
                (Some(0), k, 2, 11, 1),
                // The last instance has no blank line after it: the end of
                // the file ends it (docs/compatibility.md#analyze-quirk-4, fixed).
                (Some(1), "q", 1, 17, 2),
            ]
        );
        let first = &all[0];
        assert_eq!(first.rows[0].global_instance_id, Some(12));
        assert_eq!(first.rows[1].values[2..], [49980.0, 88.5]);
        assert!(first.rows[1].values[0].is_nan());
        let text = &SAMPLING[first.byte_range.start as usize..first.byte_range.end as usize];
        assert!(text.starts_with("\"k<a, b>") && text.ends_with("8.85e1\n"));
        assert!(all[1].rows[0].values[3].is_nan());
        let header = Header::parse(
            b"Kernel, GlobalInstanceId, GpuTime[ns], XVE_ACTIVE[%]",
            4,
            Path::new("m.csv"),
        )
        .unwrap();
        assert_eq!(all[2].rows[0].section_row(&header), 6);

        // An instance can be re-read from its byte range alone.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        std::fs::write(&path, SAMPLING).unwrap();
        let sections = scan_file_sections(&path).unwrap();
        let again = read_rows_at(
            &path,
            &sections[0],
            first.byte_range.clone(),
            first.first_line,
        )
        .unwrap();
        assert_eq!(format!("{again:?}"), format!("{:?}", first.rows));
        let last = &all[3];
        let again = read_rows_at(
            &path,
            &sections[1],
            last.byte_range.clone(),
            last.first_line,
        )
        .unwrap();
        assert_eq!(format!("{again:?}"), format!("{:?}", last.rows));
    }

    #[test]
    fn only_wanted_columns_are_parsed() {
        let csv = CsvReader::new(SAMPLING.as_bytes(), Path::new("m.csv"));
        let all: Vec<_> = InstanceReader::with_columns(csv, &["XVE_ACTIVE[%]"])
            .collect::<Result<_, _>>()
            .unwrap();
        let row = &all[0].rows[1];
        assert_eq!(row.global_instance_id, Some(12));
        assert!(row.values[1].is_nan() && row.values[2].is_nan());
        assert_eq!(row.values[3], 88.5);
        assert_eq!(all[3].rows[1].values[3], 8.0);
    }

    #[test]
    fn selection_hook_shows_only_wanted_rows_and_ends_every_instance() {
        let csv = CsvReader::new(SAMPLING.as_bytes(), Path::new("m.csv"));
        let mut heads = Vec::new();
        let mut reader = InstanceReader::with_selection(
            csv,
            Box::new(|head| head.kernel == "q" && head.ordinal == 1),
        );
        let mut seen = Vec::new();
        let mut tables = Vec::new();
        while let Some(event) = reader.next_event().unwrap() {
            let ended_section = matches!(event, InstanceEvent::SectionEnd { .. });
            seen.push(match event {
                InstanceEvent::SectionStart { index, device } => format!("S{index}:{device:?}"),
                InstanceEvent::Header(h) => format!("H{}", h.line()),
                InstanceEvent::Row { instance, row } => {
                    heads.push(instance);
                    format!("R{}", row.line())
                }
                InstanceEvent::End(span) => format!(
                    "E{}#{}:{}-{}:{}",
                    span.kernel, span.ordinal, span.first_line, span.last_line, span.row_count
                ),
                InstanceEvent::SectionEnd { index } => format!("X{index}"),
            });
            if ended_section {
                tables.push(reader.section_kernels().to_vec());
            }
        }
        assert_eq!(
            seen,
            [
                "S0:Some(0)",
                "H4",
                "E0#1:5-6:2",
                "R8",
                "E1#1:8-8:1",
                "E0#2:11-11:1",
                "X0",
                "S1:Some(1)",
                "H16",
                "R17",
                "R18",
                "E0#1:17-18:2",
                "X1",
            ]
        );
        assert!(heads.iter().all(|h| h.selected && h.ordinal == 1));
        let k = "k<a, b>[SIMD32 {1; 1; 1} {2; 1; 1}]";
        let kernel = |name: &str, instances| SectionKernel {
            name: name.to_string(),
            instances,
        };
        assert_eq!(
            tables,
            [vec![kernel(k, 2), kernel("q", 1)], vec![kernel("q", 1)]]
        );
    }

    #[test]
    fn rows_can_be_skipped_and_bad_numbers_are_errors() {
        let r =
            InstanceReader::without_rows(CsvReader::new(SAMPLING.as_bytes(), Path::new("m.csv")));
        let all: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(all.len(), 4);
        assert!(all.iter().all(|i| i.rows.is_empty()));
        assert_eq!(all[0].row_count, 2);
        let bad = "Kernel,GpuTime[ns]\nk,abc\n";
        let err = InstanceReader::new(CsvReader::new(bad.as_bytes(), Path::new("m.csv")))
            .next_instance()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.csv:2: column `GpuTime[ns]`: `abc` is not a number"
        );
    }
}
