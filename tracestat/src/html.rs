//! `--html FILE`: an offline page with the breakdown bars and the rank x
//! time heatmap (docs/tracestat.md#html-page). Placeholder writer until the
//! render crate lands; see `write`.

use std::io::{self, Write};

use crate::report::Report;

pub fn write(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>tracestat</title></head><body>"
    )?;
    writeln!(out, "<p>{} ranks</p></body></html>", r.ranks)
}
