//! The byte stream of one trace file: a buffer flushed in large writes,
//! and the cut of a file whose writer was "killed" (`--cut`,
//! docs/formats.md#trace-json-truncated, docs/formats.md#pftrace-truncated).
//!
//! A format writer appends one *unit* at a time (a JSON event with its
//! separator, a `.pftrace` record) and calls [`Output::unit_done`]; a cut
//! stops the file either at the last unit boundary before the limit
//! ([`CutMode::Event`]) or at the limit itself, inside a unit
//! ([`CutMode::Block`], as a buffered writer killed between two block
//! writes leaves it).

use std::io::{self, Write};

/// Where a cut file stops (docs/unitrace-gen.md#cut-files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CutMode {
    /// At an 8 KiB block boundary, usually inside an event or record.
    Block,
    /// Between two events (JSON: after an event's `}`) or records.
    Event,
    /// After the first event or the first two records: the header only.
    Header,
    /// Nothing at all: a 0-byte file.
    Empty,
}

/// A cut applied to a stream: stop at `limit` bytes, `mode` deciding whether
/// a unit that crosses the limit is dropped whole or cut.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub bytes: u64,
    /// True: drop the unit that crosses the limit (event boundary).
    pub whole_units: bool,
    /// Stop after this many units whatever their size (the header cut).
    pub max_units: Option<u64>,
}

const FLUSH_AT: usize = 1 << 20;

pub struct Output<W: Write> {
    out: W,
    buf: Vec<u8>,
    flushed: u64,
    limit: Option<Limit>,
    units: u64,
    stopped: bool,
}

impl<W: Write> Output<W> {
    pub fn new(out: W, limit: Option<Limit>) -> Self {
        Output {
            out,
            buf: Vec::with_capacity(FLUSH_AT + (64 << 10)),
            flushed: 0,
            limit,
            units: 0,
            stopped: false,
        }
    }

    /// The buffer to append the next unit to (nothing is kept once the
    /// stream stopped at its cut).
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// True once a cut stopped the stream: writers may skip formatting.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Bytes of the stream so far.
    pub fn written(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    /// The unit that began at buffer offset `unit_start` is complete.
    pub fn unit_done(&mut self, unit_start: usize) -> io::Result<()> {
        if self.stopped {
            self.buf.truncate(unit_start.min(self.buf.len()));
            return Ok(());
        }
        self.units += 1;
        if let Some(limit) = self.limit {
            if limit.max_units.is_some_and(|max| self.units > max) {
                self.buf.truncate(unit_start);
                self.stopped = true;
            } else if self.written() > limit.bytes {
                let keep = if limit.whole_units {
                    unit_start
                } else {
                    (limit.bytes - self.flushed) as usize
                };
                self.buf.truncate(keep);
                self.stopped = true;
            }
        }
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes the closing bytes (unless cut) and everything buffered.
    pub fn finish(&mut self, footer: &[u8]) -> io::Result<()> {
        if !self.stopped {
            let start = self.buf.len();
            self.buf.extend_from_slice(footer);
            self.unit_done(start)?;
        }
        self.flush_buf()?;
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A writer that only counts (the sizing pass of a cut file).
#[derive(Debug, Default)]
pub struct Counter {
    pub bytes: u64,
}

impl Write for Counter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.bytes += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(limit: Option<Limit>) -> Vec<u8> {
        let mut o = Output::new(Vec::new(), limit);
        for u in [&b"head"[..], b",one", b",two", b",three"] {
            let start = o.buf().len();
            o.buf().extend_from_slice(u);
            o.unit_done(start).unwrap();
        }
        o.finish(b"END").unwrap();
        o.into_inner()
    }

    #[test]
    fn cuts_at_unit_boundaries_or_inside_units() {
        assert_eq!(units(None), b"head,one,two,threeEND");
        let limit = |bytes, whole_units, max_units| {
            Some(Limit {
                bytes,
                whole_units,
                max_units,
            })
        };
        assert_eq!(units(limit(10, true, None)), b"head,one");
        assert_eq!(units(limit(10, false, None)), b"head,one,t");
        assert_eq!(units(limit(0, false, None)), b"");
        assert_eq!(units(limit(u64::MAX, true, Some(1))), b"head");
    }
}
