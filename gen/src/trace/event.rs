//! The events a rank's program produces, before any file format
//! (docs/unitrace-gen.md#the-scenario). A [`Sink`] turns them into Chrome
//! JSON (docs/formats.md#trace-json) or `.pftrace` records
//! (docs/formats.md#pftrace); the program never sees the format.
//!
//! Times are true nanoseconds since the epoch; the sink applies the rank's
//! clock offset and the writer's 0.25 us grid on starts
//! ([`super::scenario::Identity::stamp`]).

use std::io;

/// Nanoseconds.
pub type Ns = u64;

/// Where an event happens: the rank's main host thread, or an engine of its
/// device (index into [`super::scenario::ENGINES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    Host,
    Engine(usize),
}

/// One item of an ITT metadata list (`"send_size":[65536]`, `"comm":["world"]`).
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    Num(u64),
    Str(&'a str),
}

/// The `args` of an event, by the shape unitrace writes for its source
/// (docs/formats.md#trace-json-events).
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    /// A host API call without arguments: top-level `"id": 0`.
    Plain,
    /// A device command: `args.id` (the instance id, as a string) and,
    /// with a metrics link, `args.metrics`.
    Device { id: u64 },
    /// An ITT task: every value a list.
    Itt(&'a [(&'a str, &'a [Item<'a>])]),
    /// An MPI call: integer arguments (`ssize`, `dsize`, `src`, ...).
    Mpi(&'a [(&'a str, i64)]),
}

/// The flow an event takes part in (docs/formats.md#trace-json-flows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    None,
    /// The host call that appended command `id`: start of `Flow_H2D_<id>_<rank>`.
    Submit(u64),
    /// Device command `id`: end of its H2D flow, start of its D2H flow.
    Command(u64),
    /// The host call that waited for command `id`: end of its D2H flow.
    Sync(u64),
}

/// A complete event (`X`): host call, host range or device command.
#[derive(Debug, Clone, Copy)]
pub struct Slice<'a> {
    pub track: Track,
    pub name: &'a str,
    pub start: Ns,
    pub end: Ns,
    pub args: Args<'a>,
    pub flow: Flow,
}

#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The host process's name (`RANK r HOST<host>`), first in every file.
    HostProcess {
        ts: Ns,
    },
    Slice(Slice<'a>),
    /// A host range written as a `B`/`E` pair.
    Begin {
        name: &'a str,
        ts: Ns,
        args: Args<'a>,
    },
    End {
        name: &'a str,
        ts: Ns,
    },
}

/// Receives a rank's events in writing order.
pub trait Sink {
    fn event(&mut self, event: &Event<'_>) -> io::Result<()>;
    /// The program is done: close the document.
    fn finish(&mut self) -> io::Result<()>;
}

/// Counts events as the JSON form has them (the size calibration uses it).
#[derive(Debug, Default)]
pub struct CountSink {
    pub events: u64,
    engines_seen: u8,
}

impl Sink for CountSink {
    fn event(&mut self, event: &Event<'_>) -> io::Result<()> {
        // The device's process name and each engine's thread name come
        // before the engine's first command.
        if let Event::Slice(Slice {
            track: Track::Engine(e),
            ..
        }) = event
        {
            let bit = 1u8 << e;
            if self.engines_seen & bit == 0 {
                self.events += if self.engines_seen == 0 { 2 } else { 1 };
                self.engines_seen |= bit;
            }
        }
        // A slice with a flow is two or three records there.
        self.events += match event {
            Event::Slice(s) => match s.flow {
                Flow::None => 1,
                Flow::Submit(_) | Flow::Sync(_) => 2,
                Flow::Command(_) => 3,
            },
            _ => 1,
        };
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
