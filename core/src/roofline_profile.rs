//! The two metric-query profiles the roofline reads (docs/formats.md#roofline-profiles, #metric-csv),
//! aggregated per kernel while streaming (docs/compatibility.md#roofline-aggregation).
//!
//! * memory profile (`ComputeBasic` group): time, frequency, occupancy and
//!   the byte counters of each memory level;
//! * compute profile (`VectorEngine138` group): instruction counts turned
//!   into operation counts with the original's factors (FP64/FP32 × 32,
//!   FP16 × 64, XMX FP16/BF16 × 512) and the mean XMX FP16 utilization.
//!
//! Reading rule (docs/formats.md#roofline-profiles, with the quirks of docs/compatibility.md#roofline-7 fixed):
//! * a banner line containing `Metrics ==` (`=== Device #N Metrics ===` or
//!   the V0 `== Kernel Metrics ==`) starts a section; any other `==` banner
//!   (summaries of V0 main logs) ends it, so summary rows are never read;
//! * a file with no banner (`--result-dir` metric files) is one section;
//! * a line starting with `Kernel,` (at column 0: summary tables indent
//!   theirs) is the header of the rows that follow; every
//!   section (and every repeated V0 header) uses its own header, so devices
//!   with different column sets are read correctly;
//! * every other non-empty line after a header is one kernel-instance row;
//!   a row with an empty kernel field is skipped (unknown kernel, a.3);
//! * rows are not de-duplicated by text (the original drops identical lines).
//!
//! Sums and means follow pandas' group-by: integer columns sum exactly,
//! float columns with Kahan compensation; means ignore missing values. A
//! column counts as integer when every value read for it is an integer, as
//! pandas infers `int64`; the console summary prints such totals without
//! `.0` like the original.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::csv_sections::MAX_LINE_BYTES;

use crate::device_config::{MemoryLevel, Precision};
use crate::error::InputError;

pub const GPU_TIME: &str = "GpuTime[ns]";
pub const CORE_FREQUENCY: &str = "AvgGpuCoreFrequencyMHz[MHz]";
pub const OCCUPANCY: &str = "XVE_THREADS_OCCUPANCY_ALL[%]";
pub const XMX_FP16_UTILIZATION: &str = "XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%]";

/// Instruction counter of each precision and the operations one instruction
/// stands for (docs/compatibility.md#roofline-aggregation: SIMD width × FMA for vector, 512 for XMX).
pub fn op_counter(p: Precision) -> (&'static str, i128) {
    match p {
        Precision::Fp16 => ("XVE_INST_EXECUTED_FP16[events]", 64),
        Precision::Fp16Xmx => ("XVE_INST_EXECUTED_XMX_FP16[events]", 512),
        Precision::Bf16Xmx => ("XVE_INST_EXECUTED_XMX_BF16[events]", 512),
        Precision::Fp32 => ("XVE_INST_EXECUTED_FP32[events]", 32),
        Precision::Fp64 => ("XVE_INST_EXECUTED_FP64[events]", 32),
    }
}

/// A number that remembers whether it came from an integer column, so the
/// console summary can print `512000000` where the original does and
/// `512000000.0` where it does not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    /// `self * k` with Python semantics (int stays int).
    pub fn times(self, k: i128) -> Num {
        match self {
            Num::Int(i) => Num::Int(i.saturating_mul(k)),
            Num::Float(f) => Num::Float(f * k as f64),
        }
    }

    /// `self + other` with Python semantics.
    pub fn plus(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_add(b)),
            (a, b) => Num::Float(a.as_f64() + b.as_f64()),
        }
    }
}

/// Running sum/mean of one column for one kernel.
#[derive(Debug, Clone, Copy, Default)]
struct ColumnAgg {
    int_sum: i128,
    sum: f64,
    compensation: f64,
    count: u64,
}

impl ColumnAgg {
    fn add(&mut self, v: Value) {
        let f = match v {
            Value::Missing => return,
            Value::Int(i) => {
                self.int_sum = self.int_sum.saturating_add(i);
                i as f64
            }
            Value::Float(f) => f,
        };
        if f.is_nan() {
            return;
        }
        self.count += 1;
        // pandas' group_sum / group_mean: Kahan summation.
        let y = f - self.compensation;
        let t = self.sum + y;
        self.compensation = t - self.sum - y;
        if self.compensation.is_nan() {
            self.compensation = 0.0;
        }
        self.sum = t;
    }

    fn total(&self, integer_column: bool) -> Num {
        if integer_column {
            Num::Int(self.int_sum)
        } else {
            Num::Float(self.sum)
        }
    }

    fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Value {
    Missing,
    Int(i128),
    Float(f64),
}

fn parse_value(s: &str) -> Option<Value> {
    let t = s.trim();
    if t.is_empty() {
        return Some(Value::Missing);
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.len() <= 36 && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i128>().ok().map(Value::Int);
    }
    if digits.eq_ignore_ascii_case("nan") {
        return Some(Value::Float(f64::NAN));
    }
    t.parse::<f64>().ok().map(Value::Float)
}

/// Which columns a profile needs: required ones make a header without them
/// an error, optional ones are read when present.
struct Wanted {
    names: Vec<String>,
    required: Vec<bool>,
}

/// Per-kernel aggregation of the wanted columns over any number of files.
struct Aggregator {
    what: &'static str,
    wanted: Wanted,
    index: HashMap<String, usize>,
    kernels: Vec<(String, u64, Vec<ColumnAgg>)>,
    /// Per wanted column: seen in some header, every value an integer.
    present: Vec<bool>,
    all_int: Vec<bool>,
}

impl Aggregator {
    fn new(what: &'static str, wanted: Wanted) -> Self {
        let n = wanted.names.len();
        Aggregator {
            what,
            wanted,
            index: HashMap::new(),
            kernels: Vec::new(),
            present: vec![false; n],
            all_int: vec![true; n],
        }
    }

    fn read(&mut self, path: &Path, mut input: impl BufRead) -> Result<(), InputError> {
        let mut buf = Vec::with_capacity(4096);
        let banner = memchr::memmem::Finder::new("Metrics ==");
        let mut line_no: u64 = 0;
        let mut seen_banner = false;
        let mut header: Option<Header> = None;
        let mut rows: u64 = 0;
        let mut headers: u64 = 0;
        loop {
            buf.clear();
            // The CSV readers' 1 MiB line cap: memory stays bounded on a
            // file with no newline (`--compute /dev/zero`).
            let n = (&mut input)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| InputError::io(path, &e))?;
            if n == 0 {
                break;
            }
            line_no += 1;
            if buf.len() > MAX_LINE_BYTES {
                return Err(InputError::at_line(
                    path,
                    line_no,
                    format!(
                        "line longer than {} MiB: not a unitrace profile",
                        MAX_LINE_BYTES >> 20
                    ),
                ));
            }
            // `from_utf8` has an ASCII fast path that the lossy decoder
            // lacks; names are ASCII in practice.
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => std::borrow::Cow::Borrowed(t),
                Err(_) => String::from_utf8_lossy(&buf),
            };
            let mut line: &str = text.trim_end_matches(['\n', '\r']);
            if line_no == 1 {
                line = line.strip_prefix('\u{feff}').unwrap_or(line);
            }
            if line.trim_start().starts_with("==") {
                // `=== Device #N Metrics ===` / `== Kernel Metrics ==` start
                // a metric section; any other banner (V0 main logs put
                // summaries such as `=== API Timing Summary ===` around the
                // metrics) ends it. Summary tables right-align their
                // `Kernel,` header (leading spaces), so it is never taken
                // for a metric header.
                if banner.find(line.as_bytes()).is_some() {
                    seen_banner = true;
                }
                header = None;
                continue;
            }
            if line.starts_with("Kernel,") {
                header = Some(Header::parse(self, path, line_no, line)?);
                headers += 1;
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let Some(h) = header.as_ref() else {
                continue;
            };
            if self.add_row(path, line_no, h, line)? {
                rows += 1;
            }
        }
        if headers == 0 {
            let problem = if seen_banner {
                format!(
                    "{} profile: missing section: the `Metrics ==` section has no `Kernel,` header line",
                    self.what
                )
            } else {
                format!(
                    "{} profile: missing section: no `Metrics ==` banner and no `Kernel,` header line (expected a unitrace -q metric file)",
                    self.what
                )
            };
            return Err(InputError::at_file(path, problem));
        }
        if rows == 0 {
            return Err(InputError::at_file(
                path,
                format!(
                    "{} profile: the metric section has no kernel rows",
                    self.what
                ),
            ));
        }
        Ok(())
    }

    /// Adds one data row; returns false for rows without a kernel name.
    fn add_row(
        &mut self,
        path: &Path,
        line_no: u64,
        h: &Header,
        line: &str,
    ) -> Result<bool, InputError> {
        let (kernel, fields) = split_row(line, h.width).map_err(|problem| {
            InputError::at_line(path, line_no, format!("{} profile: {problem}", self.what))
        })?;
        if kernel.is_empty() {
            return Ok(false);
        }
        let slot = match self.index.get(kernel) {
            Some(&i) => i,
            None => {
                let i = self.kernels.len();
                self.index.insert(kernel.to_string(), i);
                self.kernels.push((
                    kernel.to_string(),
                    0,
                    vec![ColumnAgg::default(); self.wanted.names.len()],
                ));
                i
            }
        };
        let entry = &mut self.kernels[slot];
        entry.1 += 1;
        for (w, col) in h.columns.iter().enumerate() {
            let Some(col) = *col else { continue };
            // Field 0 of the header is `Kernel`; `fields` holds the rest.
            let raw = fields.get(col - 1).copied().unwrap_or("");
            let v = parse_value(raw).ok_or_else(|| {
                InputError::at_line(
                    path,
                    line_no,
                    format!(
                        "{} profile: column {}: `{}` is not a number",
                        self.what,
                        self.wanted.names[w],
                        raw.trim()
                    ),
                )
            })?;
            // Every column a roofline reads (time, clocks, occupancy,
            // byte and instruction counts, utilisation) is a non-negative
            // finite quantity; pandas would sum `-5` or `1e999` into a
            // meaningless roof, so such a value is refused where it is
            // (docs/errors.md#ambiguous-inputs). NaN stays "missing", as pandas
            // reads it.
            let bad = match v {
                Value::Int(i) if i < 0 => Some("is negative"),
                Value::Float(f) if f.is_infinite() => Some("is out of range"),
                Value::Float(f) if f < 0.0 => Some("is negative"),
                _ => None,
            };
            if let Some(bad) = bad {
                return Err(InputError::at_line(
                    path,
                    line_no,
                    format!(
                        "{} profile: column {}: `{}` {bad}",
                        self.what,
                        self.wanted.names[w],
                        raw.trim()
                    ),
                ));
            }
            if !matches!(v, Value::Int(_)) {
                self.all_int[w] = false;
            }
            entry.2[w].add(v);
        }
        Ok(true)
    }
}

struct Header {
    /// Number of fields of the header line (incl. a trailing empty one).
    width: usize,
    /// Per wanted column, its field index in this header.
    columns: Vec<Option<usize>>,
}

impl Header {
    fn parse(
        agg: &mut Aggregator,
        path: &Path,
        line_no: u64,
        line: &str,
    ) -> Result<Header, InputError> {
        let names: Vec<&str> = line.split(',').map(str::trim).collect();
        let mut columns = Vec::with_capacity(agg.wanted.names.len());
        for (w, wanted) in agg.wanted.names.iter().enumerate() {
            let pos = names.iter().position(|n| n == wanted);
            // Two columns of the same name leave the value ambiguous
            // (pandas silently reads the first and renames the second
            // `NAME.1`): refuse the header (docs/errors.md#ambiguous-inputs).
            if let Some(p) = pos {
                if let Some(q) = names[p + 1..].iter().position(|n| n == wanted) {
                    return Err(InputError::at_line(
                        path,
                        line_no,
                        format!(
                            "{} profile: column {} appears twice (fields {} and {})",
                            agg.what,
                            wanted,
                            p + 1,
                            p + q + 2
                        ),
                    ));
                }
            }
            if pos.is_none() && agg.wanted.required[w] {
                let group = if agg.what == "compute" {
                    "VectorEngine138"
                } else {
                    "ComputeBasic"
                };
                return Err(InputError::at_line(
                    path,
                    line_no,
                    format!(
                        "{} profile: missing column {} (profile the {} metric group)",
                        agg.what, wanted, group
                    ),
                ));
            }
            if pos.is_some() {
                agg.present[w] = true;
            }
            columns.push(pos);
        }
        Ok(Header {
            width: names.len(),
            columns,
        })
    }
}

/// Splits a query row into the kernel name and the remaining fields
/// (docs/formats.md#metric-csv-kernel-name): a quoted name runs to the closing quote that is followed by
/// a comma; an unquoted name (files before 2024-03) may contain commas, so
/// it takes as many leading fields as the row has more than the header.
fn split_row(line: &str, width: usize) -> Result<(&str, Vec<&str>), String> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix('"') {
        let mut search = 0;
        loop {
            let Some(q) = rest[search..].find('"') else {
                return Err("unterminated quoted kernel name".to_string());
            };
            let q = search + q;
            let after = rest[q + 1..].trim_start();
            if after.is_empty() || after.starts_with(',') {
                let name = &rest[..q];
                let tail = after.strip_prefix(',');
                let fields: Vec<&str> = match tail {
                    Some(t) => t.split(',').collect(),
                    None => Vec::new(),
                };
                check_width(fields.len() + 1, width)?;
                return Ok((name, fields));
            }
            search = q + 1;
        }
    }
    let all: Vec<&str> = line.split(',').collect();
    if all.len() < width {
        check_width(all.len(), width)?;
    }
    let extra = all.len() - width;
    // The name is everything up to the comma that starts the header's
    // second field.
    let mut end = 0;
    for f in &all[..=extra] {
        end += f.len() + 1;
    }
    let name = line[..end - 1].trim();
    Ok((name, all[extra + 1..].to_vec()))
}

fn check_width(got: usize, width: usize) -> Result<(), String> {
    if got == width {
        Ok(())
    } else {
        Err(format!("row has {got} fields, header has {width}"))
    }
}

/// One input of a profile: its path (for messages) and its reader.
pub type ProfileInput<'a> = (&'a Path, Box<dyn BufRead + 'a>);

/// One kernel (full name incl. shape) of the memory profile.
#[derive(Debug, Clone)]
pub struct MemoryKernel {
    pub name: String,
    pub instances: u64,
    /// Σ GpuTime[ns].
    pub time_ns: Num,
    /// Mean AvgGpuCoreFrequencyMHz (NaN when the column is absent).
    pub frequency_mhz: f64,
    /// Mean XVE_THREADS_OCCUPANCY_ALL[%] (NaN when absent).
    pub occupancy_pct: f64,
    /// Σ read + Σ write bytes per level of [`MemoryProfile::levels`];
    /// `None` when the profile has no counters for that level.
    pub bytes: Vec<Option<Num>>,
}

#[derive(Debug, Clone)]
pub struct MemoryProfile {
    /// Level keys in the order of [`MemoryKernel::bytes`].
    pub levels: Vec<String>,
    /// Per level: whether the profile has its byte counters.
    pub level_present: Vec<bool>,
    /// Sorted by time, longest first (ties by name).
    pub kernels: Vec<MemoryKernel>,
    /// Σ time over all kernels of the memory profile.
    pub total_time_ns: Num,
}

/// One kernel of the compute profile.
#[derive(Debug, Clone)]
pub struct ComputeKernel {
    pub name: String,
    pub instances: u64,
    /// Operation counts (instruction count × factor), by [`Precision::index`].
    pub ops: [Num; 5],
    /// Mean XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%].
    pub xmx_fp16_utilization: f64,
}

#[derive(Debug, Clone)]
pub struct ComputeProfile {
    /// In first-seen order.
    pub kernels: Vec<ComputeKernel>,
}

impl ComputeProfile {
    pub fn by_name(&self) -> HashMap<&str, &ComputeKernel> {
        self.kernels.iter().map(|k| (k.name.as_str(), k)).collect()
    }
}

/// Reads memory profiles (several files, e.g. one per MPI rank, are
/// aggregated together). `levels` come from the device file; `l3` and
/// `gpu_memory` counters are required, further levels optional.
pub fn read_memory_profile<'a>(
    inputs: impl IntoIterator<Item = ProfileInput<'a>>,
    levels: &[MemoryLevel],
) -> Result<MemoryProfile, InputError> {
    let mut names = vec![
        GPU_TIME.to_string(),
        CORE_FREQUENCY.to_string(),
        OCCUPANCY.to_string(),
    ];
    let mut required = vec![true, false, false];
    for level in levels {
        let needed = level.key == "l3" || level.key == "gpu_memory";
        names.push(level.read_column());
        required.push(needed);
        names.push(level.write_column());
        required.push(needed);
    }
    let mut agg = Aggregator::new("memory", Wanted { names, required });
    for (path, input) in inputs {
        agg.read(path, input)?;
    }
    let time_int = agg.all_int[0];
    let level_present: Vec<bool> = (0..levels.len())
        .map(|i| agg.present[3 + 2 * i] || agg.present[4 + 2 * i])
        .collect();
    let mut kernels: Vec<MemoryKernel> = agg
        .kernels
        .iter()
        .map(|(name, instances, cols)| {
            let bytes = (0..levels.len())
                .map(|i| {
                    if !level_present[i] {
                        return None;
                    }
                    let (r, w) = (3 + 2 * i, 4 + 2 * i);
                    let read = cols[r].total(agg.all_int[r]);
                    let write = cols[w].total(agg.all_int[w]);
                    Some(read.plus(write))
                })
                .collect();
            MemoryKernel {
                name: name.clone(),
                instances: *instances,
                time_ns: cols[0].total(time_int),
                frequency_mhz: cols[1].mean(),
                occupancy_pct: cols[2].mean(),
                bytes,
            }
        })
        .collect();
    // pandas sort_values(ascending=False) after groupby (keys sorted by
    // name): descending time, ties keep name order.
    kernels.sort_by(|a, b| {
        b.time_ns
            .as_f64()
            .total_cmp(&a.time_ns.as_f64())
            .then_with(|| a.name.cmp(&b.name))
    });
    let total_time_ns = kernels.iter().fold(
        if time_int {
            Num::Int(0)
        } else {
            Num::Float(0.0)
        },
        |acc, k| acc.plus(k.time_ns),
    );
    Ok(MemoryProfile {
        levels: levels.iter().map(|l| l.key.clone()).collect(),
        level_present,
        kernels,
        total_time_ns,
    })
}

/// Reads compute profiles (several files are aggregated together).
pub fn read_compute_profile<'a>(
    inputs: impl IntoIterator<Item = ProfileInput<'a>>,
) -> Result<ComputeProfile, InputError> {
    let mut names: Vec<String> = Precision::ALL
        .iter()
        .map(|p| op_counter(*p).0.to_string())
        .collect();
    names.push(XMX_FP16_UTILIZATION.to_string());
    let required = vec![true; names.len()];
    let mut agg = Aggregator::new("compute", Wanted { names, required });
    for (path, input) in inputs {
        agg.read(path, input)?;
    }
    let kernels = agg
        .kernels
        .iter()
        .map(|(name, instances, cols)| {
            let mut ops = [Num::Int(0); 5];
            for p in Precision::ALL {
                let i = p.index();
                ops[i] = cols[i].total(agg.all_int[i]).times(op_counter(p).1);
            }
            ComputeKernel {
                name: name.clone(),
                instances: *instances,
                ops,
                xmx_fp16_utilization: cols[5].mean(),
            }
        })
        .collect();
    Ok(ComputeProfile { kernels })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels() -> Vec<MemoryLevel> {
        vec![
            MemoryLevel {
                key: "l3".into(),
                bandwidth_gb_per_s: 2043.0,
            },
            MemoryLevel {
                key: "gpu_memory".into(),
                bandwidth_gb_per_s: 1055.0,
            },
        ]
    }

    fn memory(text: &str) -> Result<MemoryProfile, InputError> {
        let p = Path::new("m.csv");
        read_memory_profile(
            [(p, Box::new(text.as_bytes()) as Box<dyn BufRead>)],
            &levels(),
        )
    }

    fn compute(text: &str) -> Result<ComputeProfile, InputError> {
        let p = Path::new("c.csv");
        read_compute_profile([(p, Box::new(text.as_bytes()) as Box<dyn BufRead>)])
    }

    const MEM_HEADER: &str = "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],AvgGpuCoreFrequencyMHz[MHz],L3_BYTE_READ[bytes],L3_BYTE_WRITE[bytes],GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],XVE_THREADS_OCCUPANCY_ALL[%]";

    #[test]
    fn sums_per_kernel_and_sorts_by_time() {
        let text = format!(
            "\n=== Device #0 Metrics ===\n\n{MEM_HEADER}\n\"a[SIMD16 {{1; 1; 1}} {{1; 1; 1}}]\",1,0,100,1000,10,1,5,5,40.000000\n\n\"b, c[SIMD16 {{1; 1; 1}} {{1; 1; 1}}]\",2,0,300,1200,20,2,6,6,50.000000\n\n\"a[SIMD16 {{1; 1; 1}} {{1; 1; 1}}]\",3,0,100,1100,10,1,5,5,60.000000\n\n"
        );
        let m = memory(&text).unwrap();
        assert_eq!(m.kernels.len(), 2);
        assert_eq!(m.kernels[0].name, "b, c[SIMD16 {1; 1; 1} {1; 1; 1}]");
        assert_eq!(m.kernels[1].time_ns, Num::Int(200));
        assert_eq!(m.kernels[1].instances, 2);
        assert_eq!(m.kernels[1].bytes[0], Some(Num::Int(22)));
        assert_eq!(m.kernels[1].bytes[1], Some(Num::Int(20)));
        assert_eq!(m.kernels[1].frequency_mhz, 1050.0);
        assert_eq!(m.kernels[1].occupancy_pct, 50.0);
        assert_eq!(m.total_time_ns, Num::Int(500));
    }

    #[test]
    fn result_dir_file_without_banner_is_read() {
        // docs/compatibility.md#roofline-7: the original finds no header here.
        let text = format!("\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,100,1000,10,1,5,5,40\n\n");
        let m = memory(&text).unwrap();
        assert_eq!(m.kernels.len(), 1);
    }

    #[test]
    fn each_device_section_uses_its_own_header() {
        // Device 1 lists the columns in another order; the original would
        // read its rows under device 0's header (6.5 item 7).
        let other = "Kernel,GlobalInstanceId,SubDeviceId,GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],L3_BYTE_READ[bytes],L3_BYTE_WRITE[bytes],GpuTime[ns]";
        let text = format!(
            "\n=== Device #0 Metrics ===\n\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,100,1000,10,1,5,5,40\n\n\n=== Device #1 Metrics ===\n\n{other}\n\"k[SIMD16]\",2,0,7,7,3,3,50\n\n"
        );
        let m = memory(&text).unwrap();
        assert_eq!(m.kernels[0].time_ns, Num::Int(150));
        assert_eq!(m.kernels[0].bytes[0], Some(Num::Int(17)));
        assert_eq!(m.kernels[0].bytes[1], Some(Num::Int(24)));
    }

    #[test]
    fn negative_and_infinite_values_are_refused_at_their_line() {
        for (value, problem) in [
            ("-100", "`-100` is negative"),
            ("-1.5e3", "`-1.5e3` is negative"),
            ("1e999", "`1e999` is out of range"),
            ("-inf", "`-inf` is out of range"),
        ] {
            let text = format!(
                "\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,100,1000,10,1,5,5,40\n\"k[SIMD16]\",1,0,{value},1000,10,1,5,5,40\n"
            );
            let e = memory(&text).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("m.csv:4: memory profile: column GpuTime[ns]: {problem}")
            );
        }
        // NaN is a missing value, as pandas reads it.
        let text = format!("\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,nan,1000,10,1,5,5,40\n");
        assert!(memory(&text).is_ok());
    }

    #[test]
    fn a_wanted_column_named_twice_is_refused() {
        let header = MEM_HEADER.replace("AvgGpuCoreFrequencyMHz[MHz]", "GpuTime[ns]");
        let text = format!("\n{header}\n\"k[SIMD16]\",1,0,100,1000,10,1,5,5,40\n");
        let e = memory(&text).unwrap_err().to_string();
        assert_eq!(
            e,
            "m.csv:2: memory profile: column GpuTime[ns] appears twice (fields 4 and 5)"
        );
    }

    #[test]
    fn identical_rows_are_all_counted() {
        let row = "\"k[SIMD16]\",1,0,100,1000,10,1,5,5,40";
        let text = format!("\n{MEM_HEADER}\n{row}\n\n{row}\n\n");
        let m = memory(&text).unwrap();
        assert_eq!(m.kernels[0].time_ns, Num::Int(200));
    }

    #[test]
    fn v0_main_log_with_unquoted_names_and_trailing_commas() {
        let text = "=== Device Timing Summary ===\n\n                 Kernel,       Calls,\nk[SIMD16 {1; 1; 1} {4; 2; 1}],           1,\n\n== Kernel Metrics ==\n\nKernel,Device,SubDeviceId,GpuTime[ns],L3_BYTE_READ[bytes],L3_BYTE_WRITE[bytes],GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],\nf<a, 2>[SIMD16 {1; 1; 1} {4; 2; 1}],0,0,682680,1,2,3,4,\n\nKernel,Device,SubDeviceId,GpuTime[ns],L3_BYTE_READ[bytes],L3_BYTE_WRITE[bytes],GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],\nf<a, 2>[SIMD16 {1; 1; 1} {4; 2; 1}],0,0,1.5e3,1,2,3,4,\n\n=== API Timing Summary ===\n\nTotal Execution Time (ns): 5\n          zeInit,  1,  5,\n";
        let m = memory(text).unwrap();
        assert_eq!(m.kernels.len(), 1);
        assert_eq!(m.kernels[0].name, "f<a, 2>[SIMD16 {1; 1; 1} {4; 2; 1}]");
        assert_eq!(m.kernels[0].time_ns, Num::Float(684180.0));
        assert!(m.kernels[0].frequency_mhz.is_nan());
    }

    #[test]
    fn op_counts_use_the_factors() {
        let text = "\nKernel,GlobalInstanceId,SubDeviceId,XVE_INST_EXECUTED_FP16[events],XVE_INST_EXECUTED_FP32[events],XVE_INST_EXECUTED_FP64[events],XVE_INST_EXECUTED_XMX_FP16[events],XVE_INST_EXECUTED_XMX_BF16[events],XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%]\n\"k[SIMD16]\",1,0,1,1,1,1,1,80.5\n\n\"k[SIMD16]\",2,0,1,1,1,1,1.0,90.5\n";
        let c = compute(text).unwrap();
        let k = &c.kernels[0];
        assert_eq!(k.ops[Precision::Fp16.index()], Num::Int(128));
        assert_eq!(k.ops[Precision::Fp32.index()], Num::Int(64));
        assert_eq!(k.ops[Precision::Fp64.index()], Num::Int(64));
        assert_eq!(k.ops[Precision::Fp16Xmx.index()], Num::Int(1024));
        assert_eq!(k.ops[Precision::Bf16Xmx.index()], Num::Float(1024.0));
        assert_eq!(k.xmx_fp16_utilization, 85.5);
    }

    #[test]
    fn missing_column_and_section_are_named() {
        let text = "\n=== Device #0 Metrics ===\n\nKernel,GlobalInstanceId,GpuTime[ns]\n\"k[SIMD16]\",1,5\n";
        let e = memory(text).unwrap_err().to_string();
        assert_eq!(
            e,
            "m.csv:4: memory profile: missing column L3_BYTE_READ[bytes] (profile the ComputeBasic metric group)"
        );
        let e = compute("just text\n").unwrap_err().to_string();
        assert!(
            e.starts_with("c.csv: compute profile: missing section"),
            "{e}"
        );
        let e = compute("\n=== Device #0 Metrics ===\n\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no `Kernel,` header"), "{e}");
    }

    #[test]
    fn non_numeric_value_is_an_error_with_line() {
        let text = format!("\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,abc,1000,10,1,5,5,40\n");
        let e = memory(&text).unwrap_err().to_string();
        assert_eq!(
            e,
            "m.csv:3: memory profile: column GpuTime[ns]: `abc` is not a number"
        );
    }

    #[test]
    fn wrong_field_count_is_an_error() {
        let text = format!("\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,100\n");
        let e = memory(&text).unwrap_err().to_string();
        assert_eq!(
            e,
            "m.csv:3: memory profile: row has 4 fields, header has 10"
        );
    }
}
