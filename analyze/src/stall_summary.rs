//! The numbers behind the stall dashboard (docs/analyze.md#stall-dashboard):
//! per kernel name, the stall counts of all its runs summed per stall type,
//! and per instruction address the counts of that kernel summed over its
//! runs — what perfdashboard's `--eustall` view shows
//! (docs/compatibility.md#analyze-stall-dashboard).
//!
//! Built from [`KernelRun`]s, so the chart server (every stall section of
//! the file) and `analyze -o x.html` (the runs the stall mode processes)
//! aggregate the same way.

use std::collections::{BTreeMap, HashMap};
use std::io::{Seek, SeekFrom};
use std::path::Path;

use unitrace_core::error::InputError;
use unitrace_core::stall_csv::{
    open_input, scan_file_sections, CsvReader, FileKind, KernelRun, StallReader, StallRow,
    StallType,
};

/// The stall types in the order, with the labels, the dashboard shows them
/// (perfdashboard's order: active cycles first, then the stall reasons,
/// docs/compatibility.md#analyze-stall-dashboard).
pub const DISPLAY_ORDER: [StallType; StallType::COUNT] = [
    StallType::Active,
    StallType::Sbid,
    StallType::Send,
    StallType::Dist,
    StallType::Pipe,
    StallType::Sync,
    StallType::InstrFetch,
    StallType::Control,
    StallType::PSDep,
    StallType::Other,
];

/// The label a reader sees for `t` (perfdashboard's wording).
pub fn label(t: StallType) -> &'static str {
    match t {
        StallType::Active => "Active (No Stall)",
        StallType::Sbid => "SBID (DRAM latency)",
        StallType::Send => "Send (Memory access)",
        StallType::Dist => "Dist/Acc Dep",
        StallType::Pipe => "Pipe Busy",
        StallType::Sync => "Sync/Barrier",
        StallType::InstrFetch => "Instr Fetch",
        StallType::Control => "Control/Branch",
        StallType::PSDep => "PS Dep (TDR)",
        StallType::Other => "Other",
    }
}

/// A short lower-case key for `t` (CSS classes, element ids, data
/// attributes).
pub fn key(t: StallType) -> &'static str {
    match t {
        StallType::Active => "active",
        StallType::Sbid => "sbid",
        StallType::Send => "send",
        StallType::Dist => "dist",
        StallType::Pipe => "pipe",
        StallType::Sync => "sync",
        StallType::InstrFetch => "instrfetch",
        StallType::Control => "control",
        StallType::PSDep => "psdep",
        StallType::Other => "other",
    }
}

/// Counts per stall type, indexed by [`StallType::index`].
pub type Counts = [u64; StallType::COUNT];

/// Stall events of `counts` (every type but `Active`, which counts cycles
/// without a stall; perfdashboard ranks hot spots by this sum).
pub fn stall_events(counts: &Counts) -> u64 {
    StallType::ALL
        .iter()
        .filter(|t| **t != StallType::Active)
        .map(|t| counts[t.index()])
        .sum()
}

/// Every count, `Active` included.
pub fn all_events(counts: &Counts) -> u64 {
    counts.iter().sum()
}

/// One instruction of a kernel with its counts summed over the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpStalls {
    pub ip: u64,
    pub counts: Counts,
}

impl IpStalls {
    pub fn stalls(&self) -> u64 {
        stall_events(&self.counts)
    }

    /// The address as the dashboard writes it: `0x` and at least four hex
    /// digits (perfdashboard's `0x%04x`).
    pub fn hex(&self) -> String {
        hex_ip(self.ip)
    }

    /// The row the stall report and the by-line view take (IP text in hex,
    /// as a CSV writes it).
    pub fn to_row(&self, kernel: &str) -> StallRow {
        StallRow {
            kernel: kernel.to_string(),
            ip: self.ip,
            ip_text: format!("{:x}", self.ip),
            counts: self.counts,
            line: 0,
            offset: 0,
        }
    }
}

/// `0x` and at least four lower-case hex digits.
pub fn hex_ip(ip: u64) -> String {
    format!("0x{ip:04x}")
}

/// All rows of one kernel name.
#[derive(Debug, Clone)]
pub struct KernelStalls {
    pub name: String,
    /// Runs of consecutive rows (kernel invocations as the CSV groups them).
    pub runs: usize,
    /// Rows read (every row, with or without stall events).
    pub rows: usize,
    /// Sum of every row's counts.
    pub totals: Counts,
    /// Counts per instruction address, summed over the runs.
    ips: BTreeMap<u64, Counts>,
}

impl KernelStalls {
    fn new(name: &str) -> KernelStalls {
        KernelStalls {
            name: name.to_string(),
            runs: 0,
            rows: 0,
            totals: [0; StallType::COUNT],
            ips: BTreeMap::new(),
        }
    }

    /// Stall events of the kernel, `Active` excluded.
    pub fn stalls(&self) -> u64 {
        stall_events(&self.totals)
    }

    /// Distinct instruction addresses sampled.
    pub fn addresses(&self) -> usize {
        self.ips.len()
    }

    /// Every address with at least one stall event, in address order.
    pub fn stalled_ips(&self) -> Vec<IpStalls> {
        self.ips
            .iter()
            .map(|(&ip, &counts)| IpStalls { ip, counts })
            .filter(|s| s.stalls() > 0)
            .collect()
    }

    /// The `n` addresses with the most stall events (`Active` excluded),
    /// most first; equal counts in address order. Addresses without a
    /// stall event are never listed.
    pub fn top_ips(&self, n: usize) -> Vec<IpStalls> {
        let mut ips = self.stalled_ips();
        // Stable sort over address order: ties stay in address order.
        ips.sort_by_key(|s| std::cmp::Reverse(s.stalls()));
        ips.truncate(n);
        ips
    }
}

/// A hot spot among all kernels: one address of one kernel.
#[derive(Debug, Clone)]
pub struct Hotspot<'a> {
    pub kernel: &'a KernelStalls,
    pub ip: IpStalls,
}

/// The stall samples of a file (or of the runs the stall mode processed),
/// per kernel name in order of first appearance.
#[derive(Debug, Clone, Default)]
pub struct StallSummary {
    kernels: Vec<KernelStalls>,
    positions: HashMap<String, usize>,
    /// Which columns some section of the input has.
    present: [bool; StallType::COUNT],
    rows: usize,
}

impl StallSummary {
    pub fn new() -> StallSummary {
        StallSummary::default()
    }

    /// Reads every stall section of `path` (all devices together, as
    /// perfdashboard does); metric sections of a mixed file are skipped.
    pub fn read(path: &Path) -> Result<StallSummary, InputError> {
        let mut summary = StallSummary::new();
        for section in scan_file_sections(path)? {
            if section.kind() != FileKind::Stall {
                continue;
            }
            for t in StallType::ALL {
                if section.header.index_of(t.column_name()).is_some() {
                    summary.present[t.index()] = true;
                }
            }
            let mut file = open_input(path)?;
            file.seek(SeekFrom::Start(section.start_offset))
                .map_err(|e| InputError::io(path, &e))?;
            let mut reader = StallReader::new(CsvReader::for_section(file, path, &section));
            while let Some(run) = reader.next_run()? {
                summary.add_run(&run);
            }
        }
        Ok(summary)
    }

    /// Marks the columns of a section as present (the stall mode, which
    /// reads its section itself).
    pub fn note_columns(&mut self, has: impl Fn(StallType) -> bool) {
        for t in StallType::ALL {
            if has(t) {
                self.present[t.index()] = true;
            }
        }
    }

    pub fn add_run(&mut self, run: &KernelRun) {
        let at = match self.positions.get(&run.kernel) {
            Some(&at) => at,
            None => {
                self.positions
                    .insert(run.kernel.clone(), self.kernels.len());
                self.kernels.push(KernelStalls::new(&run.kernel));
                self.kernels.len() - 1
            }
        };
        let kernel = &mut self.kernels[at];
        kernel.runs += 1;
        kernel.rows += run.rows.len();
        self.rows += run.rows.len();
        for row in &run.rows {
            let slot = kernel.ips.entry(row.ip).or_insert([0; StallType::COUNT]);
            for (i, c) in row.counts.iter().enumerate() {
                slot[i] += c;
                kernel.totals[i] += c;
            }
        }
    }

    pub fn kernels(&self) -> &[KernelStalls] {
        &self.kernels
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelStalls> {
        self.positions.get(name).map(|&at| &self.kernels[at])
    }

    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// Rows read over all kernels.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The stall types shown: those a section has a column for, in
    /// [`DISPLAY_ORDER`] (`PSDepStall` only for Xe2 files).
    pub fn shown_types(&self) -> Vec<StallType> {
        let any = self.present.iter().any(|p| *p);
        DISPLAY_ORDER
            .into_iter()
            .filter(|t| if any { self.present[t.index()] } else { true })
            .collect()
    }

    /// The `n` hottest addresses over all kernels (perfdashboard's second
    /// panel, per kernel and address), most stall events first; ties in
    /// kernel order, then address order.
    pub fn top_hotspots(&self, n: usize) -> Vec<Hotspot<'_>> {
        let mut all: Vec<Hotspot<'_>> = Vec::new();
        for kernel in &self.kernels {
            // A kernel contributes at most its own top `n`.
            for ip in kernel.top_ips(n) {
                all.push(Hotspot { kernel, ip });
            }
        }
        all.sort_by_key(|h| std::cmp::Reverse(h.ip.stalls()));
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kernel: &str, rows: &[(u64, &[(StallType, u64)])]) -> KernelRun {
        KernelRun {
            section: 0,
            device: Some(0),
            kernel: kernel.to_string(),
            first_line: 1,
            byte_range: 0..0,
            rows: rows
                .iter()
                .map(|(ip, counts)| {
                    let mut c = [0u64; StallType::COUNT];
                    for &(t, n) in *counts {
                        c[t.index()] = n;
                    }
                    StallRow {
                        kernel: kernel.to_string(),
                        ip: *ip,
                        ip_text: format!("{ip:x}"),
                        counts: c,
                        line: 0,
                        offset: 0,
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn runs_of_one_name_are_summed_per_type_and_address() {
        let mut s = StallSummary::new();
        s.add_run(&run(
            "a",
            &[
                (0x10, &[(StallType::Sbid, 5), (StallType::Active, 100)]),
                (0x20, &[(StallType::Pipe, 2)]),
            ],
        ));
        s.add_run(&run("b", &[(0x10, &[(StallType::Send, 9)])]));
        s.add_run(&run("a", &[(0x10, &[(StallType::Sbid, 1)])]));
        assert_eq!(s.kernel_names(), ["a", "b"]);
        let a = s.kernel("a").unwrap();
        assert_eq!((a.runs, a.rows, a.addresses()), (2, 3, 2));
        assert_eq!(a.totals[StallType::Sbid.index()], 6);
        assert_eq!(a.totals[StallType::Active.index()], 100);
        assert_eq!(a.stalls(), 8);
        let top = a.top_ips(20);
        assert_eq!(top.len(), 2);
        assert_eq!((top[0].ip, top[0].stalls()), (0x10, 6));
        assert_eq!(top[0].hex(), "0x0010");
        assert_eq!(s.rows(), 4);
    }

    #[test]
    fn top_ips_ignore_active_and_keep_address_order_on_ties() {
        let mut s = StallSummary::new();
        s.add_run(&run(
            "k",
            &[
                (0x30, &[(StallType::Other, 4)]),
                (0x10, &[(StallType::Active, 1000)]),
                (0x20, &[(StallType::Control, 4)]),
                (0x40, &[(StallType::Dist, 7)]),
            ],
        ));
        let k = s.kernel("k").unwrap();
        let ips: Vec<u64> = k.top_ips(20).iter().map(|i| i.ip).collect();
        // 0x10 has only active cycles: never a hot spot.
        assert_eq!(ips, [0x40, 0x20, 0x30]);
        assert_eq!(k.top_ips(1).len(), 1);
        let global = s.top_hotspots(2);
        assert_eq!(global.len(), 2);
        assert_eq!(global[0].ip.ip, 0x40);
    }

    #[test]
    fn hex_has_at_least_four_digits() {
        assert_eq!(hex_ip(0x1b8), "0x01b8");
        assert_eq!(hex_ip(0x12345), "0x12345");
    }
}
