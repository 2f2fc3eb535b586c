//! IGC shader dumps (docs/formats.md#shader-dump, `unitrace_core::shader_dump`) and the
//! stall report built on them (`stall_report`): any `.asm` bytes give a
//! listing or an error, never a panic; the address annotation is
//! consistent (every annotated address maps back to its line); the text,
//! JSON and per-source-line reports render for stall samples at every
//! address of the listing (plus one unknown address); kernel symbols
//! demangle without panicking.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/shader_dump/*`).

use std::path::PathBuf;
use std::sync::OnceLock;

use unitrace_core::demangle::{demangle_kernel_symbol, Demangler};
use unitrace_core::shader_dump::{
    annotate_lines, is_fully_annotated, split_lines, AsmFile, AsmListing, ShaderDump,
};
use unitrace_core::stall_report::{
    analyze_kernel, by_line, by_line_json, by_line_text, line_detail_text, StallSample,
};

/// One dump folder per fuzzing process, rewritten for every input.
fn dump_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("unitrace-fuzz-dump-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    })
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = demangle_kernel_symbol(&text);
    let lines = split_lines(data);
    let _ = is_fully_annotated(&lines);
    let annotated = annotate_lines(&lines);
    assert_eq!(annotated.len(), lines.len());
    assert!(
        is_fully_annotated(&annotated),
        "annotation is not recognised as annotated"
    );

    let dir = dump_dir();
    let name = "OCL_asm0000000000000000_simd16_entry_0001.asm";
    let path = dir.join(name);
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let _ = std::fs::remove_file(dir.join(format!("{name}.ip")));
    if let Ok(dump) = ShaderDump::open(dir) {
        let mut demangler = Demangler::built_in();
        for kernel in dump.kernel_names(&mut demangler) {
            let _ = dump.select(&kernel, &mut demangler);
        }
        let _ = dump.select(&text, &mut demangler);
    }
    let file = AsmFile {
        name: name.to_string(),
        path: path.clone(),
        shown: format!("dump/{name}"),
        symbols: Vec::new(),
        annotated_copy: false,
    };
    let Ok(listing) = AsmListing::load(&file) else {
        return;
    };
    let mut samples = Vec::new();
    for i in 0..listing.len() {
        let _ = (listing.line(i), listing.kind(i), listing.block_of_line(i));
        let _ = (listing.line_marker_above(i), listing.file_marker_above(i));
        if let Some(address) = listing.address_of_line(i) {
            assert_eq!(listing.line_of_address(address), Some(i));
            let seed = data.get(i % data.len().max(1)).copied().unwrap_or(1) as u64;
            samples.push(StallSample {
                ip: address,
                ip_text: format!("{address:x}"),
                counts: std::array::from_fn(|k| (seed >> (k % 8)) & 3),
            });
        }
        if samples.len() >= 256 {
            break;
        }
    }
    samples.push(StallSample {
        ip: u64::MAX - 7,
        ip_text: "fffffffffffffff8".to_string(),
        counts: [1; 8],
    });
    for top in [-1, 0, 3] {
        let report = analyze_kernel("k", &listing, &samples, top);
        let _ = report.to_text(&listing);
        let _ = report.to_json(&listing);
    }
    let per_line = by_line(&listing, &samples);
    let _ = by_line_text("k", &listing, &per_line);
    let _ = by_line_json("k", &listing, &per_line, None);
    if let Some(first) = per_line.first() {
        let _ = first.label();
        let _ = line_detail_text("k", &listing, &per_line, "a.cpp", 1);
        let _ = by_line_json("k", &listing, &per_line, Some(("a.cpp", 1)));
    }
}
