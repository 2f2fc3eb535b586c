//! Low-level reader shared by the metric CSV (docs/formats.md#metric-csv) and stall CSV
//! (docs/formats.md#stall-csv) parsers: splits a file into device sections, finds each
//! section's header, and hands out data rows and instance separators as
//! borrowed [`Event`]s, one line at a time, from one reused buffer.
//!
//! Layout rules (docs/formats.md#metric-csv-layout, #metric-csv-reading,
//! #stall-csv-layout; docs/compatibility.md#analyze-sections):
//! * a *banner* is a line containing both `=== Device` and `Metrics ===`; the
//!   device number is the first whitespace-separated token starting with `#`;
//! * the *header* of a section is the first line after the banner that starts
//!   with `Kernel,` (metric file) or contains `OtherStall[Events]` (stall
//!   file); lines between banner and header are ignored;
//! * a file without any banner (`--result-dir` layout, old main logs) is one
//!   section whose device is `None`; it starts at its first header line.
//!   Lines before the first banner of a file that has banners are ignored
//!   (the original never reads them);
//! * an empty line, a row whose kernel field is empty (`""` or nothing) and a
//!   repeated header line (old `== Kernel Metrics ==` logs repeat the header
//!   before every instance) are *separators*: they end a kernel instance;
//! * fields are split on commas outside double quotes; leading blanks of a
//!   field are skipped (padded stall files), a field that then starts with
//!   `"` runs to the next `"` that is followed by optional blanks and a comma
//!   or the end of the line (kernel names contain commas, `<>`, `{}`, `'`);
//! * a header that ends with a separator (files before 2024-12) has one
//!   trailing empty field, which is not a column; its rows end the same way.
//!
//! Memory is bounded by the longest line (at most [`MAX_LINE_BYTES`]) plus a
//! fixed read buffer, whatever the file size.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use memchr::memmem;

use crate::error::InputError;

/// Longest line accepted. Real lines are a few KB (the PVC header is ~2 KB,
/// long template kernel names a few tens of KB); a longer line means the
/// file is not a unitrace CSV, and refusing it keeps memory bounded.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Bytes requested from the underlying reader per `read` call.
const READ_CHUNK: usize = 256 * 1024;

const BANNER_START: &[u8] = b"=== Device";
const BANNER_END: &[u8] = b"Metrics ===";
const STALL_HEADER_MARK: &[u8] = b"OtherStall[Events]";
const METRIC_HEADER_PREFIX: &[u8] = b"Kernel,";

/// Whether a section holds hardware metrics (docs/formats.md#metric-csv) or stall samples
/// (docs/formats.md#stall-csv); decided by its header line (docs/compatibility.md#analyze-input-checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    Metric,
    Stall,
}

/// The header line of one section: column names in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    kind: FileKind,
    columns: Vec<String>,
    trailing_separator: bool,
    kernel_index: usize,
    line: u64,
}

impl Header {
    /// Parses a header line (`line` is its 1-based line number, used in
    /// errors). Column names are trimmed and unquoted; non-UTF-8 bytes are
    /// replaced lossily.
    pub fn parse(text: &[u8], line: u64, path: &Path) -> Result<Header, InputError> {
        let kind = if memmem::find(text, STALL_HEADER_MARK).is_some() {
            FileKind::Stall
        } else {
            FileKind::Metric
        };
        let mut fields = Vec::new();
        split_fields(text, &mut fields).map_err(|p| InputError::at_line(path, line, p))?;
        let trailing_separator =
            fields.len() > 1 && fields.last().is_some_and(|f| f.range.is_empty());
        if trailing_separator {
            fields.pop();
        }
        let columns: Vec<String> = fields
            .iter()
            .map(|f| String::from_utf8_lossy(&text[f.range.clone()]).into_owned())
            .collect();
        if let Some(i) = columns.iter().position(String::is_empty) {
            return Err(InputError::at_line(
                path,
                line,
                format!("header column {} has no name", i + 1),
            ));
        }
        // Two columns of one name make `-m NAME` and every reader that
        // looks a column up by name ambiguous (pandas silently renames the
        // second `NAME.1`): refuse the header (docs/errors.md#ambiguous-inputs).
        let mut seen = std::collections::HashMap::with_capacity(columns.len());
        for (i, c) in columns.iter().enumerate() {
            if let Some(first) = seen.insert(c.as_str(), i) {
                return Err(InputError::at_line(
                    path,
                    line,
                    format!(
                        "column `{c}` appears twice (fields {} and {})",
                        first + 1,
                        i + 1
                    ),
                ));
            }
        }
        let kernel_index = columns
            .iter()
            .position(|c| c == "Kernel")
            .ok_or_else(|| InputError::at_line(path, line, "header has no `Kernel` column"))?;
        let header = Header {
            kind,
            columns,
            trailing_separator,
            kernel_index,
            line,
        };
        if header.data_columns().next().is_none() {
            return Err(InputError::at_line(
                path,
                line,
                "header names no metric: only kernel/id columns",
            ));
        }
        Ok(header)
    }

    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Column names in file order (the trailing separator's empty field of
    /// old files is not a column).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Index of the column called `name` (first one if repeated).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Index of the `Kernel` column (0 in every known file; looked up by
    /// name all the same).
    pub fn kernel_index(&self) -> usize {
        self.kernel_index
    }

    /// Number of fields every row must have (columns, plus one when lines
    /// end with a separator).
    pub fn field_count(&self) -> usize {
        self.columns.len() + usize::from(self.trailing_separator)
    }

    /// True for files written before 2024-12, whose lines end with `,`/`, `.
    pub fn has_trailing_separator(&self) -> bool {
        self.trailing_separator
    }

    /// 1-based line number of the header line.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Columns that carry data: everything except `Kernel`, the instance /
    /// device ids and `IP[Address]`.
    pub fn data_columns(&self) -> impl Iterator<Item = (usize, &str)> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !ID_COLUMNS.contains(&c.as_str()))
            .map(|(i, c)| (i, c.as_str()))
    }

    /// Columns `analyze -l` lists under `Metric` (docs/compatibility.md#analyze-list): metric
    /// files: every column except `Kernel` and `GlobalInstanceId` up to and
    /// including `StreamMarker`; stall files: every column except `Kernel`
    /// and `IP[Address]` up to and including `OtherStall[Events]`.
    /// The original also lists `GlobalInstanceId`, which numbers kernel
    /// instances and is no metric (docs/compatibility.md#analyze-list-instance-id).
    pub fn listed_metrics(&self) -> Vec<&str> {
        let (skip, last): (&[&str], &str) = match self.kind {
            FileKind::Metric => (&["Kernel", "GlobalInstanceId"], "StreamMarker"),
            FileKind::Stall => (&["Kernel", "IP[Address]"], "OtherStall[Events]"),
        };
        let mut out = Vec::new();
        for c in &self.columns {
            if skip.contains(&c.as_str()) {
                continue;
            }
            out.push(c.as_str());
            if c == last {
                break;
            }
        }
        out
    }
}

/// Columns that identify a row rather than measure something.
const ID_COLUMNS: &[&str] = &[
    "Kernel",
    "GlobalInstanceId",
    "SubDeviceId",
    "Device",
    "IP[Address]",
];

/// Why a line ends the current kernel instance without being a data row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeparatorKind {
    /// An empty (or blank-only) line.
    BlankLine,
    /// A row whose kernel field is empty or `""` (unresolved kernel name);
    /// the original reads it as missing and treats it like a blank line.
    EmptyKernel,
    /// The section's header line again (old main-log format).
    RepeatedHeader,
}

/// One step of reading a file. Borrowed from the reader: valid until the
/// next call of [`CsvReader::next_event`].
#[derive(Debug)]
pub enum Event<'a> {
    /// A device section starts: at its banner line, or (banner-less file)
    /// at its header line.
    SectionStart {
        index: usize,
        device: Option<i64>,
        line: u64,
        offset: u64,
    },
    /// The header of the current section.
    Header(&'a Header),
    /// A data row of the current section.
    Row(RawRow<'a>),
    /// A line that ends the current instance (see [`SeparatorKind`]).
    Separator {
        kind: SeparatorKind,
        line: u64,
        offset: u64,
    },
    /// The current section ended at `end_offset` (start of the next banner
    /// line, or end of file).
    SectionEnd { index: usize, end_offset: u64 },
}

/// One data row, split lazily: only the kernel field is located and the
/// field count checked while reading; other fields are split on request.
#[derive(Debug, Clone, Copy)]
pub struct RawRow<'a> {
    text: &'a [u8],
    kernel: (usize, usize),
    line: u64,
    offset: u64,
    end_offset: u64,
    header: &'a Header,
    path: &'a Path,
}

impl<'a> RawRow<'a> {
    /// The line without its terminator.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// 1-based line number.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Byte offset of the first byte of the line in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Byte offset just past the line's terminator.
    pub fn end_offset(&self) -> u64 {
        self.end_offset
    }

    pub fn header(&self) -> &'a Header {
        self.header
    }

    /// Kernel field without padding and quotes, as bytes.
    pub fn kernel_bytes(&self) -> &'a [u8] {
        &self.text[self.kernel.0..self.kernel.1]
    }

    /// Kernel field as text; invalid UTF-8 is replaced lossily.
    pub fn kernel(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.kernel_bytes())
    }

    /// Splits the row into fields (content ranges without padding/quotes)
    /// into `out`, reusing its allocation. `out.len()` equals
    /// `header().field_count()` (checked while reading).
    pub fn split(&self, out: &mut Vec<Field>) -> Result<(), InputError> {
        split_fields(self.text, out).map_err(|p| self.error(p))
    }

    /// Content of field `range` (from [`RawRow::split`]).
    pub fn field_bytes(&self, field: &Field) -> &'a [u8] {
        &self.text[field.range.clone()]
    }

    /// An error positioned at this row.
    pub fn error(&self, problem: impl Into<String>) -> InputError {
        InputError::at_line(self.path, self.line, problem)
    }
}

/// A field of a line: the content range (padding and quotes removed) and
/// whether it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub range: Range<usize>,
    pub quoted: bool,
}

/// A device section found by [`scan_sections`].
#[derive(Debug, Clone)]
pub struct SectionInfo {
    /// 0-based position among the file's sections.
    pub index: usize,
    /// Banner number; `None` for a banner-less file.
    pub device: Option<i64>,
    /// Offset and 1-based line of the section start (banner line, or the
    /// header line when there is no banner). Reading can resume there with
    /// [`CsvReader::resume`].
    pub start_offset: u64,
    pub start_line: u64,
    /// End of the section: start of the next banner line or end of file.
    pub end_offset: u64,
    pub header: Header,
}

impl SectionInfo {
    pub fn kind(&self) -> FileKind {
        self.header.kind()
    }
}

/// The section `analyze -d DEVICE` reads (docs/compatibility.md#analyze-sections): the first section
/// whose banner carries `DEVICE`. A banner-less file is one section and is
/// device 0 (docs/compatibility.md#analyze-quirk-15, fixed: the original rejects it).
pub fn find_device_section(sections: &[SectionInfo], device: i64) -> Option<&SectionInfo> {
    if let Some(s) = sections.iter().find(|s| s.device == Some(device)) {
        return Some(s);
    }
    if device == 0 && sections.iter().all(|s| s.device.is_none()) {
        return sections.first();
    }
    None
}

/// Opens an input file with the checks of docs/compatibility.md#analyze-input-checks (wording
/// kept, in our `FILE: problem` form).
pub fn open_input(path: &Path) -> Result<File, InputError> {
    let meta = std::fs::metadata(path)
        .map_err(|_| InputError::at_file(path, "file does not exist or cannot be opened"))?;
    if meta.is_dir() {
        return Err(InputError::at_file(
            path,
            "is a directory; file does not exist or cannot be opened",
        ));
    }
    if meta.len() == 0 && meta.is_file() {
        return Err(InputError::at_file(path, "file is empty"));
    }
    File::open(path).map_err(|e| {
        InputError::at_file(
            path,
            format!(
                "file does not exist or cannot be opened ({})",
                io_reason(&e)
            ),
        )
    })
}

fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Lists the sections of a whole file in one pass without splitting rows
/// (only banners and headers are looked at): the cheap way to list devices,
/// tell metric from stall files and find a device's byte range.
pub fn scan_sections<R: Read>(reader: R, path: &Path) -> Result<Vec<SectionInfo>, InputError> {
    let mut csv = CsvReader::new(reader, path);
    csv.check_rows = false;
    while csv.next_event()?.is_some() {}
    Ok(csv.take_sections())
}

/// The section of rows that precede the first device banner of a file that
/// has banners (a header and rows, then `=== Device #N Metrics ===`): no
/// `-d` selects them, so a tool that reads a device drops them and should
/// say so.
pub fn rows_before_first_banner(sections: &[SectionInfo]) -> Option<&SectionInfo> {
    let first = sections.first()?;
    let has_banner = sections.iter().any(|s| s.device.is_some());
    (first.device.is_none() && has_banner && first.end_offset > first.start_offset).then_some(first)
}

/// Whether a device banner line follows byte `offset` (a line start) of
/// the file at `path`. A raw scan for [`is_banner`] lines, much faster
/// than reading rows: analyze uses it when it found what it wanted in a
/// section without banner and must know whether that section is device 0
/// (no banner anywhere) or rows before the first banner
/// (docs/robustness.md#metric-csvs).
pub fn banner_after(path: &Path, offset: u64) -> Result<bool, InputError> {
    use std::io::{Seek, SeekFrom};
    let mut file = open_input(path)?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| InputError::io(path, &e))?;
    contains_banner_line(file).map_err(|e| InputError::io(path, &e))
}

/// Whether the text of `reader` (starting at a line start) has a banner
/// line. Lines longer than [`MAX_LINE_BYTES`] are no banner.
fn contains_banner_line<R: Read>(mut reader: R) -> io::Result<bool> {
    let finder = memmem::Finder::new(BANNER_END);
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK * 4);
    let mut chunk = vec![0u8; READ_CHUNK * 4];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        buf.extend_from_slice(&chunk[..n]);
        // Whole lines only; the last partial line waits for more bytes.
        let Some(last_newline) = memchr::memrchr(b'\n', &buf) else {
            if buf.len() > MAX_LINE_BYTES {
                buf.clear();
            }
            continue;
        };
        let lines = &buf[..=last_newline];
        if finder
            .find_iter(lines)
            .any(|hit| is_banner(line_around(lines, hit)))
        {
            return Ok(true);
        }
        buf.drain(..=last_newline);
    }
    Ok(finder
        .find_iter(&buf)
        .any(|hit| is_banner(line_around(&buf, hit))))
}

/// The line of `text` that holds byte `at`, without its terminator.
fn line_around(text: &[u8], at: usize) -> &[u8] {
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// Opens `path` and returns its sections (see [`scan_sections`]).
pub fn scan_file_sections(path: &Path) -> Result<Vec<SectionInfo>, InputError> {
    let file = open_input(path)?;
    scan_sections(file, path)
}

/// Opens `path` and returns a reader over the section `analyze -d DEVICE`
/// reads (see [`find_device_section`]) with its [`SectionInfo`], or `None`
/// when the file has no such device. Costs one structure scan of the file
/// plus the read of that section.
pub fn open_device_section(
    path: &Path,
    device: i64,
) -> Result<Option<(SectionInfo, CsvReader<File>)>, InputError> {
    use std::io::{Seek, SeekFrom};
    let sections = scan_file_sections(path)?;
    let Some(section) = find_device_section(&sections, device) else {
        return Ok(None);
    };
    let mut file = open_input(path)?;
    file.seek(SeekFrom::Start(section.start_offset))
        .map_err(|e| InputError::io(path, &e))?;
    let csv = CsvReader::for_section(file, path, section);
    Ok(Some((section.clone(), csv)))
}

/// Kind of the first section of a file, reading only up to its first header.
pub fn sniff_kind<R: Read>(reader: R, path: &Path) -> Result<FileKind, InputError> {
    let mut csv = CsvReader::new(reader, path);
    csv.check_rows = false;
    while let Some(event) = csv.next_event()? {
        if let Event::Header(h) = event {
            return Ok(h.kind());
        }
    }
    Err(csv.not_a_csv_error())
}

/// Streaming reader over a metric or stall CSV. Call [`CsvReader::next_event`]
/// until it returns `Ok(None)`.
pub struct CsvReader<R> {
    src: LineSource<R>,
    path: PathBuf,
    /// Split and count the fields of every row (off for structure scans).
    check_rows: bool,
    /// Stop after the first section ends (reading one section resumed at
    /// its offset).
    single_section: bool,
    state: State,
    header: Option<Header>,
    seen_banner: bool,
    sections: Vec<SectionInfo>,
    /// Section being read: index, device, start offset/line.
    current: Option<(usize, Option<i64>, u64, u64)>,
    next_index: usize,
    /// An event produced while handling the previous line that must be
    /// returned before reading on (header after a section start, section
    /// start after a section end).
    queued: Queued,
    first_non_utf8_kernel: Option<u64>,
    fields: Vec<Field>,
    /// A non-blank line was seen before any banner/header (JSON sniffing
    /// looks at the first one only).
    prelude_text_seen: bool,
    done: bool,
    /// The row the last `next_event` returned (see
    /// [`CsvReader::current_row`]).
    last_row: Option<(LineInfo, (usize, usize))>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before any banner and before any header.
    Prelude,
    /// After a banner, looking for the header.
    SeekHeader,
    /// Reading rows of a section.
    Rows,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queued {
    Nothing,
    /// Emit `Header` next.
    Header,
    /// Emit `SectionStart` for `current` next (after a `SectionEnd`).
    SectionStart,
}

/// What [`CsvReader::next_event`] found, before it is lent out as an
/// [`Event`]: the steps that find it need the reader mutably, the event
/// borrows it.
#[derive(Debug, Clone, Copy)]
enum Step {
    SectionStart {
        index: usize,
        device: Option<i64>,
        line: u64,
        offset: u64,
    },
    SectionEnd {
        index: usize,
        end_offset: u64,
    },
    /// The current section's header.
    Header,
    Separator {
        kind: SeparatorKind,
        line: u64,
        offset: u64,
    },
    /// The row [`CsvReader::current_row`] returns.
    Row,
}

impl<R: Read> CsvReader<R> {
    /// Reads a whole file from its beginning.
    pub fn new(reader: R, path: &Path) -> CsvReader<R> {
        CsvReader::resume(reader, path, 0, 1)
    }

    /// Reads from a section start found by [`scan_sections`]: `reader` must
    /// be positioned at `section.start_offset` (e.g. a seeked `File`).
    /// Offsets and line numbers stay those of the whole file, and reading
    /// stops at the end of that section.
    pub fn for_section(reader: R, path: &Path, section: &SectionInfo) -> CsvReader<R> {
        let mut csv = CsvReader::resume(reader, path, section.start_offset, section.start_line);
        csv.single_section = true;
        csv.next_index = section.index;
        if section.device.is_some() {
            // The banner line comes first; lines before it are not part of
            // this read.
            csv.seen_banner = true;
        }
        csv
    }

    /// Reads from an arbitrary line start: `reader` is positioned at byte
    /// `offset`, which is the start of line `line` (1-based).
    pub fn resume(reader: R, path: &Path, offset: u64, line: u64) -> CsvReader<R> {
        CsvReader {
            src: LineSource::new(reader, offset, line),
            path: path.to_path_buf(),
            check_rows: true,
            single_section: false,
            state: State::Prelude,
            header: None,
            seen_banner: false,
            sections: Vec::new(),
            current: None,
            next_index: 0,
            queued: Queued::Nothing,
            first_non_utf8_kernel: None,
            fields: Vec::new(),
            prelude_text_seen: false,
            done: false,
            last_row: None,
        }
    }

    /// Reads data rows of `section` starting in the middle of it: `reader`
    /// is positioned at byte `offset`, the start of line `line`, e.g. the
    /// `byte_range` of a [`crate::metric_csv::KernelInstance`] found
    /// earlier (wrap the file in `Read::take` to stop at the range end).
    /// Emits `SectionStart` (with the section's index and device) and then
    /// rows and separators under `section.header`; stops at the next banner.
    pub fn for_rows(
        reader: R,
        path: &Path,
        section: &SectionInfo,
        offset: u64,
        line: u64,
    ) -> CsvReader<R> {
        let mut csv = CsvReader::resume(reader, path, offset, line);
        csv.single_section = true;
        csv.seen_banner = true;
        csv.state = State::Rows;
        csv.header = Some(section.header.clone());
        csv.next_index = section.index + 1;
        csv.current = Some((section.index, section.device, offset, line));
        csv.queued = Queued::SectionStart;
        csv
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Header of the section being read.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// Sections completed so far (all of them once `next_event` returned
    /// `None`).
    pub fn sections(&self) -> &[SectionInfo] {
        &self.sections
    }

    pub fn take_sections(&mut self) -> Vec<SectionInfo> {
        std::mem::take(&mut self.sections)
    }

    /// First line whose kernel name was not valid UTF-8 (names are kept,
    /// with invalid bytes replaced by U+FFFD), for a warning.
    pub fn first_non_utf8_kernel(&self) -> Option<u64> {
        self.first_non_utf8_kernel
    }

    /// Bytes consumed so far (offset of the next unread line).
    pub fn offset(&self) -> u64 {
        self.src.offset
    }

    fn not_a_csv_error(&self) -> InputError {
        InputError::at_file(
            &self.path,
            "not a unitrace metric or stall CSV: no header line (one starting with `Kernel,` or containing `OtherStall[Events]`)",
        )
    }

    /// Next event, or `None` at the end of the file (or of the section for
    /// [`CsvReader::for_section`]).
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        self.last_row = None;
        let step = match std::mem::replace(&mut self.queued, Queued::Nothing) {
            Queued::Header => Step::Header,
            Queued::SectionStart => {
                let (index, device, offset, line) = self
                    .current
                    .expect("a queued section start always has a current section");
                Step::SectionStart {
                    index,
                    device,
                    line,
                    offset,
                }
            }
            Queued::Nothing if self.done => return Ok(None),
            Queued::Nothing => match self.read_step()? {
                Some(step) => step,
                None => return self.finish_file(),
            },
        };
        Ok(self.event(step))
    }

    /// Reads lines up to the next one that makes an event; `None` at the
    /// end of the input.
    fn read_step(&mut self) -> Result<Option<Step>, InputError> {
        loop {
            let Some(line) = self.src.next_line(&self.path)? else {
                return Ok(None);
            };
            let text = self.src.text(&line);
            let blank = text.iter().all(|b| *b == b' ' || *b == b'\t');
            let stats = if blank {
                LineStats::default()
            } else {
                LineStats::of(text)
            };
            if stats.has_equals && is_banner(text) {
                let device = banner_device(text).ok_or_else(|| {
                    InputError::at_line(
                        &self.path,
                        line.number,
                        "device banner without a `#N` device number",
                    )
                })?;
                return self.banner(line, device).map(Some);
            }
            let step = match self.state {
                State::Prelude => self.prelude_line(line, blank)?,
                State::SeekHeader => self.seek_header_line(line, blank)?,
                State::Rows => Some(self.rows_line(line, blank, &stats)?),
            };
            if step.is_some() {
                return Ok(step);
            }
        }
    }

    /// A banner line: ends the current section and starts the next (a
    /// read of one section stops at it).
    fn banner(&mut self, line: LineInfo, device: i64) -> Result<Step, InputError> {
        self.seen_banner = true;
        let ended = self.close_section(line.offset)?;
        if self.single_section {
            if let Some((index, end_offset)) = ended {
                self.done = true;
                return Ok(Step::SectionEnd { index, end_offset });
            }
        }
        let index = self.next_index;
        self.next_index += 1;
        self.current = Some((index, Some(device), line.offset, line.number));
        self.header = None;
        self.state = State::SeekHeader;
        if let Some((index, end_offset)) = ended {
            self.queued = Queued::SectionStart;
            return Ok(Step::SectionEnd { index, end_offset });
        }
        Ok(Step::SectionStart {
            index,
            device: Some(device),
            line: line.number,
            offset: line.offset,
        })
    }

    /// A line before any banner and header: a header line starts the
    /// section of a banner-less file; other text is passed over, unless
    /// the file starts like JSON.
    fn prelude_line(&mut self, line: LineInfo, blank: bool) -> Result<Option<Step>, InputError> {
        if self.seen_banner || blank {
            return Ok(None);
        }
        let text = self.src.text(&line);
        if !self.prelude_text_seen && looks_like_json(text) {
            return Err(InputError::at_line(
                &self.path,
                line.number,
                "not a unitrace metric or stall CSV: this looks like JSON (a trace?)",
            ));
        }
        self.prelude_text_seen = true;
        if !is_header_line(text) {
            return Ok(None);
        }
        let header = Header::parse(text, line.number, &self.path)?;
        let index = self.next_index;
        self.next_index += 1;
        self.current = Some((index, None, line.offset, line.number));
        self.header = Some(header);
        self.state = State::Rows;
        self.queued = Queued::Header;
        Ok(Some(Step::SectionStart {
            index,
            device: None,
            line: line.number,
            offset: line.offset,
        }))
    }

    /// A line between a banner and its section's header.
    fn seek_header_line(
        &mut self,
        line: LineInfo,
        blank: bool,
    ) -> Result<Option<Step>, InputError> {
        let text = self.src.text(&line);
        if blank || !is_header_line(text) {
            return Ok(None);
        }
        self.header = Some(Header::parse(text, line.number, &self.path)?);
        self.state = State::Rows;
        Ok(Some(Step::Header))
    }

    /// A line of a section's rows: a separator (blank line, repeated
    /// header, empty kernel name) or a data row, checked against the
    /// section's header.
    fn rows_line(
        &mut self,
        line: LineInfo,
        blank: bool,
        stats: &LineStats,
    ) -> Result<Step, InputError> {
        let separator = |kind| Step::Separator {
            kind,
            line: line.number,
            offset: line.offset,
        };
        if blank {
            return Ok(separator(SeparatorKind::BlankLine));
        }
        let text = self.src.text(&line);
        let header = self
            .header
            .as_ref()
            .expect("state Rows always has a header");
        // A repeated header line (old main-log format).
        if text.starts_with(METRIC_HEADER_PREFIX) || {
            let t = trim_start(text);
            t.starts_with(METRIC_HEADER_PREFIX) && memmem::find(t, STALL_HEADER_MARK).is_some()
        } {
            let again = Header::parse(text, line.number, &self.path)?;
            if again.columns != header.columns {
                return Err(InputError::at_line(
                    &self.path,
                    line.number,
                    format!(
                        "header differs from the section's header at line {}",
                        header.line
                    ),
                ));
            }
            return Ok(separator(SeparatorKind::RepeatedHeader));
        }
        let kernel = if self.check_rows {
            check_row(text, stats, header, &mut self.fields, line.had_newline)
                .map_err(|p| InputError::at_line(&self.path, line.number, p))?
        } else {
            kernel_field_fast(text, header)
                .map_err(|p| InputError::at_line(&self.path, line.number, p))?
        };
        if kernel.0 == kernel.1 {
            return Ok(separator(SeparatorKind::EmptyKernel));
        }
        if self.first_non_utf8_kernel.is_none()
            && std::str::from_utf8(&text[kernel.0..kernel.1]).is_err()
        {
            self.first_non_utf8_kernel = Some(line.number);
        }
        self.last_row = Some((line, kernel));
        Ok(Step::Row)
    }

    /// The event a step found, lent out of the reader.
    fn event(&self, step: Step) -> Option<Event<'_>> {
        Some(match step {
            Step::SectionStart {
                index,
                device,
                line,
                offset,
            } => Event::SectionStart {
                index,
                device,
                line,
                offset,
            },
            Step::SectionEnd { index, end_offset } => Event::SectionEnd { index, end_offset },
            Step::Header => return self.header.as_ref().map(Event::Header),
            Step::Separator { kind, line, offset } => Event::Separator { kind, line, offset },
            Step::Row => Event::Row(
                self.current_row()
                    .expect("a row step has a current row and header"),
            ),
        })
    }

    /// The row the last [`CsvReader::next_event`] returned, again: lets a
    /// caller that looped over events it passes on return the row without
    /// holding the first borrow across iterations.
    pub fn current_row(&self) -> Option<RawRow<'_>> {
        let (line, kernel) = self.last_row?;
        Some(RawRow {
            text: self.src.text(&line),
            kernel,
            line: line.number,
            offset: line.offset,
            end_offset: line.next_offset,
            header: self.header.as_ref()?,
            path: &self.path,
        })
    }

    /// Records the section being read as complete; returns (index, end).
    fn close_section(&mut self, end_offset: u64) -> Result<Option<(usize, u64)>, InputError> {
        let Some((index, device, start_offset, start_line)) = self.current.take() else {
            return Ok(None);
        };
        let Some(header) = self.header.clone() else {
            return Err(InputError::at_line(
                &self.path,
                start_line,
                format!(
                    "section of device {} has no header line (one starting with `Kernel,` or containing `OtherStall[Events]`)",
                    device.map_or_else(|| "?".to_string(), |d| d.to_string())
                ),
            ));
        };
        self.sections.push(SectionInfo {
            index,
            device,
            start_offset,
            start_line,
            end_offset,
            header,
        });
        Ok(Some((index, end_offset)))
    }

    fn finish_file(&mut self) -> Result<Option<Event<'_>>, InputError> {
        self.done = true;
        let end = self.src.offset;
        let ended = self.close_section(end)?;
        if let Some((index, end_offset)) = ended {
            return Ok(Some(Event::SectionEnd { index, end_offset }));
        }
        if self.sections.is_empty() && !self.single_section {
            return Err(self.not_a_csv_error());
        }
        Ok(None)
    }
}

/// docs/compatibility.md#analyze-sections: a banner contains both `=== Device` and `Metrics ===`.
pub fn is_banner(line: &[u8]) -> bool {
    memchr::memchr(b'=', line).is_some()
        && memmem::find(line, BANNER_START).is_some()
        && memmem::find(line, BANNER_END).is_some()
}

/// Device number of a banner: the first whitespace-separated token that
/// starts with `#` (docs/compatibility.md#analyze-list).
pub fn banner_device(line: &[u8]) -> Option<i64> {
    line.split(|b| b.is_ascii_whitespace())
        .find(|w| w.first() == Some(&b'#'))
        .and_then(|w| std::str::from_utf8(&w[1..]).ok())
        .and_then(|s| s.parse().ok())
}

/// docs/compatibility.md#analyze-sections: a header starts with `Kernel,` or contains
/// `OtherStall[Events]`.
pub fn is_header_line(line: &[u8]) -> bool {
    line.starts_with(METRIC_HEADER_PREFIX) || memmem::find(line, STALL_HEADER_MARK).is_some()
}

fn looks_like_json(line: &[u8]) -> bool {
    matches!(trim_start(line).first(), Some(b'{') | Some(b'['))
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    &s[n..]
}

fn trim_end(s: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(s[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    end
}

/// Parses one field starting at `pos` (just after the previous comma or at
/// the line start). Returns the field and the position of the comma that
/// ends it (or `line.len()`).
fn parse_field(line: &[u8], mut pos: usize) -> Result<(Field, usize), String> {
    while pos < line.len() && matches!(line[pos], b' ' | b'\t') {
        pos += 1;
    }
    if pos < line.len() && line[pos] == b'"' {
        let open = pos;
        let mut search = pos + 1;
        // The closing quote is the first `"` followed by optional blanks and
        // then a comma or the end of the line (docs/formats.md#metric-csv-kernel-name).
        while let Some(q) = memchr::memchr(b'"', &line[search..]) {
            let close = search + q;
            let mut after = close + 1;
            while after < line.len() && matches!(line[after], b' ' | b'\t') {
                after += 1;
            }
            if after == line.len() || line[after] == b',' {
                return Ok((
                    Field {
                        range: open + 1..close,
                        quoted: true,
                    },
                    after,
                ));
            }
            search = close + 1;
        }
        return Err(format!(
            "unterminated quoted field starting at column {}",
            open + 1
        ));
    }
    let end = memchr::memchr(b',', &line[pos..]).map_or(line.len(), |i| pos + i);
    Ok((
        Field {
            range: pos..trim_end(line, pos, end),
            quoted: false,
        },
        end,
    ))
}

/// Splits a whole line into fields (see the module comment).
pub fn split_fields(line: &[u8], out: &mut Vec<Field>) -> Result<(), String> {
    out.clear();
    let mut pos = 0;
    loop {
        let (field, end) = parse_field(line, pos)?;
        out.push(field);
        if end >= line.len() {
            return Ok(());
        }
        pos = end + 1;
    }
}

/// Byte counts of one line gathered in a single pass, so that the common
/// row (quotes only around the kernel name) is checked without splitting.
#[derive(Debug, Default, Clone, Copy)]
struct LineStats {
    commas: usize,
    quotes: usize,
    has_equals: bool,
}

impl LineStats {
    fn of(s: &[u8]) -> LineStats {
        let mut stats = LineStats::default();
        // Byte-wide counters over chunks of at most 255 bytes: branch-free,
        // so the compiler vectorises the inner loop.
        for chunk in s.chunks(255) {
            let (mut commas, mut quotes, mut equals) = (0u8, 0u8, 0u8);
            for &b in chunk {
                commas += u8::from(b == b',');
                quotes += u8::from(b == b'"');
                equals |= u8::from(b == b'=');
            }
            stats.commas += usize::from(commas);
            stats.quotes += usize::from(quotes);
            stats.has_equals |= equals != 0;
        }
        stats
    }
}

/// Locates the kernel field without checking the row (structure scans).
fn kernel_field_fast(line: &[u8], header: &Header) -> Result<(usize, usize), String> {
    if header.kernel_index == 0 {
        let (f, _) = parse_field(line, 0)?;
        return Ok((f.range.start, f.range.end));
    }
    let mut fields = Vec::new();
    split_fields(line, &mut fields)?;
    Ok(fields
        .get(header.kernel_index)
        .map_or((0, 0), |f| (f.range.start, f.range.end)))
}

/// Checks the field count of a data row and returns its kernel field range.
fn check_row(
    line: &[u8],
    stats: &LineStats,
    header: &Header,
    fields: &mut Vec<Field>,
    had_newline: bool,
) -> Result<(usize, usize), String> {
    let expected = header.field_count();
    let (count, kernel) = if header.kernel_index == 0 {
        let (kernel, end) = parse_field(line, 0)?;
        let head = &line[..end];
        let head_quotes = head.iter().filter(|&&b| b == b'"').count();
        let count = if head_quotes == stats.quotes {
            // No quote after the kernel field: every later comma separates.
            let head_commas = head.iter().filter(|&&b| b == b',').count();
            1 + stats.commas - head_commas
        } else {
            split_fields(line, fields)?;
            fields.len()
        };
        (count, kernel.range)
    } else {
        split_fields(line, fields)?;
        let k = fields
            .get(header.kernel_index)
            .map_or(0..0, |f| f.range.clone());
        (fields.len(), k)
    };
    if count != expected {
        if !had_newline && count < expected {
            return Err(format!(
                "truncated last line: no newline at end of file and {count} of {expected} fields"
            ));
        }
        return Err(format!(
            "row has {count} fields, header (line {}) has {expected}",
            header.line
        ));
    }
    Ok((kernel.start, kernel.end))
}

/// Where a line lies in the reader's buffer and in the file.
#[derive(Debug, Clone, Copy)]
struct LineInfo {
    start: usize,
    end: usize,
    number: u64,
    offset: u64,
    next_offset: u64,
    had_newline: bool,
}

/// Splits a byte stream into lines with one reused buffer; lines are
/// returned as ranges of that buffer (no copy unless a line straddles two
/// reads). `\r\n` endings and a leading UTF-8 byte-order mark are accepted.
struct LineSource<R> {
    inner: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Bytes of `buf[start..scanned]` are known to hold no newline.
    scanned: usize,
    eof: bool,
    /// File offset of `buf[start]`.
    offset: u64,
    /// Number of the next line.
    next_number: u64,
}

impl<R: Read> LineSource<R> {
    fn new(inner: R, offset: u64, line: u64) -> Self {
        LineSource {
            inner,
            buf: vec![0; READ_CHUNK * 4],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            offset,
            next_number: line,
        }
    }

    fn text(&self, line: &LineInfo) -> &[u8] {
        &self.buf[line.start..line.end]
    }

    fn next_line(&mut self, path: &Path) -> Result<Option<LineInfo>, InputError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + i;
                return Ok(Some(self.take_line(nl, nl + 1, true, path)?));
            }
            self.scanned = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let end = self.end;
                return Ok(Some(self.take_line(end, end, false, path)?));
            }
            if self.end - self.start > MAX_LINE_BYTES {
                return Err(self.too_long(path));
            }
            self.refill(path)?;
        }
    }

    fn too_long(&self, path: &Path) -> InputError {
        InputError::at_line(
            path,
            self.next_number,
            format!(
                "line longer than {} MiB: not a unitrace CSV",
                MAX_LINE_BYTES >> 20
            ),
        )
    }

    fn take_line(
        &mut self,
        content_end: usize,
        next: usize,
        had_newline: bool,
        path: &Path,
    ) -> Result<LineInfo, InputError> {
        if content_end - self.start > MAX_LINE_BYTES {
            return Err(self.too_long(path));
        }
        let mut start = self.start;
        let mut end = content_end;
        if end > start && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let number = self.next_number;
        if self.offset == 0 && self.buf[start..end].starts_with(b"\xEF\xBB\xBF") {
            start += 3;
        }
        let consumed = (next - self.start) as u64;
        let info = LineInfo {
            start,
            end,
            number,
            offset: self.offset,
            next_offset: self.offset + consumed,
            had_newline,
        };
        self.offset += consumed;
        self.next_number += 1;
        self.start = next;
        self.scanned = next;
        Ok(info)
    }

    /// Moves the unconsumed tail to the front (growing the buffer for long
    /// lines) and reads more bytes.
    fn refill(&mut self, path: &Path) -> Result<(), InputError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < READ_CHUNK {
            let new_len = (self.buf.len() * 2).max(self.end + READ_CHUNK);
            self.buf.resize(new_len, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(InputError::io(path, &e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        split_fields(line.as_bytes(), &mut out).unwrap();
        out.iter()
            .map(|f| line[f.range.clone()].to_string())
            .collect()
    }

    /// Hands out at most `step` bytes per read: banner lines cut across
    /// reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn banner_lines_are_found_across_reads() {
        let with = b"\"k\", 1, 2\n\n=== Device #1 Metrics ===\nKernel, A[x]\n";
        let last_line = b"\"k\", 1, 2\n=== Device #0 Metrics ===";
        // `Metrics ===` alone, or `=== Device` on another line, is no banner.
        let without = b"\"k Metrics ===\", 1, 2\n=== Device\nMetrics ===\n";
        for step in [1, 2, 7, 1 << 20] {
            assert!(contains_banner_line(Trickle(with, step)).unwrap(), "{step}");
            assert!(
                contains_banner_line(Trickle(last_line, step)).unwrap(),
                "{step}"
            );
            assert!(
                !contains_banner_line(Trickle(without, step)).unwrap(),
                "{step}"
            );
        }
        assert!(!contains_banner_line(&b""[..]).unwrap());
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        let path = Path::new("d.csv");
        let e =
            Header::parse(b"Kernel, GpuTime[ns], XVE_ACTIVE[%], GpuTime[ns]", 4, path).unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv:4: column `GpuTime[ns]` appears twice (fields 2 and 4)"
        );
        let stall = b"Kernel, IP[Address], Active[Events], Active[Events], OtherStall[Events]";
        assert!(Header::parse(stall, 4, path).is_err());
        // The empty field after a trailing separator is not a column.
        assert!(Header::parse(b"Kernel, GpuTime[ns], A[%],", 4, path).is_ok());
    }

    #[test]
    fn splits_quoted_padded_and_plain_fields() {
        assert_eq!(
            fields(r#"   "gemm(float*, int)",          c0,  12"#),
            ["gemm(float*, int)", "c0", "12"]
        );
        assert_eq!(
            fields(r#""a<b, c>{1; 2}" , 1,2, "#),
            ["a<b, c>{1; 2}", "1", "2", ""]
        );
        assert_eq!(fields(",1,2"), ["", "1", "2"]);
        assert_eq!(fields(r#""",1"#), ["", "1"]);
        // A quote inside a name that is not followed by a comma does not
        // end the field.
        assert_eq!(fields(r#""say "hi" now",1"#), [r#"say "hi" now"#, "1"]);
        assert_eq!(
            fields("  padded name[SIMD16 {1; 1; 1}], 3"),
            ["padded name[SIMD16 {1; 1; 1}]", "3"]
        );
        let mut out = Vec::new();
        assert!(split_fields(br#""open,1"#, &mut out).is_err());
    }

    #[test]
    fn banners() {
        assert!(is_banner(b"=== Device #3 Metrics ==="));
        assert_eq!(banner_device(b"=== Device #3 Metrics ==="), Some(3));
        assert!(!is_banner(b"== Kernel Metrics =="));
        assert_eq!(banner_device(b"=== Device Metrics ==="), None);
    }

    fn events(text: &str) -> Vec<String> {
        let mut r = CsvReader::new(text.as_bytes(), Path::new("t.csv"));
        let mut out = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            out.push(match e {
                Event::SectionStart { device, line, .. } => format!("S{device:?}@{line}"),
                Event::Header(h) => format!("H{}", h.columns().len()),
                Event::Row(row) => format!("R{}:{}", row.line(), row.kernel()),
                Event::Separator { kind, line, .. } => format!("-{kind:?}@{line}"),
                Event::SectionEnd { end_offset, .. } => format!("E{end_offset}"),
            });
        }
        out
    }

    #[test]
    fn sections_rows_and_separators() {
        let text = "\n=== Device #0 Metrics ===\n\nKernel, GpuTime[ns]\n\"k, 1\", 5\n\n\n=== Device #2 Metrics ===\n\nKernel, GpuTime[ns]\r\n\"k2\", 6\r\n, 0\r\n";
        assert_eq!(
            events(text),
            [
                "SSome(0)@2",
                "H2",
                "R5:k, 1",
                "-BlankLine@6",
                "-BlankLine@7",
                "E60",
                "SSome(2)@8",
                "H2",
                "R11:k2",
                "-EmptyKernel@12",
                &format!("E{}", text.len()),
            ]
        );
    }

    #[test]
    fn byte_order_mark_and_kind_sniffing() {
        let text = "\u{FEFF}Kernel, IP[Address], OtherStall[Events]\n\"k\", 10, 1\n";
        assert_eq!(events(text)[..3], ["SNone@1", "H3", "R2:k"]);
        assert_eq!(
            sniff_kind(text.as_bytes(), Path::new("s.csv")).unwrap(),
            FileKind::Stall
        );
        assert_eq!(
            sniff_kind(
                &b"\n=== Device #0 Metrics ===\n\nKernel,A\n"[..],
                Path::new("m.csv")
            )
            .unwrap(),
            FileKind::Metric
        );
    }

    #[test]
    fn bannerless_file_and_repeated_headers() {
        let text = "== Kernel Metrics ==\n\nKernel,Device,GpuTime[ns],\nk1,0,5,\n\nKernel,Device,GpuTime[ns],\nk1,0,6,\n";
        assert_eq!(
            events(text),
            [
                "SNone@3",
                "H3",
                "R4:k1",
                "-BlankLine@5",
                "-RepeatedHeader@6",
                "R7:k1",
                &format!("E{}", text.len()),
            ]
        );
    }

    fn error(text: &str) -> String {
        let mut r = CsvReader::new(text.as_bytes(), Path::new("t.csv"));
        loop {
            match r.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error for {text:?}"),
                Err(e) => return e.to_string(),
            }
        }
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(
            error("Kernel,A,B\nk,1,2\nk,1"),
            "t.csv:3: truncated last line: no newline at end of file and 2 of 3 fields"
        );
        assert_eq!(
            error("Kernel,A,B\nk,1,2,3\n"),
            "t.csv:2: row has 4 fields, header (line 1) has 3"
        );
        assert!(error("{\"traceEvents\": []}\n").starts_with("t.csv:1: not a unitrace"));
        assert!(error("Kernel,GlobalInstanceId\n").contains("names no metric"));
        assert!(error("hello\nworld\n").starts_with("t.csv: not a unitrace"));
        assert!(error("=== Device #0 Metrics ===\n\nnothing\n").contains("no header line"));
        let long = format!("Kernel,A\n\"{}\",1\n", "x".repeat(MAX_LINE_BYTES + 10));
        assert!(error(&long).starts_with("t.csv:2: line longer than"));
    }

    #[test]
    fn scan_and_resume_a_section() {
        let text = "\n=== Device #0 Metrics ===\n\nKernel, A\n\"a\", 1\n\n\n=== Device #1 Metrics ===\n\nKernel, A\n\"b\", 2\n\"b\", 3\n";
        let sections = scan_sections(text.as_bytes(), Path::new("t.csv")).unwrap();
        assert_eq!(sections.len(), 2);
        let s1 = find_device_section(&sections, 1).unwrap();
        assert_eq!(s1.start_line, 8);
        assert!(find_device_section(&sections, 2).is_none());
        let tail = &text.as_bytes()[s1.start_offset as usize..];
        let mut r = CsvReader::for_section(tail, Path::new("t.csv"), s1);
        let mut rows = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            if let Event::Row(row) = e {
                rows.push((row.line(), row.kernel().into_owned()));
            }
        }
        assert_eq!(rows, [(11, "b".to_string()), (12, "b".to_string())]);

        // Re-reading only line 12 of the section.
        let offset = text.find("\"b\", 3").unwrap();
        let mut r = CsvReader::for_rows(
            &text.as_bytes()[offset..],
            Path::new("t.csv"),
            s1,
            offset as u64,
            12,
        );
        let mut seen = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            seen.push(match e {
                Event::SectionStart { device, .. } => format!("S{device:?}"),
                Event::Row(row) => format!("R{}:{}", row.line(), row.kernel()),
                other => format!("{other:?}"),
            });
        }
        assert_eq!(seen[..2], ["SSome(1)", "R12:b"]);
        assert!(matches!(seen.last().map(String::as_str), Some(s) if s.starts_with("SectionEnd")));
    }

    #[test]
    fn open_device_section_seeks_to_the_banner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        std::fs::write(&path, "\n=== Device #0 Metrics ===\n\nKernel, A\n\"a\", 1\n\n\n=== Device #3 Metrics ===\n\nKernel, A\n\"b\", 2\n").unwrap();
        let (info, mut csv) = open_device_section(&path, 3).unwrap().unwrap();
        assert_eq!(info.device, Some(3));
        let mut kernels = Vec::new();
        while let Some(e) = csv.next_event().unwrap() {
            if let Event::Row(row) = e {
                kernels.push((row.line(), row.kernel().into_owned()));
            }
        }
        assert_eq!(kernels, [(11, "b".to_string())]);
        assert!(open_device_section(&path, 1).unwrap().is_none());
    }
}
