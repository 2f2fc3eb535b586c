//! A rank's graph a window of steps at a time (docs/tracestat.md#memory):
//! the graph is built as far as the window's steps need (`build.rs`), the
//! steps are reduced, and then every node is dropped but those a later
//! step can still reach. Those are the nodes that end after the next
//! window starts, with their predecessors, and the nodes the builders and
//! the waits still to be linked refer to. A dropped node's reference reads
//! [`GONE`]. The graph held is then about a window's, not the rank's.
//!
//! A later step never walks back past its own start, and its replay reads
//! of a predecessor that ended before the step only its end and whether it
//! is device work, so a node kept for a later step without its own
//! predecessors answers as the whole rank's graph would.

use std::ops::Range;

use super::*;

/// A node reference whose node was dropped.
pub(super) const GONE: u32 = NONE - 3;

/// Launches in a window of steps at least: a window then holds some
/// 10 000 nodes (about two per launch, under 1 MB), however long the run;
/// windows of one step cost no more CPU on the bench files.
const WINDOW_LAUNCHES: usize = 1 << 12;

/// Device work ending before a window that stays for the waits' searches:
/// a command that waited for another engine looks at most this many back.
const ENDS_KEPT: usize = 16;

/// With `UNITRACE_TEST_STEPS_PER_WINDOW=N`, windows of N steps: the tests
/// compare the answers with those of windows of every size.
fn steps_per_window() -> Option<usize> {
    static N: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        let n = std::env::var("UNITRACE_TEST_STEPS_PER_WINDOW").ok()?;
        n.parse().ok().filter(|&n| n > 0)
    })
}

/// Consecutive steps grouped into windows, each with at least
/// [`WINDOW_LAUNCHES`] launches (the last may have fewer).
pub(super) fn plan(launches: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut held = 0;
    for (w, &n) in launches.iter().enumerate() {
        held += n;
        let full = match steps_per_window() {
            Some(steps) => w + 1 - from >= steps,
            None => held >= WINDOW_LAUNCHES,
        };
        if full {
            out.push(from..w + 1);
            from = w + 1;
            held = 0;
        }
    }
    if from < launches.len() {
        out.push(from..launches.len());
    }
    out
}

/// How a node is kept past its window.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Keep {
    Drop,
    /// For its end alone: its predecessors are dropped.
    End,
    /// With its predecessors: a later step may walk or replay it.
    Whole,
}

impl Graph<'_, '_> {
    /// Per step window: the launches in it, by their host time.
    pub(super) fn launches_per_window(&self, windows: &[StepWindow]) -> Vec<usize> {
        let mut out = vec![0; windows.len()];
        // Launches come nearly in time order: each search starts at the
        // last one's answer.
        let mut w = 0;
        for &(_, ts) in self.m.submissions.iter().flatten() {
            w = partition_point_near(windows, w, |w| w.start <= ts);
            if let Some(n) = w.checked_sub(1).and_then(|w| out.get_mut(w)) {
                *n += 1;
            }
        }
        out
    }

    /// Every node but those a step from `next` on, or the builders, can
    /// still reach dropped: `h` is how far the graph was built, `later`
    /// the windows not yet reduced.
    pub(super) fn compact(&mut self, next: Ns, h: Ns, later: Range<usize>, windows: &[StepWindow]) {
        let keep = self.to_keep(next, h, later.clone(), windows);
        // What the replays of later steps read of the threads' time starts
        // with the work they replay.
        let from = (keep.iter().zip(&self.nodes))
            .filter(|(&k, _)| k == Keep::Whole)
            .map(|(_, n)| n.start)
            .fold(next, Ns::min);
        for th in &mut self.threads {
            for c in th.cover.iter_mut().flatten() {
                c.drop_before(from);
            }
            if let Some(l) = &mut th.launches {
                l.cover.drop_before(from);
            }
        }
        let mut new_id = vec![NONE; self.nodes.len()];
        let mut at = 0;
        for v in 0..self.nodes.len() {
            if keep[v] == Keep::Drop {
                continue;
            }
            new_id[v] = at as u32;
            self.nodes[at] = self.nodes[v];
            self.engine[at] = self.engine[v];
            self.seq[at] = self.seq[v];
            at += 1;
        }
        self.nodes.truncate(at);
        self.engine.truncate(at);
        self.seq.truncate(at);
        let map = |r: u32| match r {
            NONE | GONE => r,
            r => match new_id[r as usize] {
                NONE => GONE,
                n => n,
            },
        };
        for (v, &k) in keep.iter().enumerate() {
            let n = new_id[v];
            if n == NONE {
                continue;
            }
            let preds = &mut self.nodes[n as usize].preds;
            for p in preds.iter_mut() {
                *p = if k == Keep::Whole { map(*p) } else { NONE };
            }
        }
        self.remap(&map, later, windows, h);
    }

    /// What [`compact`] keeps of each node.
    fn to_keep(&self, next: Ns, h: Ns, later: Range<usize>, windows: &[StepWindow]) -> Vec<Keep> {
        let before = h.min(next);
        let mut keep: Vec<Keep> = self
            .nodes
            .iter()
            .map(|n| match n.end {
                e if e > next => Keep::Whole,
                e if e > before => Keep::End,
                _ => Keep::Drop,
            })
            .collect();
        for v in 0..keep.len() {
            if keep[v] == Keep::Whole {
                for &p in self.nodes[v].preds.iter().filter(|&&p| p != NONE) {
                    keep[p as usize] = keep[p as usize].max(Keep::End);
                }
            }
        }
        let mut refs = Vec::new();
        self.carried(&mut refs, later, windows, h);
        // The device work that ended last before the kept window.
        let mut ends: Vec<(Ns, u64, u32)> = (0..self.nodes.len() as u32)
            .filter(|&v| self.device_end(v) && self.nodes[v as usize].end <= before)
            .map(|v| (self.nodes[v as usize].end, self.seq[v as usize], v))
            .collect();
        let from = ends.len().saturating_sub(ENDS_KEPT);
        if from > 0 {
            ends.select_nth_unstable_by_key(from, |e| (e.0, e.1));
        }
        refs.extend(ends[from..].iter().map(|e| e.2));
        for r in refs {
            if r != NONE && r != GONE {
                keep[r as usize] = keep[r as usize].max(Keep::End);
            }
        }
        keep
    }

    /// Whether node `v` is device work the waits search (not an arrival).
    pub(super) fn device_end(&self, v: u32) -> bool {
        self.engine[v as usize] != NONE && !matches!(self.nodes[v as usize].what, What::Arrival)
    }

    /// The nodes the builders, the waits to link and the later windows
    /// refer to.
    fn carried(&self, refs: &mut Vec<u32>, later: Range<usize>, windows: &[StepWindow], h: Ns) {
        for tb in &self.thread_builds {
            refs.extend(tb.cursor_refs());
        }
        refs.extend(self.engine_builds.iter().map(|e| e.last_ref()));
        refs.extend(
            self.pending_launch
                .iter()
                .map(|&k| self.launch_node[k as usize]),
        );
        for &v in &self.pending_syncs {
            refs.push(v);
            if let What::Sync { kernel, .. } = self.nodes[v as usize].what {
                if kernel < THREADS {
                    refs.push(self.kernel_node[kernel as usize]);
                }
            }
        }
        self.waits.open_refs(refs);
        for w in later.take_while(|&w| windows[w].start <= h) {
            refs.extend([self.step_end[w], self.step_host[w]]);
        }
        for &pos in &self.live_colls {
            let e = self.coll_end[pos as usize];
            // Communication kernels still to come may run inside it.
            if e != GONE && self.nodes[e as usize].end > h {
                refs.extend([e, self.coll_arrival[pos as usize]]);
            }
        }
    }

    /// Every reference the builders and the waits hold mapped by `map`,
    /// and the lists of live references left with those still live.
    fn remap(
        &mut self,
        map: &dyn Fn(u32) -> u32,
        later: Range<usize>,
        windows: &[StepWindow],
        h: Ns,
    ) {
        for tb in &mut self.thread_builds {
            for r in tb.refs() {
                *r = map(*r);
            }
        }
        for eb in &mut self.engine_builds {
            let r = eb.refs();
            *r = map(*r);
        }
        let launch_node = &mut self.launch_node;
        self.pending_launch.retain(|&k| {
            let r = &mut launch_node[k as usize];
            *r = map(*r);
            *r != NONE
        });
        for v in &mut self.pending_syncs {
            *v = map(*v);
        }
        let kernel_node = &mut self.kernel_node;
        self.live_kernels.retain(|&k| {
            let r = &mut kernel_node[k as usize];
            *r = map(*r);
            *r != GONE && *r != NONE
        });
        let (arrival, end) = (&mut self.coll_arrival, &mut self.coll_end);
        self.live_colls.retain(|&pos| {
            let (a, e) = (&mut arrival[pos as usize], &mut end[pos as usize]);
            (*a, *e) = (map(*a), map(*e));
            *a != GONE || *e != GONE
        });
        self.waits.remap_open(map);
        for w in later.take_while(|&w| windows[w].start <= h) {
            self.step_end[w] = map(self.step_end[w]);
            self.step_host[w] = map(self.step_host[w]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps join a window until it holds enough launches; a step with
    /// more than that is a window of its own, and the last window takes
    /// what is left.
    #[test]
    fn windows_hold_enough_launches_each() {
        let n = WINDOW_LAUNCHES;
        assert_eq!(plan(&[]), Vec::<Range<usize>>::new());
        assert_eq!(plan(&[1, 2, 3]), vec![0..3]);
        assert_eq!(plan(&[n + 5, 0, 1, n - 1, 10]), vec![0..1, 1..4, 4..5]);
        assert_eq!(plan(&[n / 2, n / 2, n / 2, n / 2]), vec![0..2, 2..4]);
        let many = vec![100; 10 * n / 100];
        let windows = plan(&many);
        assert_eq!(windows.len(), 10);
        assert!(windows.windows(2).all(|w| w[0].end == w[1].start));
    }
}
