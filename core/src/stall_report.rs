//! Stall-to-source report (docs/compatibility.md#analyze-sbid, #analyze-stall-report): which instruction of a
//! kernel stalls, on which source line, and — for SBID stalls — which
//! earlier instruction it waits for, found by following the SBID tokens
//! backwards through the basic blocks of the annotated `.asm`.
//!
//! Differences from the original script, all fixes of
//! docs/compatibility.md#analyze-quirk-12, #analyze-quirk-13 (the text is otherwise identical):
//! * the backward walk visits every block at most once (the original had
//!   no visited set and looped forever on a CFG cycle with an unresolvable
//!   token) and looks tokens up in a per-token index of allocating lines
//!   instead of rescanning lines, so a 100k-instruction kernel costs no
//!   quadratic time;
//! * a line that satisfies two stalled tokens satisfies both (the original
//!   removed items from the list it was iterating over and skipped one);
//! * the source line and file of every instruction (stalled or cause) are
//!   the nearest `// Line` / `// File` markers above it in the file, which
//!   is what IGC means by them; the original took whatever marker its walk
//!   met next, which could lie in another predecessor block;
//! * the `load`/`store`/`send`/`EOT` test that decides whether a stalled
//!   instruction's plain `$N` tokens are allocations looks at the
//!   instruction only, not at its trailing comment;
//! * rows with equal counts keep their file order (stable sort).

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
pub use serde_json;
pub use serde_json::Value as JsonValue;

use crate::shader_dump::{AsmListing, LineKind};
use crate::stall_csv::StallRow;

/// The stall columns in the order the original uses everywhere
/// (docs/compatibility.md#analyze-stall-charts).
pub const STALL_COLUMNS: [&str; 8] = [
    "ControlStall[Events]",
    "PipeStall[Events]",
    "SendStall[Events]",
    "DistStall[Events]",
    "SbidStall[Events]",
    "SyncStall[Events]",
    "InstrFetchStall[Events]",
    "OtherStall[Events]",
];

/// Index of `SbidStall[Events]` in [`STALL_COLUMNS`].
pub const SBID: usize = 4;

/// Short names used in headings (`<name> Stalls: `) and in JSON.
pub const STALL_NAMES: [&str; 8] = [
    "Control",
    "Pipe",
    "Send",
    "Dist",
    "Sbid",
    "Sync",
    "InstrFetch",
    "Other",
];

/// Order of the report sections: SBID first, then the others in column
/// order (docs/compatibility.md#analyze-other-stalls).
const SECTION_ORDER: [usize; 8] = [SBID, 0, 1, 2, 3, 5, 6, 7];

const STARS: &str = "***********************************************************************************************";
const EQUALS: &str = "===============================================================================================";

/// One stall sample row of a kernel, whatever parser produced it.
pub trait StallCounts {
    /// Instruction offset (the `IP[Address]` value read as hex).
    fn ip(&self) -> u64;
    /// `IP[Address]` as written in the CSV.
    fn ip_text(&self) -> &str;
    /// Count of stall type `index` (an index into [`STALL_COLUMNS`]).
    fn count(&self, index: usize) -> u64;
}

impl StallCounts for StallRow {
    fn ip(&self) -> u64 {
        self.ip
    }
    fn ip_text(&self) -> &str {
        &self.ip_text
    }
    fn count(&self, index: usize) -> u64 {
        // The first eight `StallType`s are the reported ones, in
        // `STALL_COLUMNS` order.
        self.counts[index]
    }
}

/// JSON of a kernel whose `.asm` is missing.
pub fn missing_asm_json(kernel: &str, message: &str) -> JsonValue {
    serde_json::json!({ "kernel": kernel, "asm": null, "error": message })
}

/// The `--report-format json` document of a run: `{"kernels": [...]}`,
/// pretty-printed, with a final newline.
pub fn json_document(kernels: Vec<JsonValue>) -> Vec<u8> {
    let doc = serde_json::json!({ "kernels": kernels });
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// A minimal owned stall row (tests, benchmarks, callers without a CSV).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StallSample {
    pub ip: u64,
    pub ip_text: String,
    pub counts: [u64; 8],
}

impl StallCounts for StallSample {
    fn ip(&self) -> u64 {
        self.ip
    }
    fn ip_text(&self) -> &str {
        &self.ip_text
    }
    fn count(&self, index: usize) -> u64 {
        self.counts[index]
    }
}

/// One reported stalled instruction.
#[derive(Debug, Clone)]
pub struct ReportEntry {
    /// Index into [`STALL_COLUMNS`].
    pub stall: usize,
    pub address: u64,
    pub count: u64,
    /// Line of the instruction in the listing.
    pub line: usize,
    /// SBID stalls only: listing lines of the instructions whose tokens the
    /// stalled instruction waits for, in discovery order.
    pub causes: Vec<usize>,
}

/// The entries of one stall type.
#[derive(Debug, Clone)]
pub struct ReportSection {
    pub stall: usize,
    /// Some row of the kernel has this stall type (else no heading, except
    /// for SBID whose heading is always printed).
    pub has_rows: bool,
    pub entries: Vec<ReportEntry>,
}

/// The stall report of one kernel.
#[derive(Debug, Clone)]
pub struct KernelReport {
    pub kernel: String,
    /// `-n` as given (negative = unlimited).
    pub top: i64,
    /// Sections in report order: SBID, Control, Pipe, Send, Dist, Sync,
    /// InstrFetch, Other.
    pub sections: Vec<ReportSection>,
    /// `IP[Address]` texts of stalled rows whose address is no instruction
    /// of the listing (distinct, file order).
    pub unknown_addresses: Vec<String>,
}

/// Builds the report of one kernel from its stall rows (any order; the
/// report sorts by count, ties in the given order). `top` < 0 = every row.
pub fn analyze_kernel<R: StallCounts>(
    kernel: &str,
    listing: &AsmListing,
    rows: &[R],
    top: i64,
) -> KernelReport {
    let index = TokenIndex::new(listing);
    let mut sections = Vec::with_capacity(8);
    let mut unknown_addresses: Vec<String> = Vec::new();
    for stall in SECTION_ORDER {
        let mut picked: Vec<&R> = rows.iter().filter(|r| r.count(stall) > 0).collect();
        let has_rows = !picked.is_empty();
        // Stable: equal counts keep their file order (docs/compatibility.md#analyze-quirk-13).
        picked.sort_by_key(|r| std::cmp::Reverse(r.count(stall)));
        if top >= 0 {
            picked.truncate(top as usize);
        }
        let mut entries = Vec::new();
        for row in picked {
            let Some(line) = listing.line_of_address(row.ip()) else {
                if !unknown_addresses.iter().any(|t| t == row.ip_text()) {
                    unknown_addresses.push(row.ip_text().to_string());
                }
                continue;
            };
            let causes = if stall == SBID {
                sbid_causes(listing, &index, line)
            } else {
                Vec::new()
            };
            entries.push(ReportEntry {
                stall,
                address: row.ip(),
                count: row.count(stall),
                line,
                causes,
            });
        }
        sections.push(ReportSection {
            stall,
            has_rows,
            entries,
        });
    }
    KernelReport {
        kernel: kernel.to_string(),
        top,
        sections,
        unknown_addresses,
    }
}

/// Where each SBID token is allocated: for every `$`-piece without a dot
/// found in the first `{...}` of an addressed instruction line, the sorted
/// lines holding it (all of them, and those without `sync.`).
struct TokenIndex<'a> {
    by_piece: HashMap<&'a str, (Vec<usize>, Vec<usize>)>,
}

impl<'a> TokenIndex<'a> {
    fn new(listing: &'a AsmListing) -> TokenIndex<'a> {
        let mut by_piece: HashMap<&'a str, (Vec<usize>, Vec<usize>)> = HashMap::new();
        for (i, line) in listing.lines().iter().enumerate() {
            if listing.kind(i) != LineKind::Instruction || !has_loose_address_prefix(line) {
                continue;
            }
            let has_sync = line.contains("sync.");
            for piece in brace_pieces(line) {
                if piece.starts_with('$') && !piece.contains('.') {
                    let slot = by_piece.entry(piece).or_default();
                    if slot.0.last() != Some(&i) {
                        slot.0.push(i);
                        if !has_sync {
                            slot.1.push(i);
                        }
                    }
                }
            }
        }
        TokenIndex { by_piece }
    }

    /// The last line in `start..=end` satisfying `token`.
    fn last_in(&self, token: &StalledToken, start: usize, end: usize) -> Option<usize> {
        let (all, no_sync) = self.by_piece.get(token.needle.as_str())?;
        let lines = if token.needs_no_sync { no_sync } else { all };
        let after = lines.partition_point(|&l| l <= end);
        let last = *lines.get(after.checked_sub(1)?)?;
        (last >= start).then_some(last)
    }
}

/// `re.match(r"/\* *\[", line)` of the original walk.
fn has_loose_address_prefix(line: &str) -> bool {
    line.strip_prefix("/*")
        .is_some_and(|r| r.trim_start_matches(' ').starts_with('['))
}

/// Comma-separated pieces inside the first `{...}` of a line.
fn brace_pieces(line: &str) -> impl Iterator<Item = &str> {
    let inside = line
        .split_once('{')
        .map(|(_, rest)| rest.split('}').next().unwrap_or(rest));
    inside.into_iter().flat_map(|s| s.split(','))
}

/// A token the stalled instruction waits for and how it is satisfied
/// (docs/compatibility.md#analyze-sbid): `$N.x` by a piece exactly `$N` anywhere,
/// `$N` by a piece exactly `$N` on a line without `sync.`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StalledToken {
    needle: String,
    needs_no_sync: bool,
}

/// The tokens a stalled instruction waits for (docs/compatibility.md#analyze-sbid).
fn stalled_tokens(line: &str) -> Vec<StalledToken> {
    // Only the instruction decides whether it is a send; its trailing
    // comment does not (docs/compatibility.md#analyze-quirk-12).
    let code = line.find("//").map_or(line, |at| &line[..at]);
    let is_send = ["load", "store", "send", "EOT"]
        .iter()
        .any(|w| code.contains(w));
    let keep = |piece: &str| !is_send || piece.contains('.');
    let mut tokens: Vec<&str> = brace_pieces(line)
        .filter(|p| p.starts_with('$') && keep(p))
        .collect();
    if tokens.is_empty() {
        // `sync.allrd ($5,$6)`: the first (...) group holding a `$` piece.
        for group in line.split('(').skip(1) {
            let inside = group.split(')').next().unwrap_or(group);
            let pieces: Vec<&str> = inside.split(',').filter(|p| p.starts_with('$')).collect();
            if !pieces.is_empty() {
                tokens.extend(pieces.into_iter().filter(|p| keep(p)));
                break;
            }
        }
    }
    tokens
        .into_iter()
        .map(|t| match t.split_once('.') {
            Some((needle, _)) => StalledToken {
                needle: needle.to_string(),
                needs_no_sync: false,
            },
            None => StalledToken {
                needle: t.to_string(),
                needs_no_sync: true,
            },
        })
        .collect()
}

/// The instructions the stalled instruction at listing line `stalled`
/// waits for: backwards from it through its block, then breadth-first
/// through predecessor blocks (each block once), until every token is
/// satisfied by its nearest allocating instruction (docs/compatibility.md#analyze-sbid).
fn sbid_causes(listing: &AsmListing, index: &TokenIndex, stalled: usize) -> Vec<usize> {
    let mut remaining = stalled_tokens(listing.line(stalled));
    let mut causes: Vec<usize> = Vec::new();
    if remaining.is_empty() {
        return causes;
    }
    let blocks = listing.blocks();
    let first = listing.block_of_line(stalled);
    let mut queued = vec![false; blocks.len()];
    let mut work: VecDeque<(usize, usize, Option<usize>)> = VecDeque::new();
    // The stalled block is scanned above the instruction first; it may come
    // back as its own predecessor (a loop), then as a whole.
    work.push_back((first, blocks[first].start, stalled.checked_sub(1)));
    while let Some((block, start, end)) = work.pop_front() {
        if let Some(end) = end.filter(|&e| e >= start) {
            let mut found: Vec<(usize, usize)> = remaining
                .iter()
                .enumerate()
                .filter_map(|(k, t)| index.last_in(t, start, end).map(|line| (line, k)))
                .collect();
            // The original meets them scanning upwards.
            found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut satisfied = vec![false; remaining.len()];
            for (line, k) in found {
                satisfied[k] = true;
                if !causes.contains(&line) {
                    causes.push(line);
                }
            }
            let mut k = 0;
            remaining.retain(|_| {
                let keep = !satisfied[k];
                k += 1;
                keep
            });
            if remaining.is_empty() {
                break;
            }
        }
        for &pred in &blocks[block].preds {
            if !queued[pred] {
                queued[pred] = true;
                work.push_back((pred, blocks[pred].start, Some(blocks[pred].end)));
            }
        }
    }
    causes
}

/// The text after the first three characters of a marker line
/// (`// Line 40:  x` → `Line 40:  x`), counted in characters as Python does.
fn marker_text(line: &str) -> &str {
    match line.char_indices().nth(3) {
        Some((at, _)) => &line[at..],
        None => "",
    }
}

impl KernelReport {
    /// The report text exactly as the original lays it out
    /// (docs/compatibility.md#analyze-stall-report), ending with the `=` line and its newline.
    pub fn to_text(&self, listing: &AsmListing) -> String {
        let mut out = String::new();
        out.push_str(&format!("Kernel: {}\n", self.kernel));
        out.push_str(&format!(
            "Assembly with instruction addresses: {}\n",
            listing.shown
        ));
        if self.top >= 0 {
            out.push_str(&format!(
                "\nReport of Top {} Stalls of Each Type\n",
                self.top
            ));
        } else {
            out.push_str("\nReport of Stalls of Each Type\n");
        }
        for section in &self.sections {
            if section.stall != SBID && !section.has_rows {
                continue;
            }
            out.push_str(STARS);
            out.push('\n');
            out.push_str(&format!("{} Stalls: \n", STALL_NAMES[section.stall]));
            for entry in &section.entries {
                write_entry(&mut out, listing, entry, section.stall == SBID);
            }
        }
        out.push_str(EQUALS);
        out.push('\n');
        out
    }
}

fn write_entry(out: &mut String, listing: &AsmListing, entry: &ReportEntry, sbid: bool) {
    out.push_str("\nInstruction\n  ");
    out.push_str(listing.line(entry.line));
    out.push('\n');
    if let Some(line_marker) = listing.line_marker_above(entry.line) {
        out.push_str("  ");
        out.push_str(marker_text(listing.line(line_marker)));
        out.push('\n');
        if let Some(file_marker) = listing.file_marker_above(entry.line) {
            out.push_str("  ");
            out.push_str(marker_text(listing.line(file_marker)));
            out.push('\n');
        }
    }
    if !sbid || entry.causes.is_empty() {
        out.push_str("is stalled\n");
        return;
    }
    out.push_str("is stalled potentially by\n");
    // Causes with a source line first, then those without (the original
    // printed its resolved dictionary before its pending list).
    for &cause in &entry.causes {
        if let Some(line_marker) = listing.line_marker_above(cause) {
            out.push_str("  instruction\n    ");
            out.push_str(listing.line(cause));
            out.push_str("\n    ");
            out.push_str(marker_text(listing.line(line_marker)));
            out.push_str("\n    ");
            match listing.file_marker_above(cause) {
                Some(f) => out.push_str(marker_text(listing.line(f))),
                None => out.push_str("File: unknown"),
            }
            out.push('\n');
        }
    }
    for &cause in &entry.causes {
        if listing.line_marker_above(cause).is_none() {
            out.push_str("  instruction\n    ");
            out.push_str(listing.line(cause));
            out.push('\n');
        }
    }
}

/// Source location of a listing line from its nearest markers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SourceLocation {
    /// Path of the nearest `// File:` marker above, if any.
    pub file: Option<String>,
    /// Number of the nearest `// Line N` marker above, if any.
    pub line: Option<u64>,
}

/// Source text of the nearest `// Line N:  text` marker (empty when IGC
/// could not read the source).
pub fn source_text(listing: &AsmListing, line: usize) -> Option<String> {
    let marker = listing.line_marker_above(line)?;
    let text = listing.line(marker);
    Some(
        text.split_once(':')
            .map(|(_, t)| t.trim().to_string())
            .unwrap_or_default(),
    )
}

/// The source location of listing line `line`.
pub fn source_location(listing: &AsmListing, line: usize) -> SourceLocation {
    let number = listing.line_marker_above(line).and_then(|m| {
        let text = listing.line(m);
        let after = text[2..].trim_start_matches(' ').strip_prefix("Line")?;
        let digits: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    });
    let file = listing.file_marker_above(line).map(|m| {
        let text = listing.line(m);
        let after = text[2..].trim_start_matches(' ');
        let after = after.strip_prefix("File").unwrap_or(after);
        after.trim_start_matches(':').trim().to_string()
    });
    SourceLocation { file, line: number }
}

#[derive(Serialize)]
struct JsonCause<'a> {
    address: Option<u64>,
    instruction: &'a str,
    file: Option<String>,
    line: Option<u64>,
}

#[derive(Serialize)]
struct JsonStall<'a> {
    stall_type: &'a str,
    address: u64,
    ip: String,
    count: u64,
    instruction: &'a str,
    file: Option<String>,
    line: Option<u64>,
    source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    causes: Option<Vec<JsonCause<'a>>>,
}

#[derive(Serialize)]
struct JsonKernel<'a> {
    kernel: &'a str,
    asm: &'a str,
    source_available: bool,
    stalls: Vec<JsonStall<'a>>,
    unknown_addresses: &'a [String],
}

impl KernelReport {
    /// The report as a JSON object: every reported stalled instruction with
    /// its address, stall type, count, source file and line, and (SBID) its
    /// potential causes.
    pub fn to_json(&self, listing: &AsmListing) -> serde_json::Value {
        let mut stalls = Vec::new();
        for section in &self.sections {
            for e in &section.entries {
                let loc = source_location(listing, e.line);
                let causes = (e.stall == SBID).then(|| {
                    e.causes
                        .iter()
                        .map(|&c| {
                            let l = source_location(listing, c);
                            JsonCause {
                                address: listing.address_of_line(c),
                                instruction: listing.line(c),
                                file: l.file,
                                line: l.line,
                            }
                        })
                        .collect()
                });
                stalls.push(JsonStall {
                    stall_type: STALL_NAMES[e.stall],
                    address: e.address,
                    ip: format!("0x{:x}", e.address),
                    count: e.count,
                    instruction: listing.line(e.line),
                    file: loc.file,
                    line: loc.line,
                    source: source_text(listing, e.line),
                    causes,
                });
            }
        }
        serde_json::to_value(JsonKernel {
            kernel: &self.kernel,
            asm: &listing.shown,
            source_available: listing.source_available(),
            stalls,
            unknown_addresses: &self.unknown_addresses,
        })
        .unwrap_or(serde_json::Value::Null)
    }
}

/// Stall events of one source line, summed per stall type.
#[derive(Debug, Clone)]
pub struct LineStalls {
    pub location: SourceLocation,
    pub text: Option<String>,
    pub counts: [u64; 8],
    /// The stalled instructions of the line: listing line and counts.
    pub instructions: Vec<(usize, [u64; 8])>,
}

impl LineStalls {
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `file:line`, with `unknown` for a missing part.
    pub fn label(&self) -> String {
        format!(
            "{}:{}",
            self.location.file.as_deref().unwrap_or("unknown"),
            self.location
                .line
                .map_or_else(|| "unknown".to_string(), |n| n.to_string())
        )
    }

    /// Whether `FILE:LINE` given by the user names this line: same number,
    /// and the file equal to the marker's path or to one of its trailing
    /// path components (`grf.cpp`, `u/grf.cpp`); `unknown` names lines
    /// without a file marker.
    pub fn matches(&self, file: &str, line: u64) -> bool {
        if self.location.line != Some(line) {
            return false;
        }
        match &self.location.file {
            None => file == "unknown",
            Some(f) => f == file || f.ends_with(&format!("/{file}")),
        }
    }
}

/// Stall events per source line (`--by-line`): every row whose address is
/// an instruction of the listing, summed per stall type and grouped by the
/// nearest markers. Sorted by total descending, then by location.
pub fn by_line<R: StallCounts>(listing: &AsmListing, rows: &[R]) -> Vec<LineStalls> {
    let mut groups: HashMap<SourceLocation, LineStalls> = HashMap::new();
    for row in rows {
        let counts: [u64; 8] = std::array::from_fn(|k| row.count(k));
        if counts.iter().all(|&c| c == 0) {
            continue;
        }
        let Some(line) = listing.line_of_address(row.ip()) else {
            continue;
        };
        let location = source_location(listing, line);
        let group = groups
            .entry(location.clone())
            .or_insert_with(|| LineStalls {
                location,
                text: source_text(listing, line),
                counts: [0; 8],
                instructions: Vec::new(),
            });
        for (sum, c) in group.counts.iter_mut().zip(counts) {
            *sum += c;
        }
        group.instructions.push((line, counts));
    }
    let mut out: Vec<LineStalls> = groups.into_values().collect();
    out.sort_by(|a, b| {
        b.total()
            .cmp(&a.total())
            .then_with(|| a.location.cmp(&b.location))
    });
    for g in &mut out {
        g.instructions.sort_by_key(|(line, _)| *line);
    }
    out
}

fn counts_header() -> String {
    let mut h = format!("{:>10}", "Total");
    for name in STALL_NAMES {
        h.push_str(&format!(" {name:>10}"));
    }
    h
}

fn counts_row(counts: &[u64; 8]) -> String {
    let total: u64 = counts.iter().sum();
    let mut r = format!("{total:>10}");
    for c in counts {
        r.push_str(&format!(" {c:>10}"));
    }
    r
}

/// `--by-line` as text: one row per source line, busiest first.
pub fn by_line_text(kernel: &str, listing: &AsmListing, lines: &[LineStalls]) -> String {
    let mut out = format!(
        "Kernel: {kernel}\nAssembly with instruction addresses: {}\n\nStall Events per Source Line\n{STARS}\n{}  Location\n",
        listing.shown,
        counts_header()
    );
    for l in lines {
        out.push_str(&counts_row(&l.counts));
        out.push_str("  ");
        out.push_str(&l.label());
        if let Some(t) = l.text.as_deref().filter(|t| !t.is_empty()) {
            out.push_str("  ");
            out.push_str(t);
        }
        out.push('\n');
    }
    out.push_str(EQUALS);
    out.push('\n');
    out
}

/// `--by-line --line FILE:LINE` as text: the stalled instructions of one
/// source line with their counts.
pub fn line_detail_text(
    kernel: &str,
    listing: &AsmListing,
    lines: &[LineStalls],
    file: &str,
    line: u64,
) -> String {
    let mut out = format!(
        "Kernel: {kernel}\nAssembly with instruction addresses: {}\n\n",
        listing.shown
    );
    let matching: Vec<&LineStalls> = lines.iter().filter(|l| l.matches(file, line)).collect();
    if matching.is_empty() {
        out.push_str(&format!(
            "No stalled instruction on source line {file}:{line}\n"
        ));
        out.push_str(EQUALS);
        out.push('\n');
        return out;
    }
    for l in matching {
        out.push_str(&format!("Source line {}", l.label()));
        if let Some(t) = l.text.as_deref().filter(|t| !t.is_empty()) {
            out.push_str(&format!(":  {t}"));
        }
        out.push('\n');
        out.push_str(STARS);
        out.push('\n');
        out.push_str(&format!("{}  Instruction\n", counts_header()));
        for (ins, counts) in &l.instructions {
            out.push_str(&counts_row(counts));
            out.push_str("  ");
            out.push_str(listing.line(*ins));
            out.push('\n');
        }
        out.push_str(&counts_row(&l.counts));
        out.push_str("  (line total)\n");
    }
    out.push_str(EQUALS);
    out.push('\n');
    out
}

/// `--by-line` as JSON (optionally restricted to one source line).
pub fn by_line_json(
    kernel: &str,
    listing: &AsmListing,
    lines: &[LineStalls],
    only: Option<(&str, u64)>,
) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = lines
        .iter()
        .filter(|l| only.is_none_or(|(f, n)| l.matches(f, n)))
        .map(|l| {
            let counts: serde_json::Map<String, serde_json::Value> = STALL_NAMES
                .iter()
                .zip(l.counts)
                .map(|(n, c)| (n.to_string(), c.into()))
                .collect();
            let instructions: Vec<serde_json::Value> = l
                .instructions
                .iter()
                .map(|(ins, c)| {
                    let per: serde_json::Map<String, serde_json::Value> = STALL_NAMES
                        .iter()
                        .zip(c)
                        .map(|(n, c)| (n.to_string(), (*c).into()))
                        .collect();
                    serde_json::json!({
                        "address": listing.address_of_line(*ins),
                        "instruction": listing.line(*ins),
                        "counts": per,
                    })
                })
                .collect();
            serde_json::json!({
                "file": l.location.file,
                "line": l.location.line,
                "source": l.text,
                "total": l.total(),
                "counts": counts,
                "instructions": instructions,
            })
        })
        .collect();
    serde_json::json!({
        "kernel": kernel,
        "asm": listing.shown,
        "lines": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader_dump::{annotate_lines, split_lines};
    use crate::stall_csv::StallType;

    #[test]
    fn stall_columns_match_the_csv_reader_order() {
        for (k, t) in StallType::REPORTED.iter().enumerate() {
            assert_eq!(t.index(), k);
            assert_eq!(t.column_name(), STALL_COLUMNS[k]);
        }
    }
    use std::path::Path;

    fn listing(text: &str) -> AsmListing {
        let lines = annotate_lines(&split_lines(text.as_bytes()));
        AsmListing::from_lines(Path::new("t.asm"), "t.asm".into(), lines, true).unwrap()
    }

    fn sample(ip: u64, stall: usize, count: u64) -> StallSample {
        let mut counts = [0; 8];
        counts[stall] = count;
        StallSample {
            ip,
            ip_text: format!("{ip:x}"),
            counts,
        }
    }

    fn cause_addresses(l: &AsmListing, stalled: u64) -> Vec<u64> {
        let index = TokenIndex::new(l);
        let line = l.line_of_address(stalled).unwrap();
        sbid_causes(l, &index, line)
            .into_iter()
            .map(|c| l.address_of_line(c).unwrap())
            .collect()
    }

    #[test]
    fn token_extraction_follows_the_send_rule_and_parentheses() {
        let t = stalled_tokens("/* [00000000] */ add (1|M0) r1 r2 {A@1,$3.dst,$4} // x");
        assert_eq!(
            t,
            vec![
                StalledToken {
                    needle: "$3".into(),
                    needs_no_sync: false
                },
                StalledToken {
                    needle: "$4".into(),
                    needs_no_sync: true
                },
            ]
        );
        // A send: plain $N allocates, only .dst/.src are waits.
        let t = stalled_tokens("/* [00000000] */ load.ugm (1|M0) r1 [r2] {I@1,$5,$2.src} // d");
        assert_eq!(
            t,
            vec![StalledToken {
                needle: "$2".into(),
                needs_no_sync: false
            }]
        );
        // sync.allrd ($5,$6): tokens in the first (...) group with a `$`.
        let t = stalled_tokens("/* [00000000] */ sync.allrd (32|M0) ($5,$6) // s");
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].needle, "$6");
        // "load" in the trailing comment no longer makes it a send (docs/compatibility.md#analyze-quirk-12).
        let t = stalled_tokens("/* [00000000] */ add (1|M0) r1 r2 {$7} // reload");
        assert_eq!(
            t,
            vec![StalledToken {
                needle: "$7".into(),
                needs_no_sync: true
            }]
        );
    }

    #[test]
    fn walk_finds_nearest_setter_in_block_then_predecessors() {
        let l = listing(
            "\
// B000: Preds:{},  Succs:{B001}
  load.ugm (1|M0) r1 [r2] {$1} // a
  load.ugm (1|M0) r3 [r4] {$2} // b
// B001: Preds:{B000},  Succs:{}
  load.ugm (1|M0) r5 [r6] {$1} // c
  add (1|M0) r7 r1 r3 {$1.dst,$2.dst} // d
",
        );
        // $1 set at 0x20 (same block), $2 at 0x10 (predecessor).
        assert_eq!(cause_addresses(&l, 0x30), vec![0x20, 0x10]);
    }

    #[test]
    fn walk_terminates_on_cycles_with_unresolvable_tokens() {
        let l = listing(
            "\
// B000: Preds:{},  Succs:{B001}
  mov (1|M0) r1 r2 // a
// B001: Preds:{B000, B002, B001},  Succs:{B002}
  add (1|M0) r1 r2 r3 {$9.dst} // b
// B002: Preds:{B001},  Succs:{B001}
  mov (1|M0) r1 r2 // c
",
        );
        assert!(cause_addresses(&l, 0x10).is_empty());
    }

    #[test]
    fn loop_carried_token_is_found_below_in_the_own_block() {
        let l = listing(
            "\
// B000: Preds:{},  Succs:{B001}
  mov (1|M0) r1 r2 // a
// B001: Preds:{B000, B001},  Succs:{B001}
  add (1|M0) r1 r2 r3 {$4.dst} // b
  load.ugm (1|M0) r5 [r6] {$4} // c
",
        );
        assert_eq!(cause_addresses(&l, 0x10), vec![0x20]);
    }

    #[test]
    fn plain_token_is_not_satisfied_by_sync_lines_and_sync_allrd_works() {
        let l = listing(
            "\
// B000: Preds:{},  Succs:{}
  load.ugm (1|M0) r1 [r2] {$5} // a
  load.ugm (1|M0) r3 [r4] {$6} // b
  sync.nop null {$5} // c
  sync.allrd ($5,$6) // d
",
        );
        assert_eq!(cause_addresses(&l, 0x30), vec![0x10, 0x00]);
    }

    #[test]
    fn one_line_satisfying_two_tokens_is_one_cause() {
        let l = listing(
            "\
  load.ugm (1|M0) r1 [r2] {$3} // a
  add (1|M0) r1 r2 r3 {$3.dst,$3.src} // b
",
        );
        assert_eq!(cause_addresses(&l, 0x10), vec![0x00]);
    }

    #[test]
    fn report_text_layout_sources_and_top_n() {
        let l = listing(
            "\
// B000: Preds:{},  Succs:{B001}
// File: /src/a.cpp

// Line 3:  x = load();
  load.ugm (1|M0) r1 [r2] {$1} // a
// B001: Preds:{B000},  Succs:{}

// Line 4:  y = x + 1;
  add (1|M0) r3 r1 r1 {$1.dst} // b
  mul (1|M0) r3 r1 r1 // c
",
        );
        let rows = vec![
            sample(0x10, SBID, 5),
            sample(0x20, 1, 2),
            sample(0x0, 1, 2),
            sample(0x90, 1, 9),
        ];
        let r = analyze_kernel("K", &l, &rows, 2);
        assert_eq!(r.unknown_addresses, vec!["90"]);
        let text = r.to_text(&l);
        let expected = "\
Kernel: K
Assembly with instruction addresses: t.asm

Report of Top 2 Stalls of Each Type
***********************************************************************************************
Sbid Stalls: 

Instruction
  /* [00000010] */   add (1|M0) r3 r1 r1 {$1.dst} // b
  Line 4:  y = x + 1;
  File: /src/a.cpp
is stalled potentially by
  instruction
    /* [00000000] */   load.ugm (1|M0) r1 [r2] {$1} // a
    Line 3:  x = load();
    File: /src/a.cpp
***********************************************************************************************
Pipe Stalls: 

Instruction
  /* [00000020] */   mul (1|M0) r3 r1 r1 // c
  Line 4:  y = x + 1;
  File: /src/a.cpp
is stalled
===============================================================================================
";
        // Top 2 of Pipe: 0x90 (9, not in the asm) then 0x20 (2, first of
        // the tie in file order); 0x0 is cut by -n 2.
        assert_eq!(text, expected);
        let unlimited = analyze_kernel("K", &l, &rows, -1).to_text(&l);
        assert!(unlimited.contains("\nReport of Stalls of Each Type\n"));
        assert_eq!(unlimited.matches("is stalled\n").count(), 2);
    }

    #[test]
    fn without_markers_causes_have_no_source_and_with_line_only_file_is_unknown() {
        let l = listing(
            "\
  load.ugm (1|M0) r1 [r2] {$1} // a
// Line 9:  z
  add (1|M0) r3 r1 r1 {$1.dst} // b
",
        );
        let r = analyze_kernel("K", &l, &[sample(0x10, SBID, 1)], 10);
        let text = r.to_text(&l);
        assert!(text.contains(
            "  Line 9:  z\nis stalled potentially by\n  instruction\n    /* [00000000] */ load.ugm (1|M0) r1 [r2] {$1} // a\n====="
        ), "{text}");
        let l = listing("  load.ugm (1|M0) r1 [r2] {$1} // a\n  add (1|M0) r3 {$1.dst} // b\n// Line 1:  q\n  mov (1|M0) r3 {$1} // c\n  add (1|M0) r3 {$1.dst} // d\n");
        let text = analyze_kernel("K", &l, &[sample(0x30, SBID, 1)], 10).to_text(&l);
        assert!(
            text.contains("    Line 1:  q\n    File: unknown\n"),
            "{text}"
        );
    }

    #[test]
    fn markers_of_a_later_predecessor_block_are_not_the_stalled_line() {
        // docs/compatibility.md#analyze-quirk-12: the original walked B002 (the loop latch, listed first
        // in Preds) before B000 and gave the stalled instruction B002's
        // `Line 9`; IGC's markers apply in file order, so it is `Line 1`.
        let l = listing(
            "\
// B000: Preds:{},  Succs:{B001}
// File: /a.cpp
// Line 1:  setup
  load.ugm (1|M0) r1 [r2] {$1} // a
// B001: Preds:{B002, B000},  Succs:{B002}
  add (1|M0) r3 r1 r1 {$1.dst} // b
// B002: Preds:{B001},  Succs:{B001}
// Line 9:  loop tail
  mov (1|M0) r4 r4 // c
",
        );
        let text = analyze_kernel("K", &l, &[sample(0x10, SBID, 3)], 10).to_text(&l);
        assert!(
            text.contains(
                "{$1.dst} // b\n  Line 1:  setup\n  File: /a.cpp\nis stalled potentially by\n  instruction\n    /* [00000000] */   load.ugm"
            ),
            "{text}"
        );
        assert!(!text.contains("Line 9"));
    }

    #[test]
    fn by_line_sums_per_source_line_and_lists_instructions() {
        let l = listing(
            "\
// File: /src/a.cpp
// Line 3:  x = load();
  load.ugm (1|M0) r1 [r2] {$1} // a
  mov (1|M0) r1 r2 // b
// Line 4:  y = x;
  add (1|M0) r3 r1 r1 {$1.dst} // c
",
        );
        let rows = vec![sample(0x0, 2, 4), sample(0x10, 1, 3), sample(0x20, SBID, 5)];
        let lines = by_line(&l, &rows);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].total(), 7);
        assert_eq!(lines[0].label(), "/src/a.cpp:3");
        assert_eq!(lines[0].instructions.len(), 2);
        assert_eq!(lines[1].counts[SBID], 5);
        assert!(lines[0].matches("a.cpp", 3) && !lines[0].matches("b.cpp", 3));
        let detail = line_detail_text("K", &l, &lines, "a.cpp", 3);
        assert!(
            detail.contains("Source line /src/a.cpp:3:  x = load();"),
            "{detail}"
        );
        assert!(detail.contains("(line total)"));
        let json = by_line_json("K", &l, &lines, Some(("a.cpp", 4)));
        assert_eq!(json["lines"][0]["total"], 5);
        assert_eq!(json["lines"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn json_lists_causes_with_sources() {
        let l = listing(
            "\
// File: /src/a.cpp
// Line 3:  x = load();
  load.ugm (1|M0) r1 [r2] {$1} // a
// Line 4:  y = x;
  add (1|M0) r3 r1 r1 {$1.dst} // c
",
        );
        let v = analyze_kernel("K", &l, &[sample(0x10, SBID, 5)], -1).to_json(&l);
        let s = &v["stalls"][0];
        assert_eq!(s["stall_type"], "Sbid");
        assert_eq!(s["address"], 16);
        assert_eq!(s["line"], 4);
        assert_eq!(s["file"], "/src/a.cpp");
        assert_eq!(s["causes"][0]["address"], 0);
        assert_eq!(s["causes"][0]["line"], 3);
    }
}
