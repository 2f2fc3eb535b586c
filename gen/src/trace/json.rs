//! Chrome JSON as unitrace streams it (docs/formats.md#trace-json): the
//! envelope, keys in the writer's order with `": "`/`", "` separators,
//! times in microseconds with six decimals, synthetic device pids and tids,
//! device metadata written when an engine is first used, and the
//! `Flow_H2D_<id>_<rank>` / `Flow_D2H_<id>_<rank>` flows.

use std::io::{self, Write};

use super::event::{Args, Event, Flow, Item, Ns, Sink, Slice, Track};
use super::output::{Limit, Output};
use super::scenario::{Identity, MetricsLink, ENGINES};
use crate::names::percent_encode;

const HEADER: &[u8] = b"{ \"traceEvents\":[\n";
const FOOTER: &[u8] = b"\n]\n}\n";

pub struct JsonSink<'a, W: Write> {
    out: Output<W>,
    id: &'a Identity,
    link: MetricsLink,
    /// Synthetic tid of each engine once used (docs/formats.md#trace-json-ids).
    engine_tid: [Option<u32>; ENGINES.len()],
    next_tid: u32,
    device_named: bool,
    first: bool,
}

impl<'a, W: Write> JsonSink<'a, W> {
    pub fn new(out: W, id: &'a Identity, link: MetricsLink, limit: Option<Limit>) -> Self {
        let mut out = Output::new(out, limit);
        out.buf().extend_from_slice(HEADER);
        JsonSink {
            out,
            id,
            link,
            engine_tid: [None; ENGINES.len()],
            next_tid: id.device_pid,
            device_named: false,
            first: true,
        }
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }

    /// Starts an event: the separator, then `{`. Returns the unit's start.
    fn begin(&mut self) -> usize {
        let first = std::mem::replace(&mut self.first, false);
        let buf = self.out.buf();
        let start = buf.len();
        if !first {
            buf.extend_from_slice(b",\n");
        }
        start
    }

    fn metadata(
        &mut self,
        kind: &str,
        pid: u32,
        tid: Option<u32>,
        ts: Ns,
        name: &str,
    ) -> io::Result<()> {
        let start = self.begin();
        let b = self.out.buf();
        b.extend_from_slice(b"{\"ph\": \"M\", \"name\": \"");
        b.extend_from_slice(kind.as_bytes());
        b.extend_from_slice(b"\", \"pid\": ");
        num(b, pid as u64);
        if let Some(tid) = tid {
            b.extend_from_slice(b", \"tid\": ");
            num(b, tid as u64);
        }
        b.extend_from_slice(b", \"ts\": ");
        micros(b, ts);
        b.extend_from_slice(b", \"args\": {\"name\": \"");
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(b"\"}}");
        self.out.unit_done(start)
    }

    /// The device tid of `engine`, announcing the device and the engine
    /// the first time.
    fn engine(&mut self, engine: usize, ts: Ns) -> io::Result<u32> {
        if let Some(tid) = self.engine_tid[engine] {
            return Ok(tid);
        }
        let pid = self.id.device_pid;
        if !self.device_named {
            self.device_named = true;
            self.metadata(
                "process_name",
                pid,
                None,
                ts,
                &self.id.device_process_name(),
            )?;
        }
        let tid = self.next_tid;
        self.next_tid = self.next_tid.wrapping_sub(1);
        self.engine_tid[engine] = Some(tid);
        self.metadata(
            "thread_name",
            pid,
            Some(tid),
            ts,
            &self.id.engine_thread_name(engine),
        )?;
        Ok(tid)
    }

    fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        let (ts, end) = self.id.stamp_span(s.start, s.end);
        let (pid, tid, cat) = match s.track {
            Track::Host => (self.id.pid, self.id.pid, &b"cpu_op"[..]),
            Track::Engine(e) => (self.id.device_pid, self.engine(e, ts)?, &b"gpu_op"[..]),
        };
        let start = self.begin();
        let link = self.link;
        let b = self.out.buf();
        head(b, b"X", tid, pid, s.name, cat, ts);
        b.extend_from_slice(b", \"dur\": ");
        micros(b, end - ts);
        args(b, &s.args, s.name, link);
        b.push(b'}');
        self.out.unit_done(start)?;
        let rank = self.id.rank as u64;
        match s.flow {
            Flow::None => Ok(()),
            Flow::Submit(id) => self.flow(b"s", b"H2D", id, rank, tid, pid, ts),
            Flow::Command(id) => {
                self.flow(b"t", b"H2D", id, rank, tid, pid, ts)?;
                self.flow(b"s", b"D2H", id, rank, tid, pid, ts)
            }
            Flow::Sync(id) => self.flow(b"t", b"D2H", id, rank, tid, pid, ts),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn flow(
        &mut self,
        ph: &[u8],
        dir: &[u8],
        id: u64,
        rank: u64,
        tid: u32,
        pid: u32,
        ts: Ns,
    ) -> io::Result<()> {
        let start = self.begin();
        let b = self.out.buf();
        b.extend_from_slice(b"{\"ph\": \"");
        b.extend_from_slice(ph);
        b.extend_from_slice(b"\", \"tid\": ");
        num(b, tid as u64);
        b.extend_from_slice(b", \"pid\": ");
        num(b, pid as u64);
        b.extend_from_slice(b", \"name\": \"dep\", \"cat\": \"Flow_");
        b.extend_from_slice(dir);
        b.push(b'_');
        num(b, id);
        b.push(b'_');
        num(b, rank);
        b.extend_from_slice(b"\", \"ts\": ");
        micros(b, ts);
        b.extend_from_slice(b", \"id\": ");
        num(b, id);
        b.push(b'}');
        self.out.unit_done(start)
    }

    fn begin_end(&mut self, ph: &[u8], name: &str, ts: Ns, a: &Args<'_>) -> io::Result<()> {
        let ts = self.id.stamp(ts);
        let ts = if ph == b"B" {
            ts - ts % super::scenario::GRID_NS
        } else {
            ts
        };
        let start = self.begin();
        let pid = self.id.pid;
        let link = self.link;
        let b = self.out.buf();
        head(b, ph, pid, pid, name, b"cpu_op", ts);
        args(b, a, name, link);
        b.push(b'}');
        self.out.unit_done(start)
    }
}

impl<W: Write> Sink for JsonSink<'_, W> {
    fn event(&mut self, event: &Event<'_>) -> io::Result<()> {
        if self.out.stopped() {
            return Ok(());
        }
        match event {
            Event::HostProcess { ts } => {
                let ts = self.id.stamp_span(*ts, *ts).0;
                self.metadata(
                    "process_name",
                    self.id.pid,
                    None,
                    ts,
                    &self.id.process_name(),
                )
            }
            Event::Slice(s) => self.slice(s),
            Event::Begin { name, ts, args } => self.begin_end(b"B", name, *ts, args),
            Event::End { name, ts } => self.begin_end(b"E", name, *ts, &Args::Plain),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.finish(FOOTER)
    }
}

/// `{"ph": "X", "tid": T, "pid": P, "name": "N", "cat": "C", "ts": TS`
fn head(b: &mut Vec<u8>, ph: &[u8], tid: u32, pid: u32, name: &str, cat: &[u8], ts: Ns) {
    b.extend_from_slice(b"{\"ph\": \"");
    b.extend_from_slice(ph);
    b.extend_from_slice(b"\", \"tid\": ");
    num(b, tid as u64);
    b.extend_from_slice(b", \"pid\": ");
    num(b, pid as u64);
    b.extend_from_slice(b", \"name\": \"");
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(b"\", \"cat\": \"");
    b.extend_from_slice(cat);
    b.extend_from_slice(b"\", \"ts\": ");
    micros(b, ts);
}

/// The `args` (or top-level `id`) part of an event, after its last field.
fn args(b: &mut Vec<u8>, a: &Args<'_>, name: &str, link: MetricsLink) {
    match a {
        Args::Plain => b.extend_from_slice(b", \"id\": 0"),
        Args::Device { id } => {
            b.extend_from_slice(b", \"args\": {\"id\": \"");
            num(b, *id);
            b.push(b'"');
            if link != MetricsLink::None {
                b.extend_from_slice(if link == MetricsLink::Https {
                    b", \"metrics\": \"https://localhost:8000/%22"
                } else {
                    b", \"metrics\": \"http://localhost:8000/%22"
                });
                percent_encode(b, name.as_bytes());
                b.extend_from_slice(b"%22/");
                num(b, *id);
                b.push(b'"');
            }
            b.push(b'}');
        }
        Args::Itt(pairs) => {
            b.extend_from_slice(b", \"args\": {");
            for (n, (key, items)) in pairs.iter().enumerate() {
                if n > 0 {
                    b.extend_from_slice(b", ");
                }
                b.push(b'"');
                b.extend_from_slice(key.as_bytes());
                b.extend_from_slice(b"\":[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        b.push(b',');
                    }
                    match item {
                        Item::Num(v) => num(b, *v),
                        Item::Str(s) => {
                            b.push(b'"');
                            b.extend_from_slice(s.as_bytes());
                            b.push(b'"');
                        }
                    }
                }
                b.push(b']');
            }
            b.push(b'}');
        }
        Args::Mpi(pairs) => {
            b.extend_from_slice(b", \"args\": {");
            for (n, (key, v)) in pairs.iter().enumerate() {
                if n > 0 {
                    b.extend_from_slice(b", ");
                }
                b.push(b'"');
                b.extend_from_slice(key.as_bytes());
                b.extend_from_slice(b"\": ");
                b.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes());
            }
            b.push(b'}');
        }
    }
}

fn num(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Nanoseconds as microseconds with six decimals (`1733400004424123.250000`).
fn micros(b: &mut Vec<u8>, ns: Ns) {
    num(b, ns / 1000);
    let frac = (ns % 1000) as u32;
    b.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
        b'0',
        b'0',
        b'0',
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_have_six_decimals() {
        let mut b = Vec::new();
        micros(&mut b, 1_733_400_004_424_123_250);
        assert_eq!(b, b"1733400004424123.250000");
        b.clear();
        micros(&mut b, 2_602);
        assert_eq!(b, b"2.602000");
        b.clear();
        micros(&mut b, 7);
        assert_eq!(b, b"0.007000");
    }
}
