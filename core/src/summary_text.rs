//! unitrace text summaries (`-h`, `-d`, `-s`, `-t`, `-r`;
//! docs/formats.md#summary-text) as summary.py reads them
//! (docs/compatibility.md#summary-parsing), one member (log file) at a time.
//!
//! The reader follows summary.py's label scan: each line is checked for the
//! labels below in order and the first one contained decides what happens;
//! tables are the "CSV with padding" of docs/formats.md#summary-text. A log
//! may hold several processes' reports back to back (a job log, a `cat` of
//! rank logs); each becomes one [`ProcessReport`], split where the next
//! process's first heading starts (docs/formats.md#summary-text-order).
//! Fixed on purpose (docs/compatibility.md#summary; each has a test):
//! * #1 `=== Kernel Submission Summary ===` blocks are skipped (the original
//!   counts their totals again and crashes on their table);
//! * #2 a table also ends at a line starting with `*` or with fewer fields
//!   than the header, and that line is read again for labels, so the CCL
//!   block written twice back to back parses; a repeated CCL block (same
//!   banner) replaces the earlier one instead of counting twice. A short
//!   line that is not a label is a damaged row: it is counted in
//!   [`MemberSummary::short_rows`] for the caller's warning;
//! * #3 totals outside an API/Device section are ignored instead of landing
//!   in the CCL bucket;
//! * #4 rows with the same name in one report are summed ([`ProcessReport`]
//!   holds one total per name);
//! * #6 `Tile #n: "name"` loses its prefix and quotes and `-v` shapes
//!   (`[SIMD16 {..} {..}]`, `[4096]`) are cut, so names match schemas;
//! * #7 an old unquoted name containing commas is rebuilt from the extra
//!   fields instead of failing the number conversion.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// Name under which `Total Execution Time` is recorded (docs/formats.md#category-ini).
pub const WALLCLOCK: &str = "Wallclock";
/// Name under which `Total Device Time for L0 backend` is recorded.
pub const L0_BACKEND: &str = "L0_backend";

/// Labels in summary.py's order, plus the submission banner (checked first;
/// it contains none of the others).
const LABELS: [&str; 8] = [
    "API Timing Summary",
    "Device Timing Summary",
    "****************************",
    "Total Execution Time",
    "Total API Time for L0 backend",
    "Total Device Time for L0 backend",
    "L0 Backend",
    "Kernel Submission Summary",
];
const API: usize = 0;
const DEVICE: usize = 1;
const STARS: usize = 2;
const TOTAL_EXEC: usize = 3;
const TOTAL_API_L0: usize = 4;
const TOTAL_DEVICE_L0: usize = 5;
const L0_TABLE: usize = 6;
const SUBMISSION: usize = 7;

fn labels() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| AhoCorasick::new(LABELS).expect("fixed label set compiles"))
}

/// Index of the first label (in summary.py's order) contained in `line`.
fn find_label(line: &str) -> Option<usize> {
    // Most lines hold no label. Every label contains one of these four
    // needles, and SIMD substring search rejects a line much faster than
    // the automaton.
    static NEEDLES: OnceLock<[memchr::memmem::Finder<'static>; 4]> = OnceLock::new();
    let needles = NEEDLES.get_or_init(|| {
        ["Summary", "Total ", "****", "L0 Backend"].map(memchr::memmem::Finder::new)
    });
    if !needles.iter().any(|n| n.find(line.as_bytes()).is_some()) {
        return None;
    }
    let mut best: Option<usize> = None;
    for m in labels().find_overlapping_iter(line) {
        let id = m.pattern().as_usize();
        let id = if id == SUBMISSION { 0 } else { id + 1 }; // submission first
        best = Some(best.map_or(id, |b| b.min(id)));
    }
    best.map(|id| if id == 0 { SUBMISSION } else { id - 1 })
}

/// 64-bit hash of a kernel or function name: the multiplicative Fx hash of
/// rustc with a final mix. Names are not attacker-chosen keys here, and
/// SipHash plus one allocation per row showed up in profiles.
pub fn name_hash(name: &str) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let bytes = name.as_bytes();
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ v).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ b as u64).wrapping_mul(K);
    }
    // Fx leaves the low bits weak; hashbrown uses both ends.
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// Hasher for maps whose keys already are [`name_hash`] values.
#[derive(Default, Clone, Copy)]
pub struct PrehashedKey(u64);

impl Hasher for PrehashedKey {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Index from name to position, keyed by [`name_hash`]; the caller keeps
/// the names. Hash collisions are resolved by probing the next key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameIndex {
    map: HashMap<u64, u32, BuildHasherDefault<PrehashedKey>>,
}

impl NameIndex {
    /// `Ok(i)` when `name` is already at position `i` (`name_of(i)`), else
    /// records it at `next` and returns `Err(next)`.
    pub fn find_or_insert<'n>(
        &mut self,
        hash: u64,
        name: &str,
        next: u32,
        name_of: impl Fn(u32) -> &'n str,
    ) -> Result<u32, u32> {
        let mut key = hash;
        loop {
            match self.map.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let i = *e.get();
                    if name_of(i) == name {
                        return Ok(i);
                    }
                    key = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(next);
                    return Err(next);
                }
            }
        }
    }
}

/// Time and calls of one name, summed over the rows of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameTotal<'a> {
    pub name: &'a str,
    /// [`name_hash`] of `name`, reusable by the caller's own maps.
    pub hash: u64,
    pub time_ns: i64,
    pub calls: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    start: u32,
    end: u32,
    hash: u64,
    time_ns: i64,
    calls: i64,
}

/// Names in first-seen order with one total each. Names live in one string
/// arena (no allocation per row).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameTotals {
    names: String,
    entries: Vec<Entry>,
    index: NameIndex,
}

impl NameTotals {
    fn add(&mut self, name: &str, time_ns: i64, calls: i64) -> Result<(), String> {
        let hash = name_hash(name);
        let NameTotals {
            names,
            entries,
            index,
        } = self;
        let next = entries.len() as u32;
        let found = index.find_or_insert(hash, name, next, |i| {
            let e = &entries[i as usize];
            &names[e.start as usize..e.end as usize]
        });
        match found {
            Ok(i) => {
                let e = &mut entries[i as usize];
                e.time_ns = e
                    .time_ns
                    .checked_add(time_ns)
                    .ok_or_else(|| format!("time of {name:?} overflows"))?;
                e.calls = e
                    .calls
                    .checked_add(calls)
                    .ok_or_else(|| format!("calls of {name:?} overflow"))?;
            }
            Err(_) => {
                let start = names.len();
                names.push_str(name);
                let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(names.len()))
                else {
                    return Err("more than 4 GiB of names in one file".to_string());
                };
                entries.push(Entry {
                    start,
                    end,
                    hash,
                    time_ns,
                    calls,
                });
            }
        }
        Ok(())
    }

    /// The totals in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = NameTotal<'_>> {
        self.entries.iter().map(|e| NameTotal {
            name: &self.names[e.start as usize..e.end as usize],
            hash: e.hash,
            time_ns: e.time_ns,
            calls: e.calls,
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One process's report inside a log: what summary.py counts as one sample
/// per name. A log holds one report, unless it is a job log or a `cat` of
/// rank logs holding several processes' reports back to back
/// (docs/formats.md#summary-text-order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessReport {
    /// Line of the report's first heading in the log.
    pub first_line: u64,
    /// Device bucket: `Wallclock`, `L0_backend` and the L0 kernel rows, in
    /// the order summary.py inserts them.
    pub device: NameTotals,
    /// CCL bucket: the `Function` rows of the `-r` block.
    pub comm: NameTotals,
    /// `Total Execution Time` of the device section, else of the API section.
    pub wallclock_ns: Option<i64>,
    /// `Total Device Time for L0 backend`.
    pub device_total_ns: Option<i64>,
    /// From the CCL banner `*  Process ID : P | Rank ID : R`.
    pub ccl_pid: Option<u64>,
    pub ccl_rank: Option<u64>,
}

/// What one log file (tar member) contributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberSummary {
    /// The reports in log order; empty when the log has no API, Device or
    /// Submission heading and no CCL block.
    pub reports: Vec<ProcessReport>,
    /// Device timeline lines (`-t`: `Thread T Device D : name [ns] …
    /// (append) … (end)`) before the first report: a log holding only these
    /// is a timeline, not a summary.
    pub timeline_lines: u64,
    /// Things the original would have counted or crashed on, for `-v`.
    pub notes: Vec<String>,
    /// Table rows with fewer fields than their header (a log cut mid-row, a
    /// row missing columns): each ended its table, so it and the rows after
    /// it in that table are not counted (docs/compatibility.md#summary).
    /// Callers warn.
    pub short_rows: Option<FlawCount>,
    /// Counted rows whose time is negative (summed as read). Callers warn.
    pub negative_times: Option<FlawCount>,
}

impl MemberSummary {
    /// An API, Device or Submission heading or a CCL block was seen.
    pub fn has_summary(&self) -> bool {
        !self.reports.is_empty()
    }
}

/// The first line of one kind of flaw in a file and how many there are, so
/// that a caller can warn once per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlawCount {
    pub first_line: u64,
    pub count: u64,
}

impl FlawCount {
    fn record(flaw: &mut Option<FlawCount>, line: u64) {
        match flaw {
            Some(f) => f.count += 1,
            None => {
                *flaw = Some(FlawCount {
                    first_line: line,
                    count: 1,
                })
            }
        }
    }
}

/// A problem in one file, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryError {
    pub line: u64,
    pub problem: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    None,
    Host,
    Device,
    Ccl,
    Submission,
}

/// Where the rows of the table being read go.
#[derive(Debug)]
enum Target {
    /// Device L0 table, keyed by `Kernel`, names normalized.
    Device,
    /// CCL table, keyed by `Function`; the block's rows until it ends.
    Ccl(NameTotals),
    /// Host or submission table: consumed, not counted.
    Skip,
}

#[derive(Debug)]
struct Table {
    target: Target,
    /// Line of the label that started the table.
    label_line: u64,
    /// `(key, time, calls)` columns and the header's field count, once the
    /// header has been read.
    columns: Option<((usize, usize, usize), usize)>,
}

/// Longest line a summary log may have. Kernel names, even templated ones
/// with shapes, are a few KB; a longer line is not a unitrace summary, and
/// the cap bounds the memory of a streamed member (docs/formats.md#summary-text).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Sections of one process's report in the order unitrace writes them
/// (API, Device, Submission, then the CCL block): a heading of a section
/// the report already has, or of one written before it, starts the next
/// process's report.
const SEEN_API: u8 = 1;
const SEEN_DEVICE: u8 = 2;
const SEEN_SUBMISSION: u8 = 4;
const SEEN_CCL: u8 = 8;

/// A CCL block of the report being read.
#[derive(Debug)]
struct CclBlock {
    /// The banner lines (`*  Process ID : P | Rank ID : R`); `None` for the
    /// totals summary.py files under CCL, which never repeat a block.
    banner: Option<String>,
    rows: NameTotals,
}

/// The report being read.
#[derive(Debug, Default)]
struct OpenReport {
    report: ProcessReport,
    seen: u8,
    /// CCL blocks in order; a repeated banner replaces its block.
    ccl_blocks: Vec<CclBlock>,
}

/// Incremental reader of one summary log: feed it lines in order
/// ([`SummaryParser::feed`]) and take the result with
/// [`SummaryParser::finish`]. Works on any line source, so a huge member can
/// be parsed while it streams out of the archive.
#[derive(Debug)]
pub struct SummaryParser {
    out: MemberSummary,
    /// The report being read (reports end at the next one's heading).
    open: Option<OpenReport>,
    section: Section,
    /// The CCL block being read: its banner lines, first line and ids.
    banner: String,
    banner_line: u64,
    banner_ids: (Option<u64>, Option<u64>),
    table: Option<Table>,
    lineno: u64,
    /// Recycled allocation for the fields of a row.
    fields_buf: Vec<Cow<'static, str>>,
}

impl Default for SummaryParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SummaryParser {
    pub fn new() -> SummaryParser {
        SummaryParser {
            out: MemberSummary::default(),
            open: None,
            section: Section::None,
            banner: String::new(),
            banner_line: 0,
            banner_ids: (None, None),
            table: None,
            lineno: 0,
            fields_buf: Vec::new(),
        }
    }

    /// Lines fed so far.
    pub fn lines(&self) -> u64 {
        self.lineno
    }

    /// Feeds the next line (without its `\n`; a trailing `\r` is ignored).
    pub fn feed(&mut self, line: &str) -> Result<(), SummaryError> {
        self.lineno += 1;
        if line.len() > MAX_LINE_BYTES {
            return Err(self.error(line_too_long()));
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        if self.table.is_some() && self.table_line(line)? {
            return Ok(());
        }
        self.scan_line(line)
    }

    /// Ends the file and returns what it contributes.
    pub fn finish(mut self) -> Result<MemberSummary, SummaryError> {
        self.end_table()?;
        self.close_report()?;
        Ok(self.out)
    }

    /// Ends the open report: its CCL blocks join its comm bucket.
    fn close_report(&mut self) -> Result<(), SummaryError> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let mut report = open.report;
        for block in open.ccl_blocks {
            for e in block.rows.iter() {
                report
                    .comm
                    .add(e.name, e.time_ns, e.calls)
                    .map_err(|problem| self.error(problem))?;
            }
        }
        self.out.reports.push(report);
        Ok(())
    }

    /// The open report, after closing it first when `section` was already
    /// seen in it or comes before one seen (another process's report).
    fn report_for(&mut self, section: u8) -> Result<&mut OpenReport, SummaryError> {
        let later_or_same = !(section - 1);
        if self
            .open
            .as_ref()
            .is_some_and(|open| open.seen & later_or_same != 0)
        {
            self.close_report()?;
        }
        let line = self.lineno;
        let open = self.open.get_or_insert_with(|| OpenReport {
            report: ProcessReport {
                first_line: line,
                ..ProcessReport::default()
            },
            ..OpenReport::default()
        });
        open.seen |= section;
        Ok(open)
    }

    fn error(&self, problem: String) -> SummaryError {
        SummaryError {
            line: self.lineno,
            problem,
        }
    }

    fn start_table(&mut self, target: Target) {
        self.table = Some(Table {
            target,
            label_line: self.lineno,
            columns: None,
        });
    }

    fn end_table(&mut self) -> Result<(), SummaryError> {
        let Some(table) = self.table.take() else {
            return Ok(());
        };
        match table.target {
            Target::Ccl(rows) => self.end_ccl_block(table.label_line, rows),
            _ => Ok(()),
        }
    }

    /// Files a CCL block: a copy of a block of the open report (unitrace
    /// writes the CCL summary twice) replaces it; a block with another banner
    /// after the open report's own block is the next process's report.
    fn end_ccl_block(&mut self, label_line: u64, rows: NameTotals) -> Result<(), SummaryError> {
        let banner = std::mem::take(&mut self.banner);
        let ids = std::mem::take(&mut self.banner_ids);
        let open = self.ccl_report();
        let repeated = open
            .ccl_blocks
            .iter()
            .position(|b| b.banner.as_deref() == Some(banner.as_str()));
        if let Some(i) = repeated {
            open.ccl_blocks[i].rows = rows;
            self.out.notes.push(format!(
                "line {label_line}: CCL block repeated; the later copy replaces the earlier"
            ));
            return Ok(());
        }
        if open.ccl_blocks.iter().any(|b| b.banner.is_some()) {
            self.close_report()?;
        }
        let open = self.ccl_report();
        if ids.0.is_some() {
            open.report.ccl_pid = ids.0;
        }
        if ids.1.is_some() {
            open.report.ccl_rank = ids.1;
        }
        open.ccl_blocks.push(CclBlock {
            banner: Some(banner),
            rows,
        });
        Ok(())
    }

    /// The open report for the CCL block being read (a new one starting at
    /// the block's banner when none is open).
    fn ccl_report(&mut self) -> &mut OpenReport {
        let line = self.banner_line;
        let open = self.open.get_or_insert_with(|| OpenReport {
            report: ProcessReport {
                first_line: line,
                ..ProcessReport::default()
            },
            ..OpenReport::default()
        });
        open.seen |= SEEN_CCL;
        open
    }

    /// A line while a table is open (summary.py's `csv_from`: the next
    /// non-blank line is the header, rows follow up to a blank line).
    /// Returns false when the line ended the table without belonging to it
    /// (a `*` line or too few fields, docs/compatibility.md#summary-2): it is then scanned
    /// for labels like any other line.
    fn table_line(&mut self, line: &str) -> Result<bool, SummaryError> {
        let lineno = self.lineno;
        let Some(table) = self.table.as_mut() else {
            return Ok(false);
        };
        // Rows are right-aligned: find the first non-blank byte once.
        let first = line.bytes().position(|b| !b.is_ascii_whitespace());
        let Some(((key_col, time_col, calls_col), ncols)) = table.columns else {
            if first.is_none() {
                return Ok(true);
            }
            let columns: Vec<&str> = line.trim().split(',').map(str::trim).collect();
            let column = |name: &str| columns.iter().rposition(|c| *c == name);
            let key = match table.target {
                Target::Device => "Kernel",
                Target::Ccl(_) => "Function",
                Target::Skip => "",
            };
            let found = if matches!(table.target, Target::Skip) {
                Some((0, 0, 0))
            } else {
                column(key)
                    .zip(column("Time (ns)"))
                    .zip(column("Calls"))
                    .map(|((k, t), c)| (k, t, c))
            };
            let Some(cols) = found else {
                let missing = [key, "Time (ns)", "Calls"]
                    .into_iter()
                    .find(|name| column(name).is_none())
                    .unwrap_or(key);
                return Err(SummaryError {
                    line: lineno,
                    problem: format!("table header has no {missing:?} column: {:?}", line.trim()),
                });
            };
            table.columns = Some((cols, columns.len()));
            return Ok(true);
        };
        match first {
            None => {
                self.end_table()?;
                return Ok(true);
            }
            Some(at) if line.as_bytes()[at] == b'*' => {
                self.end_table()?;
                return Ok(false);
            }
            Some(_) => {}
        }
        let mut fields: Vec<Cow<'_, str>> = std::mem::take(&mut self.fields_buf)
            .into_iter()
            .map(|_| Cow::Borrowed(""))
            .collect();
        split_row(line, &mut fields);
        let result = self.table_row(line, &mut fields, (key_col, time_col, calls_col), ncols);
        fields.clear();
        self.fields_buf = fields.into_iter().map(|_| Cow::Borrowed("")).collect();
        result
    }

    fn table_row<'l>(
        &mut self,
        line: &'l str,
        fields: &mut [Cow<'l, str>],
        (key_col, time_col, calls_col): (usize, usize, usize),
        ncols: usize,
    ) -> Result<bool, SummaryError> {
        if fields.len() < ncols {
            // A label line (the next block written without a blank line
            // before it) ends a table normally; any other short line is a
            // damaged row of a counted table.
            let counted = self
                .table
                .as_ref()
                .is_some_and(|t| !matches!(t.target, Target::Skip));
            if counted && find_label(line).is_none() {
                FlawCount::record(&mut self.out.short_rows, self.lineno);
            }
            self.end_table()?;
            return Ok(false);
        }
        let Some(table) = self.table.as_mut() else {
            return Ok(true);
        };
        if matches!(table.target, Target::Skip) {
            return Ok(true);
        }
        let mut shift = 0;
        if fields.len() > ncols && key_col == 0 {
            // Old unquoted name with commas (docs/compatibility.md#summary-7): the extra
            // fields belong to the name.
            shift = fields.len() - ncols;
            let name_len: usize = line
                .splitn(shift + 2, ',')
                .take(shift + 1)
                .map(|p| p.len() + 1)
                .sum::<usize>()
                - 1;
            fields[0] = Cow::Borrowed(line[..name_len.min(line.len())].trim_start());
        }
        let get = |col: usize| -> &str {
            let col = if col == key_col { col } else { col + shift };
            fields.get(col).map(|f| f.as_ref()).unwrap_or("")
        };
        let lineno = self.lineno;
        let number = |col: usize, what: &str| -> Result<i64, SummaryError> {
            parse_int(get(col)).ok_or_else(|| SummaryError {
                line: lineno,
                problem: format!("{what} is not an integer: {:?}", get(col)),
            })
        };
        let time = number(time_col, "\"Time (ns)\"")?;
        let calls = number(calls_col, "\"Calls\"")?;
        if time < 0 {
            FlawCount::record(&mut self.out.negative_times, lineno);
        }
        let raw_name = get(key_col);
        let added = match &mut table.target {
            Target::Device => match self.open.as_mut() {
                Some(open) => open
                    .report
                    .device
                    .add(&normalize_kernel_name(raw_name), time, calls),
                None => Ok(()),
            },
            Target::Ccl(rows) => rows.add(raw_name, time, calls),
            Target::Skip => Ok(()),
        };
        added.map_err(|problem| SummaryError {
            line: lineno,
            problem,
        })?;
        Ok(true)
    }

    /// summary.py's label scan for a line outside tables (docs/formats.md#summary-text).
    fn scan_line(&mut self, line: &str) -> Result<(), SummaryError> {
        let lineno = self.lineno;
        let Some(label) = find_label(line) else {
            if self.section == Section::Ccl {
                self.banner.push_str(line.trim());
                self.banner.push('\n');
                parse_ccl_banner(line, &mut self.banner_ids);
            } else if self.open.is_none() && self.out.reports.is_empty() && is_timeline_line(line) {
                self.out.timeline_lines += 1;
            }
            return Ok(());
        };
        match label {
            SUBMISSION => {
                self.report_for(SEEN_SUBMISSION)?;
                self.section = Section::Submission;
            }
            API => {
                self.report_for(SEEN_API)?;
                self.section = Section::Host;
            }
            DEVICE => {
                self.report_for(SEEN_DEVICE)?;
                self.section = Section::Device;
            }
            STARS if self.section != Section::Ccl => {
                self.section = Section::Ccl;
                self.banner.clear();
                self.banner_line = lineno;
                self.banner_ids = (None, None);
            }
            STARS => {
                self.start_table(Target::Ccl(NameTotals::default()));
                self.section = Section::None;
            }
            TOTAL_EXEC | TOTAL_API_L0 | TOTAL_DEVICE_L0 => {
                let value = total_value(line).ok_or_else(|| {
                    self.error(format!(
                        "no integer after the last `:` in {:?}",
                        line.trim()
                    ))
                })?;
                let name = if label == TOTAL_EXEC {
                    WALLCLOCK
                } else {
                    L0_BACKEND
                };
                match (self.section, self.open.as_mut()) {
                    (Section::Device, Some(open)) => {
                        let report = &mut open.report;
                        report
                            .device
                            .add(name, value, 1)
                            .map_err(|problem| SummaryError {
                                line: lineno,
                                problem,
                            })?;
                        if label == TOTAL_EXEC {
                            report.wallclock_ns = Some(value);
                        } else {
                            report.device_total_ns = Some(value);
                        }
                    }
                    (Section::Host, Some(open)) => {
                        if label == TOTAL_EXEC && open.report.wallclock_ns.is_none() {
                            open.report.wallclock_ns = Some(value);
                        }
                    }
                    (Section::Ccl, _) => {
                        // summary.py files it under the CCL bucket (section 2).
                        let mut rows = NameTotals::default();
                        rows.add(name, value, 1)
                            .map_err(|problem| self.error(problem))?;
                        self.ccl_report()
                            .ccl_blocks
                            .push(CclBlock { banner: None, rows });
                    }
                    (Section::Submission, _) => self.out.notes.push(format!(
                        "line {lineno}: {:?} of a Kernel Submission Summary ignored \
                         (summary.py counts it a second time, docs/compatibility.md#summary)",
                        line.trim()
                    )),
                    (Section::None | Section::Host | Section::Device, _) => {
                        self.out.notes.push(format!(
                            "line {lineno}: {:?} outside an API/Device section ignored \
                             (summary.py files it under CCL, docs/compatibility.md#summary)",
                            line.trim()
                        ))
                    }
                }
            }
            L0_TABLE => match self.section {
                Section::Device => self.start_table(Target::Device),
                Section::Host | Section::Submission => self.start_table(Target::Skip),
                Section::None | Section::Ccl => {}
            },
            _ => {}
        }
        Ok(())
    }
}

/// Parses one whole summary log.
pub fn parse_summary(text: &str) -> Result<MemberSummary, SummaryError> {
    let mut parser = SummaryParser::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, tail) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, ""),
        };
        parser.feed(line)?;
        rest = tail;
    }
    parser.finish()
}

/// The error of a line above [`MAX_LINE_BYTES`].
fn line_too_long() -> String {
    format!(
        "line longer than {} MiB: not a unitrace summary",
        MAX_LINE_BYTES >> 20
    )
}

/// A device timeline line of `-t`:
/// `Thread T Device D : name [ns] A (append) S (submit) B (start) E (end)`.
pub fn is_timeline_line(line: &str) -> bool {
    let line = line.trim_end();
    line.starts_with("Thread ")
        && line.ends_with(" (end)")
        && memchr::memmem::find(line.as_bytes(), b" (append) ").is_some()
}

/// `(pid, rank)` from a CCL banner line.
fn parse_ccl_banner(line: &str, ids: &mut (Option<u64>, Option<u64>)) {
    let number_after = |key: &str| -> Option<u64> {
        let at = line.find(key)? + key.len();
        let rest = line[at..].trim_start().strip_prefix(':')?.trim_start();
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    };
    if let Some(pid) = number_after("Process ID") {
        ids.0 = Some(pid);
    }
    if let Some(rank) = number_after("Rank ID") {
        ids.1 = Some(rank);
    }
}

/// `int(line.rpartition(':')[2])`.
fn total_value(line: &str) -> Option<i64> {
    let (_, value) = line.rsplit_once(':')?;
    parse_int(value)
}

/// Python `int(text)` for the values unitrace writes: optional sign, decimal
/// digits, surrounding whitespace.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() {
        return None;
    }
    digits.parse().ok()
}

/// Splits a padded CSV row like Python's `csv` with `skipinitialspace=True`,
/// except that a `Tile #n: "…"` field (docs/formats.md#summary-text-device, `--separate-tiles`) is
/// read as one field whose quoted part may contain commas.
fn split_row<'a>(line: &'a str, fields: &mut Vec<Cow<'a, str>>) {
    fields.clear();
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let tile_quote = tile_prefix_len(&line[i..]).map(|n| i + n);
        if i < bytes.len() && (bytes[i] == b'"' || tile_quote.is_some()) {
            // Fast path: `"name",` with no doubled quote inside.
            if tile_quote.is_none() {
                if let Some(k) = memchr::memchr(b'"', &bytes[i + 1..]) {
                    let close = i + 1 + k;
                    if close + 1 == bytes.len() || bytes[close + 1] == b',' {
                        fields.push(Cow::Borrowed(&line[i + 1..close]));
                        if close + 1 >= bytes.len() {
                            return;
                        }
                        i = close + 2;
                        continue;
                    }
                }
            }
            let prefix_end = tile_quote.unwrap_or(i);
            let mut value = String::from(&line[i..prefix_end]);
            let mut j = prefix_end + 1;
            while j < bytes.len() {
                match memchr::memchr(b'"', &bytes[j..]) {
                    Some(k) => {
                        value.push_str(&line[j..j + k]);
                        j += k + 1;
                        if j < bytes.len() && bytes[j] == b'"' {
                            value.push('"');
                            j += 1;
                        } else {
                            break;
                        }
                    }
                    None => {
                        value.push_str(&line[j..]);
                        j = bytes.len();
                    }
                }
            }
            // Characters after the closing quote up to the comma are kept.
            let end = memchr::memchr(b',', &bytes[j..]).map_or(bytes.len(), |k| j + k);
            value.push_str(&line[j..end]);
            fields.push(Cow::Owned(value));
            if end >= bytes.len() {
                return;
            }
            i = end + 1;
        } else {
            let end = memchr::memchr(b',', &bytes[i..]).map_or(bytes.len(), |k| i + k);
            fields.push(Cow::Borrowed(&line[i..end]));
            if end >= bytes.len() {
                return;
            }
            i = end + 1;
        }
    }
}

/// Length of `Tile #<digits>: ` when `s` starts with it followed by a quote.
fn tile_prefix_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("Tile #")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = rest[digits..].strip_prefix(":")?;
    let spaces = after.bytes().take_while(|b| *b == b' ').count();
    after[spaces..]
        .starts_with('"')
        .then_some(6 + digits + 1 + spaces)
}

/// Kernel name as a schema should see it (docs/compatibility.md#summary-6): without the
/// `Tile #n: ` prefix of `--separate-tiles` and without the `-v` shape
/// suffix (`[SIMD32 {..} {..}]`, or `[<bytes>]` after memory commands).
pub fn normalize_kernel_name(name: &str) -> Cow<'_, str> {
    let mut cut = name;
    if let Some(n) = tile_prefix_len(name) {
        // The splitter already removed the quotes; only the prefix is left.
        cut = &name[n..];
    } else if name.starts_with("Tile #") {
        if let Some(at) = name.find(": ") {
            cut = &name[at + 2..];
        }
    }
    if let Some(body) = cut.strip_suffix(']') {
        if let Some(open) = body.rfind('[') {
            let shape = &body[open + 1..];
            if shape.starts_with("SIMD")
                || (!shape.is_empty() && shape.bytes().all(|b| b.is_ascii_digit()))
            {
                cut = &cut[..open];
            }
        }
    }
    if cut.len() == name.len() {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(cut.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &NameTotals) -> Vec<(&str, i64, i64)> {
        t.iter().map(|e| (e.name, e.time_ns, e.calls)).collect()
    }

    /// The only report of a one-process log.
    fn only(text: &str) -> ProcessReport {
        let mut s = parse_summary(text).unwrap();
        assert_eq!(s.reports.len(), 1, "{s:?}");
        s.reports.pop().unwrap()
    }

    const DEVICE_LOG: &str = "\n=== API Timing Summary ===\n\n             Total Execution Time (ns):             81615043\n    Total API Time for L0 backend (ns):             31476739\n\n== L0 Backend ==\n\n                              Function,        Calls,            Time (ns),      Time (%),         Average (ns),             Min (ns),             Max (ns)\n          zeCommandListHostSynchronize,            8,             19911548,     63.257973,              2488943,                 1270,              5135361\n\n\n=== Device Timing Summary ===\n\n                Total Execution Time (ns):            214649009\n    Total Device Time for L0 backend (ns):             97642160\n\n== L0 Backend ==\n\n                              Kernel,        Calls,            Time (ns),     Time (%),         Average (ns),             Min (ns),             Max (ns)\n          \"main::{lambda(auto:1)#4}\",            5,              2091520,    88.620728,               418304,               405280,               466400\n\"zeCommandListAppendMemoryCopy(H2H)\",            1,                18000,     0.762686,                18000,                18000,                18000\n          \"main::{lambda(auto:1)#4}\",            2,                 1000,    88.620728,               418304,               405280,               466400\n\n\n=== Kernel Properties ===\n\n                              Kernel, Compiled, SIMD\n          \"main::{lambda(auto:1)#4}\",      JIT,   32\n\n\n";

    const CCL: &str = "************************************************************\n*  Process ID : 52110 | Rank ID : 1\n************************************************************\n     Function,        Calls,           Time (ns),     Time (%),        Average (ns),            Min (ns),            Max (ns)\n    allreduce,           10,             1000000,    90.000000,              100000,               90000,              110000\n      barrier,            5,              111111,    10.000000,               22222,               20000,               25000\n";

    #[test]
    fn device_and_host_sections() {
        let s = only(DEVICE_LOG);
        assert_eq!(s.first_line, 2);
        assert_eq!(
            names(&s.device),
            vec![
                ("Wallclock", 214649009, 1),
                ("L0_backend", 97642160, 1),
                // two rows of one name are summed (docs/compatibility.md#summary-4)
                ("main::{lambda(auto:1)#4}", 2092520, 7),
                ("zeCommandListAppendMemoryCopy(H2H)", 18000, 1),
            ]
        );
        assert!(s.comm.is_empty());
        assert_eq!(s.wallclock_ns, Some(214649009));
    }

    #[test]
    fn ccl_block_twice_is_counted_once() {
        // docs/compatibility.md#summary-2: summary.py crashes on the second banner.
        let text = format!("{DEVICE_LOG}{CCL}{CCL}");
        let s = only(&text);
        assert_eq!(
            names(&s.comm),
            vec![("allreduce", 1000000, 10), ("barrier", 111111, 5)]
        );
        assert_eq!((s.ccl_pid, s.ccl_rank), (Some(52110), Some(1)));
    }

    #[test]
    fn submission_block_is_ignored() {
        // docs/compatibility.md#summary-1: summary.py counts the totals twice and fails
        // with KeyError on the table.
        let sub = "\n=== Kernel Submission Summary ===\n\n                Total Execution Time (ns):            214649009\n    Total Device Time for L0 backend (ns):             97642160\n\n== L0 Backend ==\n\n  Kernel,        Calls,          Append (ns),  Append (%)\n  \"gemm\",            4,                 4321,   12.233515\n\n";
        let s = only(&format!("{DEVICE_LOG}{sub}"));
        assert_eq!(s.device.len(), 4);
        assert_eq!(s.device.iter().next().unwrap().time_ns, 214649009);
    }

    #[test]
    fn totals_outside_sections_are_ignored() {
        // docs/compatibility.md#summary-3.
        let s = parse_summary("Total Execution Time (ns): 5\n").unwrap();
        assert!(s.reports.is_empty());
        assert!(!s.has_summary());
        assert_eq!(s.timeline_lines, 0);
        assert_eq!(s.notes.len(), 1);
    }

    #[test]
    fn tiles_shapes_and_unquoted_commas() {
        let text = "=== Device Timing Summary ===\n== L0 Backend ==\n\n Kernel, Calls, Time (ns), Time (%)\nTile #1: \"a<int, 2>[SIMD16 {1; 1; 1} {2; 1; 1}]\", 3, 30, 1.0\nTile #0: \"a<int, 2>\", 1, 10, 1.0\n\"copy(M2D)[4096]\", 2, 7, 1.0\nb<x, y>, 1, 5, 1.0\n\n";
        let s = only(text);
        assert_eq!(
            names(&s.device),
            vec![("a<int, 2>", 40, 4), ("copy(M2D)", 7, 2), ("b<x, y>", 5, 1)]
        );
    }

    #[test]
    fn name_index_survives_hash_collisions() {
        let names = ["a", "b", "c"];
        let mut index = NameIndex::default();
        // Same hash for every name: each must still get its own slot.
        for (i, n) in names.iter().enumerate() {
            assert_eq!(
                index.find_or_insert(7, n, i as u32, |j| names[j as usize]),
                Err(i as u32)
            );
        }
        for (i, n) in names.iter().enumerate() {
            assert_eq!(
                index.find_or_insert(7, n, 9, |j| names[j as usize]),
                Ok(i as u32)
            );
        }
    }

    #[test]
    fn crlf_lines_parse_like_lf() {
        let crlf = DEVICE_LOG.replace('\n', "\r\n");
        assert_eq!(names(&only(&crlf).device), names(&only(DEVICE_LOG).device));
    }

    #[test]
    fn bad_number_names_the_line() {
        let text = "=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", x, 5\n";
        let e = parse_summary(text).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.problem.contains("\"Calls\" is not an integer"), "{e:?}");
    }

    #[test]
    fn label_order_follows_summary_py() {
        assert_eq!(find_label("== L0 Backend =="), Some(L0_TABLE));
        assert_eq!(
            find_label("Total Device Time for L0 backend (ns): 5"),
            Some(TOTAL_DEVICE_L0)
        );
        assert_eq!(
            find_label("=== Kernel Submission Summary ==="),
            Some(SUBMISSION)
        );
        assert_eq!(find_label(&"*".repeat(60)), Some(STARS));
        assert_eq!(find_label("*  Process ID : 1 | Rank ID : 0"), None);
    }

    #[test]
    fn short_rows_of_counted_tables_are_counted_for_a_warning() {
        let text = "=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", 2, 30\n\"cut\", 1\n\"j\", 1, 5\n";
        let s = parse_summary(text).unwrap();
        assert_eq!(
            s.short_rows,
            Some(FlawCount {
                first_line: 6,
                count: 1
            })
        );
        // The table ended at line 6: line 7 is not counted.
        assert_eq!(names(&s.reports[0].device), [("k", 30, 2)]);
        // A label line ending a table is not a damaged row, and neither are
        // the rows of tables that are not counted (host API tables).
        let labelled = "=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", 2, 30\n=== API Timing Summary ===\n";
        assert_eq!(parse_summary(labelled).unwrap().short_rows, None);
        assert_eq!(parse_summary(DEVICE_LOG).unwrap().short_rows, None);
    }

    #[test]
    fn negative_times_are_summed_and_counted_for_a_warning() {
        let text = "=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", 2, 30\n\"k\", 1, -40\n\"j\", 1, -1\n";
        let s = parse_summary(text).unwrap();
        assert_eq!(
            s.negative_times,
            Some(FlawCount {
                first_line: 6,
                count: 2
            })
        );
        assert_eq!(names(&s.reports[0].device), [("k", -10, 3), ("j", -1, 1)]);
        assert_eq!(parse_summary(DEVICE_LOG).unwrap().negative_times, None);
    }

    #[test]
    fn reports_back_to_back_are_one_report_each() {
        // `cat` of three rank logs: API+Device+CCL, Device only, CCL only.
        let ccl2 = CCL.replace("52110 | Rank ID : 1", "52111 | Rank ID : 2");
        let ccl3 = CCL.replace("52110 | Rank ID : 1", "52112 | Rank ID : 3");
        let device_only = &DEVICE_LOG[DEVICE_LOG.find("=== Device").unwrap()..];
        let text = format!("{DEVICE_LOG}{CCL}{CCL}{device_only}{ccl2}{ccl3}");
        let s = parse_summary(&text).unwrap();
        assert_eq!(s.reports.len(), 3, "{:#?}", s.reports);
        let [a, b, c] = [&s.reports[0], &s.reports[1], &s.reports[2]];
        // The first process: its two CCL copies count once.
        assert_eq!(a.first_line, 2);
        assert_eq!((a.ccl_pid, a.ccl_rank), (Some(52110), Some(1)));
        assert_eq!(names(&a.comm)[0], ("allreduce", 1000000, 10));
        // The second: its own totals, not the sum or the last of all.
        let second_device = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("=== Device"))
            .nth(1)
            .unwrap()
            .0 as u64
            + 1;
        assert_eq!(b.first_line, second_device);
        assert_eq!(names(&b.device), names(&a.device));
        assert_eq!(b.wallclock_ns, Some(214649009));
        assert_eq!((b.ccl_pid, b.ccl_rank), (Some(52111), Some(2)));
        // The third holds only its CCL block, from its banner on.
        assert!(c.device.is_empty());
        assert_eq!((c.ccl_pid, c.ccl_rank), (Some(52112), Some(3)));
        assert_eq!(names(&c.comm).len(), 2);
        assert!(c.first_line > b.first_line);
        assert_eq!(
            text.lines().nth(c.first_line as usize - 1),
            Some("*".repeat(60).as_str())
        );
    }

    #[test]
    fn api_after_device_starts_the_next_report() {
        // unitrace writes API, Device, Submission, CCL in this order.
        let text = format!("{DEVICE_LOG}{DEVICE_LOG}");
        let s = parse_summary(&text).unwrap();
        assert_eq!(s.reports.len(), 2);
        assert_eq!(s.reports[0].device, s.reports[1].device);
    }

    #[test]
    fn device_timeline_lines_are_counted_before_any_report() {
        let timeline = "Thread 47110 Device 0x44e4920 : GEMM [ns] 542 (append) 543 (submit) 544 (start) 545 (end)\n\nThread 57894 Device 466787824 : \"main::{lambda(auto:1)#4}[SIMD8 {256; 1; 1}]\" [ns] 1 (append) 2 (submit) 3 (start) 4 (end)\r\n";
        let s = parse_summary(timeline).unwrap();
        assert!(!s.has_summary());
        assert_eq!(s.timeline_lines, 2);
        assert!(!is_timeline_line("Thread 1 Device 2 : k [ns] 1 (append)"));
        // `-t -d`: the timeline comes first, then the summary.
        let s = parse_summary(&format!("{timeline}{DEVICE_LOG}")).unwrap();
        assert_eq!((s.timeline_lines, s.reports.len()), (2, 1));
    }

    #[test]
    fn a_line_above_the_cap_is_an_error_at_its_line() {
        let text = format!(
            "=== Device Timing Summary ===\n{}\n",
            "x".repeat(MAX_LINE_BYTES + 1)
        );
        let e = parse_summary(&text).unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.problem, "line longer than 1 MiB: not a unitrace summary");
        let at_cap = format!(
            "=== Device Timing Summary ===\n{}\n",
            "x".repeat(MAX_LINE_BYTES)
        );
        assert!(parse_summary(&at_cap).is_ok());
    }
}
