//! The schedule of a job's collectives (docs/unitrace-gen.md#the-scenario):
//! the n-th collective ends on every rank at the same true time, its latest
//! arrival plus its transfer time.
//!
//! Planning is a dry run of every rank's program ([`super::program`]) up to
//! each collective's arrival, with the same random streams as the real run
//! (each segment of a rank draws from its own stream,
//! docs/unitrace-gen.md#determinism), so the schedule is exact and no
//! rank's events are kept in memory: one number per collective.

use rayon::prelude::*;

use super::event::{Ns, Sink};
use super::program::{self, Program};
use super::scenario::{JobSpec, Scenario, Shape};

/// The job of `shape` with the end time of every collective set.
pub fn plan(spec: JobSpec, shape: Shape) -> Scenario {
    let mut sc = Scenario::unplanned(spec, shape);
    let arrivals = latest_arrivals(&sc);
    let mut prev_end = 0;
    for (n, c) in sc.collectives.iter_mut().enumerate() {
        // Segment 0 starts at each rank's own start (`arrivals[0]` is
        // absolute); every later one at the previous collective's end.
        let last = if n == 0 {
            arrivals[0]
        } else {
            prev_end + arrivals[n]
        };
        c.end = last + c.transfer;
        prev_end = c.end;
    }
    sc
}

/// Per collective, the latest arrival over all ranks: absolute for the
/// first, relative to the previous collective's end for the others.
fn latest_arrivals(sc: &Scenario) -> Vec<Ns> {
    let n = sc.collectives.len();
    (0..sc.spec.ranks)
        .into_par_iter()
        .map(|rank| {
            let id = sc.identity(rank);
            let mut offsets = program::arrival_offsets(sc, &id);
            offsets[0] += id.start;
            offsets
        })
        .reduce(
            || vec![0; n],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = (*x).max(y);
                }
                a
            },
        )
}

/// Runs rank `rank`'s program of a planned job into `sink`.
pub fn write_rank<S: Sink>(sc: &Scenario, rank: u32, sink: &mut S) -> std::io::Result<()> {
    let id = sc.identity(rank);
    Program::new(sc, &id, sink).run()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::scenario::{MetricsLink, RangeForm};

    #[test]
    fn collectives_end_after_every_arrival() {
        let spec = JobSpec {
            seed: 3,
            ranks: 4,
            app: "python".into(),
            ranks_per_node: 12,
            straggler: Some(1),
            slowdown: 1.45,
            slow_step: None,
            clock_offset_us: 0.0,
            pid_collision: false,
            metrics_link: MetricsLink::None,
            ranges: RangeForm::Mixed,
            step_ranges: true,
            lean_init: false,
            plants: crate::trace::scenario::Plants::default(),
        };
        let sc = plan(
            spec,
            Shape {
                steps: 3,
                layers: 5,
            },
        );
        assert_eq!(sc.collectives.len(), 8);
        for w in sc.collectives.windows(2) {
            assert!(w[1].end > w[0].end + w[1].transfer);
        }
        for rank in 0..4 {
            let id = sc.identity(rank);
            let offsets = program::arrival_offsets(&sc, &id);
            assert!(id.start + offsets[0] + sc.collectives[0].transfer <= sc.collectives[0].end);
            for (n, offset) in offsets.iter().enumerate().skip(1) {
                let arrival = sc.collectives[n - 1].end + offset;
                assert!(arrival + sc.collectives[n].transfer <= sc.collectives[n].end);
            }
        }
    }
}
