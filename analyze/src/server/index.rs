//! The one pass over the input the chart server makes at start-up: where
//! every metric instance (by `GlobalInstanceId`) and every stall kernel run
//! is, so that a request seeks to its bytes and parses only them.
//!
//! Metric rows are grouped into blocks of about [`BLOCK_BYTES`] of one
//! section; the index holds one `(id, block)` pair per instance and block
//! (16 bytes), sorted by id. A request reads the one or two blocks its
//! instance lies in. Memory is therefore ~16 bytes per instance (a 5 GB
//! query file with 10 M one-row instances: ~160 MB; sampling files, with
//! many rows per instance, far less), whatever the order of the ids.
//!
//! Every device section is indexed (docs/compatibility.md#analyze-quirk-8: the original
//! loses every other section of files with three or more devices), and the
//! kind (metric or stall) is decided per section rather than once for the
//! whole file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use unitrace_core::csv_sections::{open_input, CsvReader, Event, Field, FileKind, Header, RawRow};
use unitrace_core::metric_csv::{
    InstanceEvent, InstanceReader, InstanceSpan, MetricRow, SectionKernel, ValidityColumns,
    ValidityPolicy, ValidityTally, GLOBAL_INSTANCE_ID,
};
use unitrace_core::stall_csv::{KernelRun, StallReader};
use unitrace_core::InputError;

use crate::dashboard::index_page::KernelStats;

/// Rows of one section in `start..end` (whole lines), the first at
/// 1-based line `first_line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub section: usize,
    pub first_line: u64,
    pub start: u64,
    pub end: u64,
}

/// Bytes of metric rows per block: small enough that parsing a block costs
/// about a millisecond, large enough that the block list stays tiny.
pub const BLOCK_BYTES: u64 = 64 * 1024;

/// Where everything is in the input file.
#[derive(Debug)]
pub struct FileIndex {
    path: PathBuf,
    /// Header of each section, by section index.
    headers: Vec<Header>,
    /// Blocks of metric rows in file order.
    blocks: Vec<Span>,
    /// `(GlobalInstanceId, block)` for every block holding rows of that id,
    /// sorted (the original selects rows by id, so rows of one id that are
    /// not consecutive are found too).
    instances: Vec<(u64, u32)>,
    /// Stall kernel runs by kernel name, in file order.
    stall_runs: HashMap<String, Vec<Span>>,
    /// Kernels of the metric sections (full name, with shape) in order of
    /// first appearance, each with its instances' GlobalInstanceIds (in
    /// file order; `None` without one): the index page, and the answer to
    /// a link whose instance id is unknown.
    metric_kernels: Vec<(String, Vec<Option<u64>>)>,
    metric_kernel_positions: HashMap<String, usize>,
    metric_sections: usize,
    stall_sections: usize,
    /// Query-report validity of every metric row of files with validity
    /// columns (docs/analyze.md#report-validity).
    validity: ValidityTally,
    /// Mean and max of every counter per kernel over its instances, of the
    /// reports the validity policy keeps: the dashboard index
    /// (docs/analyze.md#dashboard).
    stats: KernelStats,
    /// First line of rows before the first device banner of a file that
    /// has banners: they belong to no device and are not indexed
    /// (docs/robustness.md#metric-csvs).
    rows_before_banner: Option<u64>,
}

/// The one pass of [`FileIndex::build_with`]: the index filled so far and
/// where the reader is (section, its header's columns, the open block of
/// metric rows, the open stall run).
struct IndexBuilder {
    index: FileIndex,
    block_bytes: u64,
    policy: ValidityPolicy,
    /// Header line of a section without banner: device 0 if the file has
    /// no banner, else rows of no device, forgotten at the first banner
    /// (one pass, as analyze -o decides).
    bannerless_section: Option<u64>,
    section_device: Option<i64>,
    section: usize,
    validity_columns: Option<ValidityColumns>,
    id_column: Option<usize>,
    fields: Vec<Field>,
    /// Id of the previous metric row in the current block (one entry per
    /// id and block).
    last_id: Option<u64>,
    /// Kernel of the previous stall row (runs).
    last_kernel: Option<String>,
    block_open: bool,
    /// Kernel (position in the section's table) and id of a metric
    /// instance that just ended, counted once the reader's event is
    /// released (the kernel table is the reader's).
    ended_metric_instance: Option<(usize, Option<u64>)>,
}

impl IndexBuilder {
    fn new(path: &Path, block_bytes: u64, policy: ValidityPolicy) -> IndexBuilder {
        IndexBuilder {
            index: FileIndex {
                path: path.to_path_buf(),
                headers: Vec::new(),
                blocks: Vec::new(),
                instances: Vec::new(),
                stall_runs: HashMap::new(),
                metric_kernels: Vec::new(),
                metric_kernel_positions: HashMap::new(),
                metric_sections: 0,
                stall_sections: 0,
                validity: ValidityTally::default(),
                stats: KernelStats::default(),
                rows_before_banner: None,
            },
            block_bytes,
            policy,
            bannerless_section: None,
            section_device: None,
            section: 0,
            validity_columns: None,
            id_column: None,
            fields: Vec::new(),
            last_id: None,
            last_kernel: None,
            block_open: false,
            ended_metric_instance: None,
        }
    }

    /// Adds an ended metric instance to its kernel (by full name, in order
    /// of first appearance) and to the kernel's statistics.
    fn count_metric_instance(&mut self, ended: (usize, Option<u64>), kernels: &[SectionKernel]) {
        let (kernel, id) = ended;
        let Some(k) = kernels.get(kernel) else {
            return;
        };
        let index = &mut self.index;
        let at = match index.metric_kernel_positions.get(&k.name) {
            Some(&at) => at,
            None => {
                let at = index.metric_kernels.len();
                index.metric_kernel_positions.insert(k.name.clone(), at);
                index.metric_kernels.push((k.name.clone(), Vec::new()));
                at
            }
        };
        index.metric_kernels[at].1.push(id);
        index.stats.end_instance(at);
    }

    fn section_start(&mut self, section: usize, device: Option<i64>) {
        if device.is_some() {
            if let Some(line) = self.bannerless_section.take() {
                self.index.forget_indexed_rows(line);
            }
        }
        self.section_device = device;
        self.section = section;
        self.last_id = None;
        self.last_kernel = None;
        self.block_open = false;
    }

    fn header(&mut self, header: &Header) {
        if self.section_device.is_none() {
            self.bannerless_section = Some(header.line());
        }
        let headers = &mut self.index.headers;
        if headers.len() <= self.section {
            headers.resize(self.section + 1, header.clone());
        }
        headers[self.section] = header.clone();
        self.id_column = header.index_of(GLOBAL_INSTANCE_ID);
        self.validity_columns = ValidityColumns::of(header);
        match header.kind() {
            FileKind::Metric => {
                self.index.metric_sections += 1;
                self.index.stats.header(header);
            }
            FileKind::Stall => self.index.stall_sections += 1,
        }
    }

    /// A metric row: its validity, its counters in the statistics of the
    /// reports the policy keeps, and its instance id in the blocks.
    fn metric_row(&mut self, row: &RawRow<'_>) -> Result<(), InputError> {
        row.split(&mut self.fields)?;
        let kept = match &self.validity_columns {
            Some(columns) => {
                let report = columns.classify_raw(row, &self.fields);
                self.index.validity.add(report);
                self.policy.keeps(report)
            }
            None => true,
        };
        if kept {
            self.index.stats.row(row, &self.fields);
        }
        let Some(column) = self.id_column else {
            // Old files without the id column cannot be reached by the
            // trace links.
            return Ok(());
        };
        let Some(field) = self.fields.get(column) else {
            return Ok(());
        };
        let text = row.field_bytes(field);
        if text.is_empty() {
            self.last_id = None;
            return Ok(());
        }
        let id = parse_instance_id(text).ok_or_else(|| {
            row.error(format!(
                "column `{GLOBAL_INSTANCE_ID}`: `{}` is not an instance id",
                String::from_utf8_lossy(text)
            ))
        })?;
        let block = self.block_of(row)?;
        if self.last_id != Some(id) {
            self.index.instances.push((id, block));
        }
        self.last_id = Some(id);
        Ok(())
    }

    /// The block `row` goes into: the open one while it is of this section
    /// and under the block size, else a new one.
    fn block_of(&mut self, row: &RawRow<'_>) -> Result<u32, InputError> {
        let blocks = &mut self.index.blocks;
        let extend = blocks.last().is_some_and(|block| {
            self.block_open
                && block.section == self.section
                && block.end - block.start < self.block_bytes
        });
        if extend {
            if let Some(block) = blocks.last_mut() {
                block.end = row.end_offset();
            }
        } else {
            blocks.push(Span {
                section: self.section,
                first_line: row.line(),
                start: row.offset(),
                end: row.end_offset(),
            });
            self.block_open = true;
            self.last_id = None;
        }
        u32::try_from(blocks.len() - 1)
            .map_err(|_| row.error("too many rows to index (more than 2^32 blocks)"))
    }

    /// A stall row extends its kernel's run when it follows the run's last
    /// row directly, else starts a new run.
    fn stall_row(&mut self, row: &RawRow<'_>) {
        let kernel = row.kernel();
        let runs = self.index.stall_runs.entry(kernel.to_string()).or_default();
        match runs.last_mut() {
            Some(span)
                if self.last_kernel.as_deref() == Some(&*kernel)
                    && span.section == self.section
                    && span.end == row.offset() =>
            {
                span.end = row.end_offset();
            }
            _ => {
                runs.push(Span {
                    section: self.section,
                    first_line: row.line(),
                    start: row.offset(),
                    end: row.end_offset(),
                });
                self.last_kernel = Some(kernel.into_owned());
            }
        }
    }

    fn instance_end(&mut self, span: InstanceSpan) {
        let is_metric = self
            .index
            .headers
            .get(span.section)
            .is_some_and(|h| h.kind() == FileKind::Metric);
        if is_metric {
            self.ended_metric_instance = Some((span.kernel, self.last_id));
        }
        self.last_id = None;
        self.last_kernel = None;
    }

    fn finish(mut self) -> FileIndex {
        // Sorted by id, then block: a request finds its blocks by binary
        // search, in file order.
        let instances = &mut self.index.instances;
        instances.sort_unstable();
        instances.dedup();
        instances.shrink_to_fit();
        self.index
    }
}

impl FileIndex {
    /// Reads the whole file once. Errors are the core parser's
    /// (`FILE:LINE: problem`).
    pub fn build(path: &Path) -> Result<FileIndex, InputError> {
        FileIndex::build_with_block_bytes(path, BLOCK_BYTES)
    }

    /// [`FileIndex::build`] with another block size (tests use tiny blocks
    /// so that instances straddle blocks).
    pub fn build_with_block_bytes(path: &Path, block_bytes: u64) -> Result<FileIndex, InputError> {
        FileIndex::build_with(path, block_bytes, ValidityPolicy::default())
    }

    /// [`FileIndex::build`] whose counter statistics leave out the reports
    /// `policy` drops.
    pub fn build_with(
        path: &Path,
        block_bytes: u64,
        policy: ValidityPolicy,
    ) -> Result<FileIndex, InputError> {
        let file = open_input(path)?;
        // Every row is needed (ids are per row); the core's instance
        // grouping says where a run of rows ends.
        let mut reader = InstanceReader::new(CsvReader::new(
            BufReader::with_capacity(1 << 20, file),
            path,
        ));
        let mut builder = IndexBuilder::new(path, block_bytes, policy);
        loop {
            if let Some(ended) = builder.ended_metric_instance.take() {
                builder.count_metric_instance(ended, reader.section_kernels());
            }
            let Some(event) = reader.next_event()? else {
                break;
            };
            match event {
                InstanceEvent::SectionStart { index, device } => {
                    builder.section_start(index, device)
                }
                InstanceEvent::Header(header) => builder.header(header),
                InstanceEvent::Row { row, .. } => match row.header().kind() {
                    FileKind::Metric => builder.metric_row(&row)?,
                    FileKind::Stall => builder.stall_row(&row),
                },
                InstanceEvent::End(span) => builder.instance_end(span),
                InstanceEvent::SectionEnd { .. } => {}
            }
        }
        Ok(builder.finish())
    }

    /// Everything indexed so far came from rows before the first device
    /// banner (from line `line`): they belong to no device, as for
    /// `analyze -o` and `-l`.
    fn forget_indexed_rows(&mut self, line: u64) {
        self.blocks.clear();
        self.instances.clear();
        self.stall_runs.clear();
        self.metric_kernels.clear();
        self.metric_kernel_positions.clear();
        self.metric_sections = 0;
        self.stall_sections = 0;
        self.validity = ValidityTally::default();
        self.stats = KernelStats::default();
        self.rows_before_banner = Some(line);
    }

    /// First line of the rows before the first device banner that were
    /// left out (for the start-up warning), if any.
    pub fn rows_before_banner(&self) -> Option<u64> {
        self.rows_before_banner
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Validity of the query reports of the whole file.
    pub fn validity(&self) -> &ValidityTally {
        &self.validity
    }

    /// Whether any section is a metric / stall section.
    pub fn has_metric_sections(&self) -> bool {
        self.metric_sections > 0
    }

    /// Per-kernel counter statistics (the dashboard index).
    pub fn stats(&self) -> &KernelStats {
        &self.stats
    }

    pub fn has_stall_sections(&self) -> bool {
        self.stall_sections > 0
    }

    /// Number of `(instance id, block)` entries and of stall kernels
    /// indexed.
    pub fn instance_entries(&self) -> usize {
        self.instances.len()
    }

    /// How many instances kernel `name` (full, with shape) has in the
    /// metric sections.
    pub fn metric_instances_of(&self, name: &str) -> usize {
        self.metric_kernel_positions
            .get(name)
            .map_or(0, |&at| self.metric_kernels[at].1.len())
    }

    /// The metric sections' kernels in order of first appearance, each
    /// with its instances' GlobalInstanceIds.
    pub fn metric_kernels(&self) -> &[(String, Vec<Option<u64>>)] {
        &self.metric_kernels
    }

    pub fn stall_kernel_count(&self) -> usize {
        self.stall_runs.len()
    }

    /// Header of the first metric section (rows before the first banner,
    /// left out, are no section).
    pub fn first_metric_header(&self) -> Option<&Header> {
        let skip = usize::from(self.rows_before_banner.is_some());
        self.headers
            .iter()
            .skip(skip)
            .find(|h| h.kind() == FileKind::Metric)
    }

    pub fn header(&self, section: usize) -> Option<&Header> {
        self.headers.get(section)
    }

    /// The rows of instance `id` in the first section that has it (the
    /// original's search order, docs/compatibility.md#analyze-server), with that section's
    /// header; `None` when no section has the id.
    pub fn instance_rows(&self, id: u64) -> Result<Option<(&Header, Vec<MetricRow>)>, InputError> {
        let first = self.instances.partition_point(|&(i, _)| i < id);
        let mut found: Option<usize> = None;
        let mut rows = Vec::new();
        let mut fields = Vec::new();
        for &(_, block) in self.instances[first..]
            .iter()
            .take_while(|&&(i, _)| i == id)
        {
            let Some(span) = self.blocks.get(block as usize) else {
                continue;
            };
            if found.is_some_and(|section| section != span.section) {
                continue;
            }
            let Some(header) = self.headers.get(span.section) else {
                continue;
            };
            let mut csv = self.reader_for(span, header)?;
            while let Some(event) = csv.next_event()? {
                if let Event::Row(row) = event {
                    let parsed = MetricRow::from_raw(&row, &mut fields)?;
                    if parsed.global_instance_id == Some(id) {
                        rows.push(parsed);
                        found = Some(span.section);
                    }
                }
            }
        }
        let Some(section) = found else {
            return Ok(None);
        };
        Ok(self.headers.get(section).map(|header| (header, rows)))
    }

    /// Runs of stall kernel `kernel`: per section, its first run (the
    /// original's "first run of that kernel", docs/compatibility.md#analyze-server), in section
    /// order, each with the section's header.
    pub fn stall_runs(&self, kernel: &str) -> Result<Vec<(&Header, KernelRun)>, InputError> {
        let Some(spans) = self.stall_runs.get(kernel) else {
            return Ok(Vec::new());
        };
        let mut runs = Vec::new();
        let mut seen_section = None;
        for span in spans {
            if seen_section == Some(span.section) {
                continue;
            }
            seen_section = Some(span.section);
            let Some(header) = self.headers.get(span.section) else {
                continue;
            };
            let mut reader = StallReader::new(self.reader_for(span, header)?);
            if let Some(mut run) = reader.next_run()? {
                run.section = span.section;
                runs.push((header, run));
            }
        }
        Ok(runs)
    }

    /// A CSV reader over the bytes of `span` only, preceded by the
    /// section's header line so the core parser knows the columns; offsets
    /// and line numbers stay those of the file (errors point at the right
    /// line).
    fn reader_for(&self, span: &Span, header: &Header) -> Result<CsvReader<impl Read>, InputError> {
        let mut file = File::open(&self.path).map_err(|e| InputError::io(&self.path, &e))?;
        file.seek(SeekFrom::Start(span.start))
            .map_err(|e| InputError::io(&self.path, &e))?;
        let header_line = header_line(header);
        let virtual_start = span.start.saturating_sub(header_line.len() as u64);
        let source = std::io::Cursor::new(header_line)
            .chain(BufReader::new(file.take(span.end - span.start)));
        Ok(CsvReader::resume(
            source,
            &self.path,
            virtual_start,
            span.first_line.saturating_sub(1).max(1),
        ))
    }
}

/// A header line with the same columns as `header` (the parser looks
/// columns up by name, so padding does not matter).
fn header_line(header: &Header) -> Vec<u8> {
    let mut line = header.columns().join(",");
    if header.has_trailing_separator() {
        line.push(',');
    }
    line.push('\n');
    line.into_bytes()
}

/// `GlobalInstanceId` as written by unitrace (an unsigned integer); a float
/// form with no fraction (`57.0`) is accepted like the original's float
/// comparison does.
fn parse_instance_id(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?.trim();
    text.parse::<u64>().ok().or_else(|| {
        let value = text.parse::<f64>().ok()?;
        (value >= 0.0 && value.fract() == 0.0 && value < 1.8e19).then_some(value as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    /// V1 sampling file (trailing `, ` on every line), two devices; an id
    /// whose rows are split by another instance; the last instance of the
    /// file with no blank line after it.
    const V1: &str =
        "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns], X[%], \n\
\"a[SIMD16 {1; 1; 1} {16; 1; 1}]\", 5, 100, 1.5, \n\
\"a[SIMD16 {1; 1; 1} {16; 1; 1}]\", 5, 100, 2.5, \n\
\n\
\"b, c\", 6, 50, 9.0, \n\
\n\
\"a[SIMD16 {1; 1; 1} {16; 1; 1}]\", 5, 100, 3.5, \n\
\n\n=== Device #1 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns], X[%], \n\
\"d\", 5, 10, 7.0, \n\
\"d\", 7, 10, 8.0, ";

    #[test]
    fn reads_only_the_rows_of_an_instance_with_file_positions() {
        let (_dir, path) = write(V1);
        let index = FileIndex::build(&path).unwrap();
        assert!(index.has_metric_sections() && !index.has_stall_sections());
        // Ids 5 and 6 of device 0 share a block; 5 and 7 of device 1 too.
        assert_eq!(index.instance_entries(), 4);
        let (header, rows) = index.instance_rows(5).unwrap().unwrap();
        let x = header.index_of("X[%]").unwrap();
        // Device 0 only (the first section that has the id), both runs.
        let values: Vec<f64> = rows.iter().map(|r| r.value(x)).collect();
        assert_eq!(values, vec![1.5, 2.5, 3.5]);
        let lines: Vec<u64> = rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![5, 6, 10]);
        let (_, rows) = index.instance_rows(6).unwrap().unwrap();
        assert_eq!(rows[0].kernel, "b, c");
        // Device 1, last line without a newline.
        let (_, rows) = index.instance_rows(7).unwrap().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].value(x), 8.0);
        assert_eq!(rows[0].line, 17);
        assert!(index.instance_rows(8).unwrap().is_none());
    }

    /// A row as comparable values: kernel, line, offset, value bits (the
    /// kernel column holds NaN, which `==` never matches).
    type RowKey = (String, u64, u64, Vec<u64>);

    fn key(found: Option<(&Header, Vec<MetricRow>)>) -> Option<Vec<RowKey>> {
        found.map(|(_, rows)| {
            rows.into_iter()
                .map(|r| {
                    (
                        r.kernel,
                        r.line,
                        r.offset,
                        r.values.iter().map(|v| v.to_bits()).collect(),
                    )
                })
                .collect()
        })
    }

    /// The result-dir index's GPU time of a kernel is the sum of its rows'
    /// `GpuTime[ns]` over all its instances and device sections
    /// (docs/uniview.md#result-dir-index).
    #[test]
    fn kernel_totals_sum_every_row() {
        let (_dir, path) = write(V1);
        let index = FileIndex::build(&path).unwrap();
        let at = |name: &str| {
            index
                .metric_kernels()
                .iter()
                .position(|(n, _)| n == name)
                .unwrap()
        };
        let stats = index.stats();
        let a = at("a[SIMD16 {1; 1; 1} {16; 1; 1}]");
        assert_eq!(stats.total(a, "GpuTime[ns]"), Some(300.0));
        assert_eq!(stats.total(a, "X[%]"), Some(7.5));
        assert_eq!(stats.mean_max(a, "GpuTime[ns]"), Some((100.0, 100.0)));
        assert_eq!(stats.total(at("b, c"), "GpuTime[ns]"), Some(50.0));
        assert_eq!(stats.total(at("d"), "GpuTime[ns]"), Some(20.0));
        assert_eq!(stats.total(a, "Nope[ns]"), None);
    }

    #[test]
    fn instances_straddling_blocks_are_read_whole() {
        let (_dir, path) = write(V1);
        let whole = FileIndex::build(&path).unwrap();
        for block_bytes in [1, 40, 100] {
            let tiny = FileIndex::build_with_block_bytes(&path, block_bytes).unwrap();
            for id in [5, 6, 7, 8] {
                let a = key(whole.instance_rows(id).unwrap());
                let b = key(tiny.instance_rows(id).unwrap());
                assert_eq!(a, b, "id {id}, blocks of {block_bytes} bytes");
            }
        }
        let testdata =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/server/metrics3.csv");
        let whole = FileIndex::build(&testdata).unwrap();
        let tiny = FileIndex::build_with_block_bytes(&testdata, 500).unwrap();
        for id in [7, 8, 9, 19, 20, 21, 25, 39, 40] {
            let a = key(whole.instance_rows(id).unwrap());
            let b = key(tiny.instance_rows(id).unwrap());
            assert_eq!(a.is_some(), id != 40, "id {id}");
            assert_eq!(a, b, "id {id}");
        }
    }

    #[test]
    fn a_file_changed_after_indexing_gives_an_error_not_a_panic() {
        let (_dir, path) = write(V1);
        let index = FileIndex::build(&path).unwrap();
        std::fs::write(&path, V1.replace("1.5", "oops")).unwrap();
        let err = index.instance_rows(5).unwrap_err().to_string();
        assert!(err.contains(":5:"), "{err}");
    }

    const STALLS: &str = "\n=== Device #0 Metrics ===\n\n\
      Kernel, IP[Address], Active[Events], ControlStall[Events], PipeStall[Events], SendStall[Events], DistStall[Events], SbidStall[Events], SyncStall[Events], InstrFetchStall[Events], OtherStall[Events]\n\
 \"k1\",          10,              2,                    0,                 0,                 0,                 0,                 0,                 0,                       0,                 0\n\
 \"k1\",          20,              2,                    0,                 3,                 0,                 0,                 0,                 0,                       0,                 0\n\
 \"k2\",          10,              2,                    0,                 0,                 0,                 0,                 4,                 0,                       0,                 0\n\
 \"k1\",          30,              2,                    0,                 0,                 0,                 0,                 0,                 0,                       0,                 5\n";

    #[test]
    fn stall_runs_are_the_first_run_per_section() {
        let (_dir, path) = write(STALLS);
        let index = FileIndex::build(&path).unwrap();
        assert!(index.has_stall_sections() && !index.has_metric_sections());
        assert_eq!(index.stall_kernel_count(), 2);
        let runs = index.stall_runs("k1").unwrap();
        assert_eq!(runs.len(), 1);
        let ips: Vec<u64> = runs[0].1.rows.iter().map(|r| r.ip).collect();
        // IPs are hex; the later run of k1 is not part of the first run.
        assert_eq!(ips, vec![0x10, 0x20]);
        assert!(index.stall_runs("k3").unwrap().is_empty());
    }
}
