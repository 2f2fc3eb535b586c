//! A host thread's calls as disjoint stretches labelled by the innermost
//! open call, generated in time order as the critical path's walks reach
//! them (docs/tracestat.md#critical-path). A 500 MB rank has about two
//! million stretches, as much memory as the rest of its graph: held whole
//! they set the rank's peak, generated a step at a time only the step
//! being walked holds them (docs/tracestat.md#scale).

use super::stretch::Kind;
use crate::time::Ns;

/// `(start, end, kind, item name)`, disjoint and in time order.
pub type Stretch = (Ns, Ns, Kind, u32);

/// A call as the sweep reads it, by start (the longer first at one start):
/// `(start, end, kind, item name)`.
pub type SweepCall = (Ns, Ns, Kind, u32);

/// The calls open at the sweep's time, and the next call to read.
#[derive(Debug)]
pub struct Sweep {
    next: usize,
    /// `(end, kind, name)` of each open call, innermost last.
    open: Vec<(Ns, Kind, u32)>,
    at: Ns,
    done: bool,
}

impl Default for Sweep {
    fn default() -> Self {
        Sweep {
            next: 0,
            open: Vec::new(),
            at: Ns::MIN,
            done: false,
        }
    }
}

impl Sweep {
    /// Reads the next of `calls` calls (after the last, closes those still
    /// open) and appends the stretches that ends; false when nothing was
    /// left. The last stretch appended may still grow (a call of the same
    /// label that follows without a gap); the others are final.
    pub fn advance(
        &mut self,
        calls: usize,
        call: &impl Fn(usize) -> SweepCall,
        out: &mut Vec<Stretch>,
    ) -> bool {
        if self.done {
            return false;
        }
        if self.next == calls {
            while let Some((end, kind, name)) = self.open.pop() {
                push(out, self.at, end, kind, name);
                self.at = self.at.max(end);
            }
            self.done = true;
            return true;
        }
        let (s, e, kind, name) = call(self.next);
        self.next += 1;
        while let Some(&(end, k, n)) = self.open.last() {
            if end > s {
                break;
            }
            push(out, self.at, end, k, n);
            self.at = self.at.max(end);
            self.open.pop();
        }
        if let Some(&(_, k, n)) = self.open.last() {
            push(out, self.at, s, k, n);
        }
        self.at = self.at.max(s);
        // A call is cut at the end of the one it is inside.
        let e = self.open.last().map_or(e, |top| e.min(top.0));
        self.open.push((e, kind, name));
        true
    }
}

/// Appends a stretch, or grows the last one when it continues it.
fn push(out: &mut Vec<Stretch>, s: Ns, e: Ns, kind: Kind, name: u32) {
    if e <= s {
        return;
    }
    match out.last_mut() {
        Some(last) if last.1 == s && last.2 == kind && last.3 == name => last.1 = e,
        _ => out.push((s, e, kind, name)),
    }
}

/// Every stretch of `calls` calls in time order, each once it is final;
/// `f` returns false to stop.
pub fn each(calls: usize, call: &impl Fn(usize) -> SweepCall, mut f: impl FnMut(Stretch) -> bool) {
    let mut sweep = Sweep::default();
    let mut buf: Vec<Stretch> = Vec::new();
    let mut more = true;
    while more {
        more = sweep.advance(calls, call, &mut buf);
        // All but the last are final until the sweep is done.
        let keep = usize::from(more && !buf.is_empty());
        let final_count = buf.len() - keep;
        for s in buf.drain(..final_count) {
            if !f(s) {
                return;
            }
        }
    }
}

/// A thread's stretches of the time being walked, generated on demand.
#[derive(Debug)]
pub struct Stretches {
    sweep: Sweep,
    held: Vec<Stretch>,
    /// Stretches ending by this time were dropped.
    dropped_to: Ns,
}

impl Default for Stretches {
    fn default() -> Self {
        Stretches {
            sweep: Sweep::default(),
            held: Vec::new(),
            dropped_to: Ns::MIN,
        }
    }
}

/// Where the first stretch starts, from a sweep of its own: what a
/// [`Stretches`] holds is only ever what `hold` generated, so every
/// stretch it drops was seen by [`Stretches::final_held`] first.
pub fn first_start(calls: usize, call: &impl Fn(usize) -> SweepCall) -> Option<Ns> {
    let mut sweep = Sweep::default();
    let mut out = Vec::new();
    while out.is_empty() && sweep.advance(calls, call, &mut out) {}
    out.first().map(|s| s.0)
}

impl Stretches {
    /// Holds what walks of `a..b` read, dropping the stretches that end
    /// by `a` (but the last generated). Returns how many were dropped from
    /// the front (0 when it started over, for a time before the last).
    pub fn hold(
        &mut self,
        a: Ns,
        b: Ns,
        calls: usize,
        call: &impl Fn(usize) -> SweepCall,
    ) -> usize {
        if a < self.dropped_to {
            *self = Stretches::default();
        }
        let gone = self
            .held
            .partition_point(|s| s.1 <= a)
            .min(self.held.len().saturating_sub(1));
        if gone > 0 {
            self.dropped_to = self.held[gone - 1].1;
            self.held.drain(..gone);
        }
        while !self.serves_to(b) && self.sweep.advance(calls, call, &mut self.held) {}
        gone
    }

    /// The held stretches that are final (all but the last generated,
    /// until the sweep is done), and where the first stretch not among
    /// them starts (`Ns::MAX`: none is left).
    pub fn final_held(&self) -> (&[Stretch], Ns) {
        if self.sweep.done {
            return (&self.held[..], Ns::MAX);
        }
        match self.held.split_last() {
            Some((last, rest)) => (rest, last.0),
            None => (&[], Ns::MIN),
        }
    }

    /// True when every stretch that starts before `b` is held and final.
    fn serves_to(&self, b: Ns) -> bool {
        self.sweep.done || self.held.last().is_some_and(|l| l.0 >= b)
    }

    /// The held stretches, when they are all of those of `a..b`.
    pub fn serving(&self, a: Ns, b: Ns) -> Option<&[Stretch]> {
        (a >= self.dropped_to && self.serves_to(b)).then_some(&self.held[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nested calls, touching calls of one label, zero-length calls and a
    /// call that outlives the one it is in.
    fn calls() -> Vec<SweepCall> {
        let mut v = Vec::new();
        for i in 0..50 {
            let t = i * 100;
            v.push((t, t + 90, Kind::Host, 1));
            v.push((t + 10, t + 40, Kind::Launch, 2));
            v.push((t + 40, t + 60, Kind::Launch, 2));
            v.push((t + 45, t + 45, Kind::SyncWait, 3));
            v.push((t + 70, t + 200, Kind::Host, 4 + i as u32 % 2));
        }
        v.sort_by_key(|c| (c.0, std::cmp::Reverse(c.1)));
        v
    }

    fn whole(calls: &[SweepCall]) -> Vec<Stretch> {
        let call = |i: usize| calls[i];
        let mut out = Vec::new();
        let mut sweep = Sweep::default();
        while sweep.advance(calls.len(), &call, &mut out) {}
        out
    }

    #[test]
    fn stretches_nest_and_join() {
        let c = vec![
            (0, 100, Kind::Host, 1),
            (10, 20, Kind::Launch, 2),
            (20, 30, Kind::Launch, 2),
            (50, 150, Kind::SyncWait, 3),
            (200, 210, Kind::Host, 1),
        ];
        assert_eq!(
            whole(&c),
            vec![
                (0, 10, Kind::Host, 1),
                (10, 30, Kind::Launch, 2),
                (30, 50, Kind::Host, 1),
                (50, 100, Kind::SyncWait, 3),
                (200, 210, Kind::Host, 1),
            ]
        );
    }

    #[test]
    fn each_gives_the_whole_sweep() {
        let c = calls();
        let call = |i: usize| c[i];
        let mut got = Vec::new();
        each(c.len(), &call, |s| {
            got.push(s);
            true
        });
        assert_eq!(got, whole(&c));
    }

    #[test]
    fn held_windows_serve_what_the_whole_sweep_has() {
        let c = calls();
        let all = whole(&c);
        let call = |i: usize| c[i];
        // Windows forward, overlapping, then one back in time (starts over).
        let windows = [(0, 250), (180, 700), (650, 655), (700, 5200), (300, 900)];
        let mut st = Stretches::default();
        assert_eq!(first_start(c.len(), &call), Some(all[0].0));
        for (a, b) in windows {
            if a == 300 {
                assert!(
                    st.serving(a, b).is_none(),
                    "dropped stretches are not served"
                );
            }
            st.hold(a, b, c.len(), &call);
            let held = st.serving(a, b).expect("held after hold");
            let want: Vec<Stretch> = all.iter().filter(|s| s.1 > a && s.0 < b).copied().collect();
            let got: Vec<Stretch> = held
                .iter()
                .filter(|s| s.1 > a && s.0 < b)
                .copied()
                .collect();
            assert_eq!(got, want, "window {a}..{b}");
        }
    }

    /// What `final_held` shows after each hold, gathered once each (as the
    /// launch coverage is), is every stretch up to where it is complete:
    /// none is dropped unseen, even when the first window starts late.
    #[test]
    fn every_stretch_is_shown_final_before_it_is_dropped() {
        // First a call with a shorter one at its start: the first sweep
        // step that gives stretches gives two.
        let mut c = vec![(-500, -400, Kind::Host, 9), (-500, -450, Kind::Launch, 8)];
        c.extend(calls());
        let all = whole(&c);
        let call = |i: usize| c[i];
        let mut st = Stretches::default();
        let (mut gathered, mut gathered_to, mut complete_to) = (Vec::new(), Ns::MIN, Ns::MIN);
        for (a, b) in [(700, 900), (900, 2500), (2600, 2610), (4000, 6000)] {
            st.hold(a, b, c.len(), &call);
            let (done, next) = st.final_held();
            let from = done.partition_point(|s| s.0 < gathered_to);
            for s in &done[from..] {
                gathered.push(*s);
                gathered_to = s.1;
            }
            complete_to = complete_to.max(next);
        }
        let want: Vec<Stretch> = all.iter().filter(|s| s.0 < complete_to).copied().collect();
        assert_eq!(gathered, want);
        assert_eq!(
            complete_to,
            Ns::MAX,
            "the last window reaches past the calls"
        );
    }
}
