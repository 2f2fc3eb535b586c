//! One rank's steps as the graph reduces them (`graph.rs`) and the
//! cross-rank solve reads them (`solve.rs`): each step's bounds and its
//! sinks. Apart from the graph so that the spill file (`spill.rs`), which
//! the graph's rank part uses, reads and writes them without importing
//! the graph back.

use serde::{Deserialize, Serialize};

use super::packed::{ChainItems, SinkLens};
use super::stretch::Kind;
use crate::time::Ns;

/// A point of a step whose time the cross-rank solve needs: a collective
/// arrival, or the step's end (the last sink of a step).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sink {
    pub time: Ns,
    /// Where the chain that set its time starts: `None` at the step's
    /// start, `Some(j)` at the end of the rank's collective call `j`.
    pub source: Option<u32>,
    /// That chain, in time order, tiling `source..time`; a chain of more
    /// than `graph::MAX_ITEMS` stretches is coarsened (see
    /// `graph::coarsen`). Packed: every rank's chains are kept (spilled,
    /// `spill.rs`) until the cross-rank solve.
    pub items: ChainItems,
    /// When the chain was coarsened: its time per kind and name, exact,
    /// `(kind, name, stretches, time)` (otherwise its items are exact).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<Total>,
    /// With `--what-if`: per source, the longest chain to this sink as
    /// `[recorded, its kernel part, under rule 1, rule 2, ...]`.
    #[serde(default, skip_serializing_if = "SinkLens::is_empty")]
    pub lens: SinkLens,
}

/// A chain's time of one kind and name: `(kind, name, stretches, time)`.
pub type Total = (Kind, u32, u64, Ns);

/// One step of one rank, reduced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepGraph {
    /// The step's number; `None` for the whole run as one step.
    pub id: Option<i64>,
    pub start: Ns,
    pub end: Ns,
    pub sinks: Vec<Sink>,
    /// Kernel time in the step (the `rank:N=median` rule's measure).
    pub kernel_ns: Ns,
    /// With `--what-if`, for a step with a host range: when that range
    /// ended, and its chains' lengths as a [`Sink`]'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_end: Option<(Ns, SinkLens)>,
}
