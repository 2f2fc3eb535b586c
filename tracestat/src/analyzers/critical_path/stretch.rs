//! A stretch of a critical path: what it is (its kind) and where it lies
//! on its rank (docs/tracestat.md#critical-path). Shared by the graph that
//! finds the stretches and the packed form that keeps them.

use serde::{Deserialize, Serialize};

use crate::classify::Class;
use crate::time::Ns;

/// What a stretch of the path is (the `kind` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Compute,
    Communication,
    Memory,
    Launch,
    Host,
    SyncWait,
    Idle,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Compute,
        Kind::Communication,
        Kind::Memory,
        Kind::Launch,
        Kind::Host,
        Kind::SyncWait,
        Kind::Idle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Compute => "compute",
            Kind::Communication => "communication",
            Kind::Memory => "memory",
            Kind::Launch => "launch",
            Kind::Host => "host",
            Kind::SyncWait => "sync-wait",
            Kind::Idle => "idle",
        }
    }

    pub(super) fn of_class(c: Class) -> Kind {
        match c {
            Class::Compute => Kind::Compute,
            Class::Communication => Kind::Communication,
            Class::Memory => Kind::Memory,
        }
    }
}

/// One stretch of a path on one rank (the rank's clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub start: Ns,
    pub dur: Ns,
    pub kind: Kind,
    /// Index into the rank's names (`RankPath::names`).
    pub name: u32,
}
