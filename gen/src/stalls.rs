//! `unitrace-gen stalls`: a stall-sampling CSV (docs/formats.md#stall-csv)
//! and the IGC shader dump that goes with it (docs/formats.md#shader-dump).
//!
//! Each sampled kernel gets a program: a prolog, a main block, a loop that
//! is its own predecessor, an epilogue; loads and stores allocate scoreboard
//! ids (`{$N}`), later instructions wait on them (`{$N.dst}`, `{$N.src}`,
//! `sync.allrd ($N)`), some across the loop's back edge. The CSV has one
//! row per instruction, in address order, with stall counts that follow
//! the instruction's kind (sends stall on sends, waits on their scoreboard
//! id, XMX on the pipe). `SbidStall` is only put on instructions whose
//! awaited id is set on every path a backward walk over the predecessors
//! takes, so a reader that walks back to the setter always finds one
//! (docs/formats.md#shader-dump-asm).

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use unitrace_core::atomic::{write_atomic, AtomicFile};

use crate::kernels::{self, MetricKernel};
use crate::rng::Draw;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IpStyle {
    /// Bare lower-case hex (`1b8`), since 2025-02.
    Hex,
    /// `0x000001b8`, 2024-03 to 2025-02 (lines end with `, ` then).
    #[value(name = "0x")]
    ZeroX,
}

#[derive(Debug, clap::Args)]
pub struct StallsArgs {
    /// The stall CSV to write.
    pub out: PathBuf,
    /// The shader dump folder to write (`.asm` files), created.
    #[arg(long)]
    pub dump: PathBuf,
    /// Sampled kernels.
    #[arg(long, default_value_t = 3)]
    pub kernels: u32,
    /// About this many instructions per kernel.
    #[arg(long, default_value_t = 60)]
    pub instructions: u32,
    /// No `// File:` / `// Line N:` markers (built without line tables).
    #[arg(long)]
    pub no_source: bool,
    /// Kernels compiled twice: a first `.asm` with spill code and a retry
    /// (`OCL_asm<h>_1_simd16_...`, a longer name) that the CSV matches.
    #[arg(long, default_value_t = 1)]
    pub recompiled: u32,
    /// Sampled kernels without an `.asm` in the dump.
    #[arg(long, default_value_t = 1)]
    pub missing_asm: u32,
    /// Xe2 columns: `PSDepStall[Events]` after `Active[Events]`.
    #[arg(long)]
    pub with_ip_psdep: bool,
    #[arg(long, value_enum, default_value = "hex")]
    pub ip_style: IpStyle,
    /// Every line ends with `, ` (before 2024-12).
    #[arg(long)]
    pub trailing_comma: bool,
    /// Device sections.
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// No `=== Device #N Metrics ===` banner (a `--result-dir` file).
    #[arg(long)]
    pub no_device_banner: bool,
    /// `.asm` files without `/* [XXXXXXXX] */` addresses (raw IGC output).
    #[arg(long)]
    pub no_asm_addresses: bool,
    #[arg(short, long)]
    pub quiet: bool,
}

/// What an instruction does, for its stall counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Alu,
    /// Waits on a scoreboard id another instruction set (reachable backwards).
    Wait,
    /// A load or store: allocates a scoreboard id.
    Send,
    Xmx,
    Control,
    Nop,
}

#[derive(Debug, Clone)]
enum Line {
    Text(String),
    Instr {
        text: String,
        compacted: bool,
        role: Role,
    },
}

/// A kernel's listing, before addresses.
struct Program {
    lines: Vec<Line>,
}

impl Program {
    fn instructions(&self) -> impl Iterator<Item = (u64, Role)> + '_ {
        let mut ip = 0u64;
        self.lines.iter().filter_map(move |l| match l {
            Line::Instr {
                compacted, role, ..
            } => {
                let at = ip;
                ip += if *compacted { 8 } else { 16 };
                Some((at, *role))
            }
            Line::Text(_) => None,
        })
    }

    /// The `.asm` text, with or without address prefixes
    /// (docs/formats.md#shader-dump-addresses).
    fn render(&self, header: &str, addresses: bool) -> String {
        let mut out = String::from(header);
        let mut ip = 0u64;
        for l in &self.lines {
            match l {
                Line::Text(t) => out.push_str(t),
                Line::Instr {
                    text, compacted, ..
                } => {
                    if addresses {
                        let _ = write!(out, "/* [{ip:08X}] */ ");
                    }
                    out.push_str(text);
                    ip += if *compacted { 8 } else { 16 };
                }
            }
            out.push('\n');
        }
        out
    }
}

/// Builds kernel programs.
struct Builder<'a> {
    lines: Vec<Line>,
    d: &'a mut Draw,
    source: Option<Source>,
    line_no: u32,
    next_sbid: u8,
}

struct Source {
    file: Option<&'static str>,
    texts: &'static [&'static str],
}

impl Builder<'_> {
    fn text(&mut self, t: impl Into<String>) {
        self.lines.push(Line::Text(t.into()));
    }

    fn instr(
        &mut self,
        pred: &str,
        op: &str,
        operands: &str,
        options: &str,
        comment: &str,
        role: Role,
    ) {
        let compacted = options.contains("Compacted");
        let text = format!("{pred:<8}{op:<25}{operands:<53}{options:<18} // {comment}");
        self.lines.push(Line::Instr {
            text,
            compacted,
            role,
        });
    }

    /// A new source location: an empty line, `// File:` when it changes
    /// (first time), `// Line N:  text`.
    fn location(&mut self, first_in_file: bool) {
        let Some(src) = &self.source else { return };
        let file = src.file;
        let text = src.texts[self.line_no as usize % src.texts.len()];
        self.line_no += 1;
        self.text("");
        if let (Some(f), true) = (file, first_in_file) {
            self.text(format!("// File: {f}"));
            self.text("");
        }
        self.text(format!("// Line {}:  {text}", 20 + self.line_no));
    }

    /// B000 (per-thread prolog, a load) and B001 (cross-thread prolog,
    /// waiting on that load's sources, another load); returns the second
    /// load's scoreboard id.
    fn prologs(&mut self) -> u8 {
        self.text("// B000: Preds:{},  Succs:{B001}");
        self.text("per_thread_prolog:");
        self.instr(
            "(W)",
            "mov (16|M0)",
            "r127.0<1>:ud  0x0:ud",
            "{A@1}",
            "ALU pipe: int; $1",
            Role::Alu,
        );
        self.instr(
            "(W)",
            "and (1|M0)",
            "r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud",
            "",
            "ALU pipe: int; $1",
            Role::Alu,
        );
        let s0 = self.load(1);
        self.instr("", "nop", "", "", "", Role::Nop);
        self.text("// B001: Preds:{B000},  Succs:{B002}");
        self.text("// cross_thread_prolog:");
        self.wait_alu(s0, "src");
        self.load(2)
    }

    /// B004: the result stored, its sources awaited, end of thread.
    fn epilogue(&mut self) {
        self.text("// B004: Preds:{B002, B003},  Succs:{}");
        self.location(false);
        let st = self.sbid();
        self.instr(
            "",
            "store.ugm.d32.a64 (32|M0)",
            "[r26:4]       r24:2",
            &format!("{{A@1,${st}}}"),
            "ex_desc:0x0; desc:0x4000584",
            Role::Send,
        );
        self.instr(
            "(W)",
            &format!("sync.allrd (${st})"),
            "null",
            "",
            "",
            Role::Wait,
        );
        self.instr(
            "(W)",
            "send.gtwy (1|M0)",
            "null     r127    null:0  0x0  0x02000010",
            "{EOT,A@1}",
            "wr:1+0, rd:0; end of thread",
            Role::Control,
        );
    }

    fn sbid(&mut self) -> u8 {
        let s = self.next_sbid;
        self.next_sbid = (self.next_sbid + 1) % 16;
        s
    }

    fn load(&mut self, reg: u32) -> u8 {
        let s = self.sbid();
        let desc = self.d.between(0x4000000, 0x4ffffff);
        self.instr(
            "",
            "load.ugm.d32.a64 (32|M0)",
            &format!("r{reg}:2         [r{}:4]", reg + 2),
            &format!("{{I@1,${s}}}"),
            &format!("ex_desc:0x0; desc:0x{desc:07X} // ${}", self.line_no),
            Role::Send,
        );
        s
    }

    fn wait_alu(&mut self, s: u8, suffix: &str) {
        let (op, operands) = *self.d.pick(&[
            (
                "add (32|M0)",
                "r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f",
            ),
            (
                "mad (32|M0)",
                "r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f",
            ),
            (
                "mul (32|M0)",
                "r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw",
            ),
        ]);
        self.instr(
            "",
            op,
            operands,
            &format!("{{${s}.{suffix}}}"),
            "ALU pipe: float; $4",
            Role::Wait,
        );
    }

    fn alu(&mut self) {
        let (op, operands) = *self.d.pick(&[
            ("mov (16|M0)", "r8.0<1>:ud    r0.0<1;1,0>:ud"),
            ("shl (32|M0)", "r10.0<1>:q    r8.0<1;1,0>:q     2:w"),
            (
                "add (32|M0)",
                "r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q",
            ),
            (
                "and (1|M0)",
                "r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud",
            ),
        ]);
        let options = if self.d.chance(0.3) {
            "{Compacted}"
        } else {
            "{I@1}"
        };
        self.instr("", op, operands, options, "ALU pipe: int; $2", Role::Alu);
    }
}

/// The body of one kernel: `n` instructions or so.
fn program(k: &MetricKernel, n: u32, d: &mut Draw, with_source: bool, spill: bool) -> Program {
    let source = with_source.then(|| Source {
        // Triton kernels carry `// Line` markers without `// File`.
        file: if k.name.starts_with("triton") {
            None
        } else {
            Some("/home/user/work/bench/src/kernels.cpp")
        },
        texts: &[
            "for (size_t i = it.get_global_id(0); i < n; i += stride) {",
            "c[i] = a[i] + b[i];",
            "acc += x[i] * w[i];",
            "out[gid] = acc;",
        ],
    });
    let mut b = Builder {
        lines: Vec::new(),
        d,
        source,
        line_no: 0,
        next_sbid: 0,
    };
    let xmx = k.ops.xmx_fp16 + k.ops.xmx_bf16 > 0.0;

    let s1 = b.prologs();
    b.text("// B002: Preds:{B001},  Succs:{B003, B004}");
    b.text("// _main:");
    b.location(true);
    b.wait_alu(s1, "dst");
    b.alu();
    b.alu();
    if spill {
        // The first compile ran out of registers.
        b.instr(
            "(W)",
            "store.ugm.d32x16t.a32 (1|M0)",
            "bti[254][r126:1] r40:2",
            "{A@1,$15}",
            "spill",
            Role::Send,
        );
        b.instr(
            "(W)",
            "store.ugm.d32x16t.a32 (1|M0)",
            "bti[254][r126:1] r42:2",
            "{A@1,$14}",
            "spill",
            Role::Send,
        );
    }
    // The loop's first load, waited on at the top of the loop: a wait
    // whose setter is in a predecessor block.
    let prefetch = b.load(12);

    b.text("// B003: Preds:{B002, B003},  Succs:{B003, B004}");
    b.location(false);
    b.instr(
        "",
        "sync.nop",
        "null",
        &format!("{{Compacted,${prefetch}.dst}}"),
        "$4",
        Role::Wait,
    );
    let body = (n as usize).saturating_sub(18).max(6);
    let mut emitted = 0;
    while emitted < body {
        if emitted % 12 == 0 && emitted > 0 {
            b.location(false);
        }
        let s = b.load(14);
        b.alu();
        if xmx && b.d.chance(0.5) {
            b.instr(
                "",
                "dpas.8x8 (16|M0)",
                "r40:f         null:f            r16:bf            r24.0:bf",
                "{Atomic}",
                "XMX pipe",
                Role::Xmx,
            );
            emitted += 1;
        }
        b.wait_alu(s, "dst");
        emitted += 3;
    }
    b.instr(
        "",
        "cmp (32|M0)   (lt)f0.0",
        "null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d",
        "{I@1}",
        "ALU pipe: int; $5",
        Role::Alu,
    );
    b.instr(
        "(W&f0.0)",
        "jmpi",
        "_L_k0_0_",
        "",
        "ALU pipe: int; $5",
        Role::Control,
    );
    b.epilogue();
    Program { lines: b.lines }
}

/// Stall counts of one instruction, in the order of `STALLS`.
fn stall_counts(role: Role, d: &mut Draw, weight: f64) -> [u64; 10] {
    // active, psdep, control, pipe, send, dist, sbid, sync, fetch, other
    let mut c = [0u64; 10];
    let n = |max: f64, d: &mut Draw| (d.unit() * max * weight).round() as u64;
    c[0] = n(180.0, d) + 1;
    match role {
        Role::Wait => {
            c[6] = n(1500.0, d) + 20;
            c[4] = n(30.0, d);
        }
        Role::Send => {
            c[4] = n(400.0, d);
            c[6] = n(40.0, d);
            c[5] = n(60.0, d);
        }
        Role::Xmx => {
            c[3] = n(300.0, d);
            c[5] = n(150.0, d);
            c[1] = n(20.0, d);
        }
        Role::Control => {
            c[2] = n(120.0, d);
            c[8] = n(40.0, d);
        }
        Role::Alu => {
            c[3] = n(40.0, d);
            c[5] = n(25.0, d);
            c[2] = n(6.0, d);
        }
        Role::Nop => {
            c[0] = n(8.0, d);
            c[7] = n(10.0, d);
        }
    }
    c
}

const STALLS: [&str; 10] = [
    "Active[Events]",
    "PSDepStall[Events]",
    "ControlStall[Events]",
    "PipeStall[Events]",
    "SendStall[Events]",
    "DistStall[Events]",
    "SbidStall[Events]",
    "SyncStall[Events]",
    "InstrFetchStall[Events]",
    "OtherStall[Events]",
];

const TAG_PROGRAM: u64 = 30;
const TAG_COUNTS: u64 = 31;
const TAG_HASH: u64 = 32;

/// The sampled kernels: those with a matching `.asm` first, then the ones
/// without (`--missing-asm`).
fn sampled(args: &StallsArgs) -> Vec<(&'static MetricKernel, bool)> {
    let with_asm: Vec<_> = kernels::KERNELS
        .iter()
        .filter(|k| !k.name.starts_with('`'))
        .collect();
    let missing: Vec<_> = kernels::KERNELS
        .iter()
        .filter(|k| k.name.starts_with('`'))
        .collect();
    let total = args.kernels.max(1) as usize;
    let n_missing = (args.missing_asm as usize).min(total.saturating_sub(1));
    let mut out = Vec::new();
    for i in 0..total - n_missing {
        out.push((with_asm[i % with_asm.len()], true));
    }
    for i in 0..n_missing {
        out.push((missing[i % missing.len()], false));
    }
    out
}

pub fn run(args: &StallsArgs, seed: u64) -> Result<()> {
    fs::create_dir_all(&args.dump)
        .with_context(|| format!("{}: cannot create", args.dump.display()))?;
    let kernels = sampled(args);
    let mut programs = Vec::new();
    for (i, (k, has_asm)) in kernels.iter().enumerate() {
        let mut d = Draw::new(seed, &[TAG_PROGRAM, i as u64]);
        let p = program(k, args.instructions, &mut d, !args.no_source, false);
        if *has_asm {
            write_asm(args, seed, i, k, &p)?;
            if (i as u32) < args.recompiled {
                let mut d = Draw::new(seed, &[TAG_PROGRAM, i as u64]);
                let first = program(k, args.instructions, &mut d, !args.no_source, true);
                write_asm_named(args, &asm_name(seed, i, false), k, &first, 32)?;
            }
        }
        programs.push(p);
    }
    // A kernel compiled but never sampled.
    let unsampled = kernels::KERNELS
        .iter()
        .find(|k| !kernels.iter().any(|(s, _)| s.name == k.name) && !k.name.starts_with('`'));
    if let Some(k) = unsampled {
        let mut d = Draw::new(seed, &[TAG_PROGRAM, 999]);
        let p = program(k, 20, &mut d, !args.no_source, false);
        write_asm_named(args, &asm_name(seed, 999, false), k, &p, 16)?;
    }
    write_csv(args, seed, &kernels, &programs)?;
    if !args.quiet {
        eprintln!(
            "unitrace-gen: {} and {}/",
            args.out.display(),
            args.dump.display()
        );
    }
    Ok(())
}

/// `OCL_asm<16 hex>[_1]_simd<W>_entry_<NNNN>.asm`: two kernels per module
/// (one hash), the retry of a recompiled kernel with the extra `_1`.
fn asm_name(seed: u64, i: usize, retry: bool) -> String {
    let hash = Draw::new(seed, &[TAG_HASH, (i / 2) as u64]).u64();
    let entry = i % 2 + 1;
    if retry {
        format!("OCL_asm{hash:016x}_1_simd16_entry_{entry:04}")
    } else {
        format!("OCL_asm{hash:016x}_simd32_entry_{entry:04}")
    }
}

fn write_asm(args: &StallsArgs, seed: u64, i: usize, k: &MetricKernel, p: &Program) -> Result<()> {
    let retry = (i as u32) < args.recompiled;
    write_asm_named(
        args,
        &asm_name(seed, i, retry),
        k,
        p,
        if retry { 16 } else { 32 },
    )
}

fn write_asm_named(
    args: &StallsArgs,
    stem: &str,
    k: &MetricKernel,
    p: &Program,
    simd: u32,
) -> Result<()> {
    let count = p.instructions().count();
    let header = format!(
        "//.kernel {}\n//.platform PVCXT\n//.thread_config numGRF=128, numAcc=4, numSWSB=16\n//.options_string \"\"\n//.instCount {count}\n//.RA type\tGRAPH_COLORING_FF_BC_RA\n//.simd {simd}\n\n",
        k.symbol
    );
    let text = p.render(&header, !args.no_asm_addresses);
    let path = args.dump.join(format!("{stem}.asm"));
    write_atomic(&path, text.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))?;
    // The vISA listing IGC writes beside it; no reader uses it.
    let visa = args.dump.join(format!("{stem}.visaasm"));
    let stub = format!(".kernel \"{}\"\n.version 3.6\n", k.symbol);
    write_atomic(&visa, stub.as_bytes())
        .with_context(|| format!("{}: cannot write", visa.display()))
}

/// The stall CSV: per device, every instruction of every sampled kernel.
fn write_csv(
    args: &StallsArgs,
    seed: u64,
    kernels: &[(&MetricKernel, bool)],
    programs: &[Program],
) -> Result<()> {
    let columns: Vec<&str> = STALLS
        .iter()
        .copied()
        .filter(|c| args.with_ip_psdep || *c != "PSDepStall[Events]")
        .collect();
    let trailing = args.trailing_comma || args.ip_style == IpStyle::ZeroX;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let name_width = kernels
        .iter()
        .map(|(k, _)| k.name.len() + 2)
        .max()
        .unwrap_or(6);
    let file = AtomicFile::create(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let mut w = BufWriter::new(file);
    for device in 0..args.devices.max(1) {
        rows.clear();
        for (i, ((k, _), p)) in kernels.iter().zip(programs).enumerate() {
            let mut d = Draw::new(seed, &[TAG_COUNTS, device as u64, i as u64]);
            let weight = 0.5 + d.unit();
            // Non-zero counts of one column differ within a kernel, so
            // "top N" lists have no ties to order.
            let mut seen: Vec<std::collections::HashSet<u64>> =
                vec![Default::default(); STALLS.len()];
            for (ip, role) in p.instructions() {
                let mut counts = stall_counts(role, &mut d, weight);
                for (c, set) in counts.iter_mut().zip(seen.iter_mut()) {
                    while *c > 0 && !set.insert(*c) {
                        *c += 1;
                    }
                }
                let mut row = vec![format!("\"{}\"", k.name), ip_text(ip, args.ip_style)];
                for (c, col) in counts.iter().zip(STALLS) {
                    if args.with_ip_psdep || col != "PSDepStall[Events]" {
                        row.push(c.to_string());
                    }
                }
                rows.push(row);
            }
        }
        let mut header = vec!["Kernel".to_string(), "IP[Address]".to_string()];
        header.extend(columns.iter().map(|c| c.to_string()));
        let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
        widths[0] = widths[0].max(name_width);
        for row in &rows {
            for (w, f) in widths.iter_mut().zip(row) {
                *w = (*w).max(f.len());
            }
        }
        let mut text = String::new();
        if !args.no_device_banner {
            let _ = write!(text, "\n=== Device #{device} Metrics ===\n\n");
        }
        padded_line(&mut text, &header, &widths, trailing);
        for row in &rows {
            padded_line(&mut text, row, &widths, trailing);
        }
        w.write_all(text.as_bytes())?;
    }
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.commit()
        .with_context(|| format!("{}: cannot write", args.out.display()))
}

fn padded_line(text: &mut String, fields: &[String], widths: &[usize], trailing: bool) {
    for (n, (f, w)) in fields.iter().zip(widths).enumerate() {
        if n > 0 {
            text.push_str(", ");
        }
        let _ = write!(text, "{f:>w$}");
    }
    if trailing {
        text.push_str(", ");
    }
    text.push('\n');
}

fn ip_text(ip: u64, style: IpStyle) -> String {
    match style {
        IpStyle::Hex => format!("{ip:x}"),
        IpStyle::ZeroX => format!("0x{ip:08x}"),
    }
}

/// For tests: the dump folder a run wrote.
pub fn dump_files(dump: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dump)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}
