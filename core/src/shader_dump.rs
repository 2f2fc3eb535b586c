//! IGC shader dump directories (docs/formats.md#shader-dump): which `.asm` file holds a
//! kernel, its instruction addresses, basic blocks and source markers.
//!
//! Everything happens in memory: the original script wrote `<file>.asm.ip`
//! into the user's dump folder (docs/compatibility.md#analyze-quirk-11); this module never
//! writes anything. A `.asm` that already carries addresses (docs/formats.md#shader-dump-addresses) is
//! used as it is; otherwise the addresses are added to the lines in memory
//! exactly as addrasm.py would have written them (docs/compatibility.md#analyze-asm-addresses).

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::demangle::Demangler;
use crate::error::InputError;
use crate::walk::{open_regular, Skipped};

/// One `.asm` file of a dump and the `//.kernel` symbols it declares.
#[derive(Debug, Clone)]
pub struct AsmFile {
    /// File name inside the dump folder.
    pub name: String,
    pub path: PathBuf,
    /// The path as the original script spells it: `<dir as given>/<name>`.
    /// Selection compares these strings and the report prints them.
    pub shown: String,
    /// Raw (mangled) `//.kernel` symbols, in file order.
    pub symbols: Vec<String>,
    /// True for a `<x>.asm.ip` whose `<x>.asm` is not in the folder (a dump
    /// annotated with addrasm.py and then pruned); it competes in the
    /// selection under the name of its `.asm`.
    pub annotated_copy: bool,
}

/// The `.asm` files at the top level of a dump folder.
#[derive(Debug, Clone)]
pub struct ShaderDump {
    pub dir: PathBuf,
    files: Vec<AsmFile>,
    other_entries: Vec<String>,
    skipped: Vec<Skipped>,
}

impl ShaderDump {
    /// Lists `dir` (no recursion) and reads the `//.kernel` lines of every
    /// `.asm`. A missing folder, a file instead of a folder and a folder
    /// without any `.asm` are errors (the last one names what is there).
    pub fn open(dir: &Path) -> Result<ShaderDump, InputError> {
        let meta = fs::metadata(dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                InputError::at_file(dir, "shader dump folder does not exist")
            }
            _ => InputError::io(dir, &e),
        })?;
        if !meta.is_dir() {
            return Err(InputError::at_file(
                dir,
                "shader dump folder is not a directory",
            ));
        }
        let mut names = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| InputError::io(dir, &e))? {
            let entry = entry.map_err(|e| InputError::io(dir, &e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        let dir_text = dir.to_string_lossy().into_owned();
        let mut files = Vec::new();
        let mut other_entries = Vec::new();
        let mut skipped = Vec::new();
        for name in &names {
            let plain_asm = name.ends_with(".asm");
            let orphan_ip = name
                .strip_suffix(".ip")
                .is_some_and(|base| base.ends_with(".asm") && !names.iter().any(|n| n == base));
            let path = dir.join(name);
            if !(plain_asm || orphan_ip) || path.is_dir() {
                other_entries.push(name.clone());
                continue;
            }
            // A FIFO or an unreadable file under a `.asm` name is skipped
            // with a warning, never opened blocking
            // (docs/robustness.md#walked-folders).
            let mut bytes = Vec::new();
            let read = open_regular(&path).and_then(|mut f| {
                f.read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot be read: {e}"))
            });
            if let Err(problem) = read {
                skipped.push(Skipped {
                    path,
                    problem: format!("{problem}; skipped"),
                });
                other_entries.push(name.clone());
                continue;
            }
            let symbols = kernel_symbols(&path, &bytes)?;
            let shown_name = if orphan_ip {
                &name[..name.len() - 3]
            } else {
                name.as_str()
            };
            files.push(AsmFile {
                name: name.clone(),
                path,
                shown: format!("{dir_text}/{shown_name}"),
                symbols,
                annotated_copy: orphan_ip,
            });
        }
        if files.is_empty() {
            let what = if names.is_empty() {
                "shader dump folder is empty".to_string()
            } else {
                format!(
                    "shader dump folder has no .asm files (it holds {})",
                    summarize_names(&names, 5)
                )
            };
            return Err(InputError::at_file(dir, what));
        }
        Ok(ShaderDump {
            dir: dir.to_path_buf(),
            files,
            other_entries,
            skipped,
        })
    }

    pub fn files(&self) -> &[AsmFile] {
        &self.files
    }

    /// Entries of the folder that are not `.asm` files.
    pub fn other_entries(&self) -> &[String] {
        &self.other_entries
    }

    /// `.asm` entries that are no regular file or cannot be read, one
    /// warning each for the caller (docs/robustness.md#walked-folders).
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The `.asm` for `kernel` (a stall CSV name, without shape): among the
    /// files with a `//.kernel` symbol demangling to exactly `kernel`, the
    /// longest path, ties broken by the lexicographically greatest (formats
    /// docs/compatibility.md#analyze-asm-choice: a retried compilation has a longer name).
    pub fn select(&self, kernel: &str, demangler: &mut Demangler) -> Option<&AsmFile> {
        let mut best: Option<&AsmFile> = None;
        for file in &self.files {
            let matches = file.symbols.iter().any(|s| demangler.demangle(s) == kernel);
            if !matches {
                continue;
            }
            best = match best {
                None => Some(file),
                Some(b) => {
                    let longer = file.shown.len() > b.shown.len();
                    let same_and_greater =
                        file.shown.len() == b.shown.len() && file.shown > b.shown;
                    if longer || same_and_greater {
                        Some(file)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        best
    }

    /// Demangled kernel names of the dump, sorted and deduplicated (for
    /// "no .asm for this kernel" messages).
    pub fn kernel_names(&self, demangler: &mut Demangler) -> Vec<String> {
        let mut names: Vec<String> = self
            .files
            .iter()
            .flat_map(|f| f.symbols.iter())
            .map(|s| demangler.demangle(s))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// `a, b, c and 4 more`.
pub fn summarize_names(names: &[String], max: usize) -> String {
    let shown: Vec<&str> = names.iter().take(max).map(String::as_str).collect();
    let mut text = shown.join(", ");
    if names.len() > max {
        text.push_str(&format!(" and {} more", names.len() - max));
    }
    text
}

/// The second whitespace-separated word of every line that starts with
/// `//.kernel` (docs/formats.md#shader-dump-choice).
fn kernel_symbols(path: &Path, bytes: &[u8]) -> Result<Vec<String>, InputError> {
    let mut symbols = Vec::new();
    let finder = memchr::memmem::Finder::new(b"//.kernel");
    for at in finder.find_iter(bytes) {
        if at != 0 && bytes[at - 1] != b'\n' {
            continue;
        }
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let line = String::from_utf8_lossy(&bytes[at..end]);
        match line.split_whitespace().nth(1) {
            Some(symbol) => symbols.push(symbol.to_string()),
            None => {
                let line_no = memchr::memchr_iter(b'\n', &bytes[..at]).count() as u64 + 1;
                return Err(InputError::at_line(
                    path,
                    line_no,
                    "malformed asm line: `//.kernel` without a symbol",
                ));
            }
        }
    }
    Ok(symbols)
}

/// What a line of an annotated listing is, for the stall report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Does not start with `//` but contains `//` (docs/formats.md#shader-dump-asm).
    Instruction,
    /// Matches `^// *Line`.
    LineMarker,
    /// Matches `^// *File`.
    FileMarker,
    /// Matches `^// *B` and holds `Preds` and `Succs`.
    BlockHeader,
    Other,
}

/// One basic block: its header line, its last line, its predecessors.
#[derive(Debug, Clone)]
pub struct BasicBlock {
    pub id: String,
    /// First line (the header, or 0 for lines before the first header).
    pub start: usize,
    /// Last line, inclusive.
    pub end: usize,
    /// Indices into [`AsmListing::blocks`], in header order.
    pub preds: Vec<usize>,
}

/// An address-annotated `.asm`, split into lines, with basic blocks,
/// addresses and the nearest source markers of every line.
#[derive(Debug, Clone)]
pub struct AsmListing {
    /// What the report names as "Assembly with instruction addresses".
    pub shown: String,
    /// True when the lines were annotated here rather than read annotated.
    pub annotated_in_memory: bool,
    lines: Vec<String>,
    kinds: Vec<LineKind>,
    address_of_line: Vec<Option<u64>>,
    line_of_address: HashMap<u64, usize>,
    blocks: Vec<BasicBlock>,
    block_starts: Vec<usize>,
    line_marker_above: Vec<u32>,
    file_marker_above: Vec<u32>,
    source_available: bool,
}

const NONE: u32 = u32::MAX;

/// `/* [%08X] */ ` as the annotation writes it.
pub fn address_prefix(address: u64) -> String {
    format!("/* [{address:08X}] */ ")
}

fn is_instruction_text(line: &str) -> bool {
    !line.starts_with("//") && line.contains("//")
}

/// `^// *<word>` as the original's `re.match` tests.
fn marker_is(line: &str, word: &str) -> bool {
    line.strip_prefix("//")
        .is_some_and(|rest| rest.trim_start_matches(' ').starts_with(word))
}

/// The address of a line that starts with exactly `/* [%08X] */ `.
fn parse_address_prefix(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("/* [")?;
    let close = rest.find("] */ ")?;
    let digits = &rest[..close];
    let value = u64::from_str_radix(digits, 16).ok()?;
    (format!("{value:08X}") == digits).then_some(value)
}

impl AsmListing {
    /// Reads the chosen `.asm` of a dump and annotates it in memory when it
    /// has no addresses yet. When the dump already holds a `<x>.asm.ip`
    /// equal to that annotation (left by the original script) the report
    /// names it, as the original would.
    pub fn load(file: &AsmFile) -> Result<AsmListing, InputError> {
        let bytes = fs::read(&file.path).map_err(|e| InputError::io(&file.path, &e))?;
        let lines = split_lines(&bytes);
        if file.annotated_copy || is_fully_annotated(&lines) {
            let shown = if file.annotated_copy {
                format!("{}.ip", file.shown)
            } else {
                file.shown.clone()
            };
            return AsmListing::from_lines(&file.path, shown, lines, false);
        }
        let annotated = annotate_lines(&lines);
        let ip_path = PathBuf::from(format!("{}.ip", file.path.display()));
        let shown = match fs::read(&ip_path) {
            Ok(existing) if split_lines(&existing) == annotated => format!("{}.ip", file.shown),
            _ => file.shown.clone(),
        };
        AsmListing::from_lines(&file.path, shown, annotated, true)
    }

    /// Builds a listing from lines that already carry addresses (or not:
    /// then no instruction has an address). `path` is used in errors.
    pub fn from_lines(
        path: &Path,
        shown: String,
        lines: Vec<String>,
        annotated_in_memory: bool,
    ) -> Result<AsmListing, InputError> {
        let n = lines.len();
        let mut kinds = Vec::with_capacity(n);
        let mut address_of_line = Vec::with_capacity(n);
        let mut line_of_address = HashMap::new();
        let mut line_marker_above = Vec::with_capacity(n);
        let mut file_marker_above = Vec::with_capacity(n);
        let mut last_line = NONE;
        let mut last_file = NONE;
        let mut source_available = false;
        let mut headers: Vec<(usize, String, Vec<String>)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            line_marker_above.push(last_line);
            file_marker_above.push(last_file);
            let kind = if marker_is(line, "B") && line.contains("Preds") && line.contains("Succs") {
                let (id, preds) = parse_block_header(line).ok_or_else(|| {
                    InputError::at_line(
                        path,
                        i as u64 + 1,
                        format!("malformed asm line: basic-block header `{line}`"),
                    )
                })?;
                headers.push((i, id, preds));
                LineKind::BlockHeader
            } else if marker_is(line, "Line") {
                source_available = true;
                last_line = i as u32;
                LineKind::LineMarker
            } else if marker_is(line, "File") {
                last_file = i as u32;
                LineKind::FileMarker
            } else if is_instruction_text(line) {
                LineKind::Instruction
            } else {
                LineKind::Other
            };
            let address = if kind == LineKind::Instruction {
                parse_address_prefix(line)
            } else {
                None
            };
            if let Some(a) = address {
                line_of_address.entry(a).or_insert(i);
            }
            address_of_line.push(address);
            kinds.push(kind);
        }
        let blocks = build_blocks(&headers, n);
        let block_starts = blocks.iter().map(|b| b.start).collect();
        Ok(AsmListing {
            shown,
            annotated_in_memory,
            lines,
            kinds,
            address_of_line,
            line_of_address,
            blocks,
            block_starts,
            line_marker_above,
            file_marker_above,
            source_available,
        })
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn line(&self, index: usize) -> &str {
        &self.lines[index]
    }

    pub fn kind(&self, index: usize) -> LineKind {
        self.kinds[index]
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Some line matches `^// *Line` (the kernel was built with line info).
    pub fn source_available(&self) -> bool {
        self.source_available
    }

    /// The first instruction line whose address is `address`.
    pub fn line_of_address(&self, address: u64) -> Option<usize> {
        self.line_of_address.get(&address).copied()
    }

    pub fn address_of_line(&self, index: usize) -> Option<u64> {
        self.address_of_line[index]
    }

    pub fn blocks(&self) -> &[BasicBlock] {
        &self.blocks
    }

    /// Index of the block holding line `index`.
    pub fn block_of_line(&self, index: usize) -> usize {
        self.block_starts
            .partition_point(|&s| s <= index)
            .saturating_sub(1)
    }

    /// The nearest `// Line` marker above line `index`, in file order.
    pub fn line_marker_above(&self, index: usize) -> Option<usize> {
        let m = self.line_marker_above[index];
        (m != NONE).then_some(m as usize)
    }

    /// The nearest `// File` marker above line `index`, in file order.
    pub fn file_marker_above(&self, index: usize) -> Option<usize> {
        let m = self.file_marker_above[index];
        (m != NONE).then_some(m as usize)
    }
}

/// Lines without their terminators, as Python's text-mode iteration yields
/// them (`\n` and `\r\n`); bytes that are not UTF-8 are replaced.
pub fn split_lines(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

/// Every instruction line already starts with the expected address prefix
/// (the check of docs/formats.md#shader-dump-addresses).
pub fn is_fully_annotated(lines: &[String]) -> bool {
    let mut address = 0u64;
    for line in lines {
        if is_instruction_text(line) {
            if !line.starts_with(&address_prefix(address)) {
                return false;
            }
            address += instruction_size(line);
        }
    }
    true
}

/// 8 bytes for a line mentioning `Compacted` anywhere, else 16.
fn instruction_size(line: &str) -> u64 {
    if line.contains("Compacted") {
        8
    } else {
        16
    }
}

/// Adds `/* [%08X] */ ` to every instruction line (addrasm.py, docs/compatibility.md#analyze-asm-addresses).
pub fn annotate_lines(lines: &[String]) -> Vec<String> {
    let mut address = 0u64;
    lines
        .iter()
        .map(|line| {
            if is_instruction_text(line) {
                let out = format!("{}{line}", address_prefix(address));
                address += instruction_size(line);
                out
            } else {
                line.clone()
            }
        })
        .collect()
}

/// Block id (second `' '`-separated word up to `:`) and predecessor ids
/// (between the `{` after `Preds` and the next `}`) of a header line.
fn parse_block_header(line: &str) -> Option<(String, Vec<String>)> {
    let id = line
        .split(' ')
        .nth(1)?
        .split(':')
        .next()?
        .trim()
        .to_string();
    let after = line.split_once("Preds")?.1;
    let list = after.split_once('{')?.1;
    let list = &list[..list.find('}')?];
    // Succs must have a list too, or the header is cut off.
    let succs = line.split_once("Succs")?.1;
    succs.split_once('{')?.1.find('}')?;
    let preds = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    Some((id, preds))
}

/// Blocks from their headers. Lines before the first header form a block of
/// their own without predecessors (the original crashed on them); without
/// any header the whole file is `B000` (docs/compatibility.md#analyze-basic-blocks). A predecessor id
/// without a header is ignored; a repeated id names its last header, as the
/// original's dictionary did.
fn build_blocks(headers: &[(usize, String, Vec<String>)], n_lines: usize) -> Vec<BasicBlock> {
    let mut blocks = Vec::with_capacity(headers.len() + 1);
    let first_start = headers.first().map_or(n_lines, |h| h.0);
    if headers.is_empty() || first_start > 0 {
        blocks.push(BasicBlock {
            id: if headers.is_empty() {
                "B000".to_string()
            } else {
                String::new()
            },
            start: 0,
            end: first_start.max(1) - 1,
            preds: Vec::new(),
        });
        if headers.is_empty() {
            return blocks;
        }
    }
    let offset = blocks.len();
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    for (k, (_, id, _)) in headers.iter().enumerate() {
        index_of.insert(id.as_str(), offset + k);
    }
    for (k, (start, id, preds)) in headers.iter().enumerate() {
        let end = headers.get(k + 1).map_or(n_lines, |h| h.0).max(1) - 1;
        blocks.push(BasicBlock {
            id: id.clone(),
            start: *start,
            end: end.max(*start),
            preds: preds
                .iter()
                .filter_map(|p| index_of.get(p.as_str()).copied())
                .collect(),
        });
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        split_lines(text.as_bytes())
    }

    #[test]
    fn annotates_like_addrasm() {
        let src = lines(
            "//.kernel k\n// B000: Preds:{},  Succs:{}\nlabel:\n  mov (1|M0) r1 r2 {Compacted} // x\n  add (1|M0) r1 r2 r3 // y\n  nop // Compacted\n  end //\n",
        );
        assert!(!is_fully_annotated(&src));
        let out = annotate_lines(&src);
        assert_eq!(
            out[3],
            "/* [00000000] */   mov (1|M0) r1 r2 {Compacted} // x"
        );
        assert_eq!(out[4], "/* [00000008] */   add (1|M0) r1 r2 r3 // y");
        assert_eq!(out[5], "/* [00000018] */   nop // Compacted");
        assert_eq!(out[6], "/* [00000020] */   end //");
        assert_eq!(out[2], "label:");
        assert!(is_fully_annotated(&out));
    }

    #[test]
    fn blocks_predecessors_and_markers() {
        let text = "\
// B000: Preds:{},  Succs:{B001}
/* [00000000] */ mov // a
// B001: [inDivergent],  Preds:{B000, B001},  Succs:{B001, B002}
// File: /x.cpp

// Line 3:  a = b;
/* [00000010] */ add {$1} // b
// B002: Preds:{B001, B009},  Succs:{}
/* [00000020] */ end // c
";
        let l = AsmListing::from_lines(Path::new("t.asm"), "t".into(), lines(text), false).unwrap();
        assert_eq!(l.blocks().len(), 3);
        assert_eq!(l.blocks()[1].id, "B001");
        assert_eq!(l.blocks()[1].preds, vec![0, 1]);
        assert_eq!(l.blocks()[2].preds, vec![1]);
        assert_eq!((l.blocks()[1].start, l.blocks()[1].end), (2, 6));
        assert_eq!(l.block_of_line(6), 1);
        assert_eq!(l.block_of_line(8), 2);
        assert_eq!(l.line_of_address(0x10), Some(6));
        assert_eq!(l.line_marker_above(6), Some(5));
        assert_eq!(l.file_marker_above(8), Some(3));
        assert_eq!(l.line_marker_above(1), None);
        assert!(l.source_available());
    }

    #[test]
    fn no_header_is_one_block_and_lines_before_first_header_get_their_own() {
        let l = AsmListing::from_lines(
            Path::new("t.asm"),
            "t".into(),
            lines("/* [00000000] */ a // x\n/* [00000010] */ b // y\n"),
            false,
        )
        .unwrap();
        assert_eq!(l.blocks().len(), 1);
        assert_eq!(l.blocks()[0].id, "B000");
        assert_eq!((l.blocks()[0].start, l.blocks()[0].end), (0, 1));
        let l = AsmListing::from_lines(
            Path::new("t.asm"),
            "t".into(),
            lines(
                "/* [00000000] */ a // x\n// B001: Preds:{},  Succs:{}\n/* [00000010] */ b // y\n",
            ),
            false,
        )
        .unwrap();
        assert_eq!(l.blocks().len(), 2);
        assert_eq!(l.block_of_line(0), 0);
        assert_eq!(l.block_of_line(2), 1);
    }

    #[test]
    fn malformed_block_header_is_an_error_with_its_line() {
        let err = AsmListing::from_lines(
            Path::new("k.asm"),
            "k".into(),
            lines("// x\n// B001: Preds:{B000,  Succs:\n"),
            false,
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("k.asm:2: malformed asm line"),
            "{err}"
        );
    }

    #[test]
    fn address_prefix_parsing_is_exact() {
        assert_eq!(parse_address_prefix("/* [000001B8] */ x"), Some(0x1b8));
        assert_eq!(parse_address_prefix("/* [000001b8] */ x"), None);
        assert_eq!(parse_address_prefix("/* [1B8] */ x"), None);
        assert_eq!(parse_address_prefix("/* [100000000] */ x"), Some(1 << 32));
    }

    #[test]
    fn split_lines_handles_crlf_and_missing_final_newline() {
        assert_eq!(split_lines(b"a\r\nb\nc"), vec!["a", "b", "c"]);
        assert_eq!(split_lines(b"a\n"), vec!["a"]);
        assert!(split_lines(b"").is_empty());
    }

    #[test]
    fn dump_selection_prefers_longest_then_greatest_path() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, sym: &str| {
            fs::write(dir.path().join(name), format!("//.kernel {sym}\n")).unwrap()
        };
        w("OCL_asm0a_simd32_entry_0001.asm", "_ZTSZ4mainEUlT_E_");
        w("OCL_asm0a_1_simd16_entry_0001.asm", "_ZTSZ4mainEUlT_E_");
        w("OCL_asm0b_1_simd16_entry_0001.asm", "_ZTSZ4mainEUlT_E_");
        w("OCL_asm0c_simd32_entry_0002.asm", "GEMM");
        fs::write(dir.path().join("OCL_asm0c_simd32_entry_0002.visaasm"), "x").unwrap();
        let dump = ShaderDump::open(dir.path()).unwrap();
        let mut d = Demangler::built_in();
        let chosen = dump.select("main::{lambda(auto:1)#1}", &mut d).unwrap();
        assert_eq!(chosen.name, "OCL_asm0b_1_simd16_entry_0001.asm");
        assert_eq!(dump.select("GEMM", &mut d).unwrap().symbols, vec!["GEMM"]);
        assert!(dump.select("other", &mut d).is_none());
        assert_eq!(
            dump.kernel_names(&mut d),
            vec!["GEMM", "main::{lambda(auto:1)#1}"]
        );
        assert_eq!(
            dump.other_entries(),
            ["OCL_asm0c_simd32_entry_0002.visaasm"]
        );
    }

    #[test]
    fn missing_empty_and_asm_less_folders_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = ShaderDump::open(&dir.path().join("nope")).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("shader dump folder does not exist"));
        let err = ShaderDump::open(dir.path()).unwrap_err();
        assert!(err.to_string().ends_with("shader dump folder is empty"));
        fs::write(dir.path().join("a.visaasm"), "x").unwrap();
        let err = ShaderDump::open(dir.path()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("has no .asm files (it holds a.visaasm)"),
            "{err}"
        );
    }

    #[test]
    fn kernel_line_without_symbol_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.asm"), "//.platform X\n//.kernel\n").unwrap();
        let err = ShaderDump::open(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("a.asm:2: malformed asm line"),
            "{err}"
        );
    }
}
