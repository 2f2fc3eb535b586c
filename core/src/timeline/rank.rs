//! Rank identity, decided in one place for every tool
//! (docs/formats.md#timeline-ranks):
//!
//! 1. a path that names its rank — a `rank_<r>` folder of a
//!    `unitrace --result-dir` tree (docs/formats.md#result-dir-tree), or a
//!    file name `<app>.<pid>.<rank>.json|pftrace` (docs/formats.md#trace-json) —
//!    makes the whole file that rank;
//! 2. otherwise `RANK <r> ...` process names (unitrace's) or `rank <r> ...`
//!    ones (mergetrace's label, docs/mergetrace.md#kineto) tie each process
//!    to a rank (a merged trace holds several, docs/formats.md#trace-json-ids);
//! 3. otherwise the run information the file carries (Kineto's
//!    `distributedInfo.rank`, docs/formats.md#kineto-json-ranks);
//! 4. otherwise the file has no rank and reports label it by its input
//!    position.
//!
//! [`RankList`] is the one `--ranks` grammar: `0-3,7` and `0 3 7` alike.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::model::RankSlot;

/// Where a file's rank came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankSource {
    /// A `rank_<r>` folder.
    Folder,
    /// `<app>.<pid>.<rank>.<ext>`.
    FileName,
}

/// The rank a path names, and how (rule 1 of the module comment). The
/// folder nearest the file wins over one further up.
pub fn rank_from_path(path: &Path) -> Option<(u32, RankSource)> {
    if let Some(r) = rank_from_file_name(path) {
        // A result-dir folder decides over the file name inside it.
        return Some(match rank_from_folder(path) {
            Some(f) => (f, RankSource::Folder),
            None => (r, RankSource::FileName),
        });
    }
    rank_from_folder(path).map(|r| (r, RankSource::Folder))
}

/// `<app>.<pid>.<rank>.json|pftrace` (also with `.gz`).
fn rank_from_file_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let parts: Vec<&str> = name.split('.').collect();
    let ext = parts[parts.len() - 1];
    if parts.len() < 4 || !(ext.eq_ignore_ascii_case("json") || ext.eq_ignore_ascii_case("pftrace"))
    {
        return None;
    }
    let (pid, rank) = (parts[parts.len() - 3], parts[parts.len() - 2]);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if digits(pid) && digits(rank) {
        rank.parse().ok()
    } else {
        None
    }
}

/// The nearest `rank_<r>...` folder above the file.
fn rank_from_folder(path: &Path) -> Option<u32> {
    let parent = path.parent()?;
    for comp in parent.components().rev() {
        let s = comp.as_os_str().to_str()?;
        if let Some(rest) = s.strip_prefix("rank_") {
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if !digits.is_empty() {
                return digits.parse().ok();
            }
        }
    }
    None
}

/// `r` of a `RANK r ...` process name, and the label without that prefix.
/// mergetrace's own `rank r ...` label counts too: it is how a merged
/// trace of files whose processes name no rank (PyTorch profiler traces,
/// docs/mergetrace.md#kineto) tells its ranks apart.
pub fn split_rank_label(label: &str) -> (Option<u32>, &str) {
    if let Some(rest) = label
        .strip_prefix("RANK ")
        .or_else(|| label.strip_prefix("rank "))
    {
        let end = rest.find(' ').unwrap_or(rest.len());
        if let Ok(r) = rest[..end].parse() {
            return (Some(r), rest[end..].trim_start());
        }
    }
    (None, label)
}

/// One rank of a file as the router found it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankIdentity {
    pub rank: Option<u32>,
    /// A process name said another rank than the path (rule 1 won).
    pub conflicting_label: Option<u32>,
}

/// Routes the events of one file to its ranks by process id.
#[derive(Debug)]
pub struct RankRouter {
    slots: Vec<RankIdentity>,
    used: Vec<bool>,
    by_rank: FxHashMap<u32, RankSlot>,
    by_pid: FxHashMap<u64, RankSlot>,
    /// The path decided the rank: one slot for the whole file.
    path_rank: bool,
}

impl RankRouter {
    pub fn new(path: &Path) -> RankRouter {
        let path_rank = rank_from_path(path).map(|(r, _)| r);
        let mut router = RankRouter {
            slots: vec![RankIdentity {
                rank: path_rank,
                conflicting_label: None,
            }],
            used: vec![false],
            by_rank: FxHashMap::default(),
            by_pid: FxHashMap::default(),
            path_rank: path_rank.is_some(),
        };
        if let Some(r) = path_rank {
            router.by_rank.insert(r, 0);
        }
        router
    }

    /// The slot of an event of process `pid` (the first slot when the
    /// process is not known); marks it as holding events.
    #[inline]
    pub fn slot(&mut self, pid: Option<u64>) -> RankSlot {
        let s = match pid {
            Some(p) if !self.by_pid.is_empty() => self.by_pid.get(&p).copied().unwrap_or(0),
            _ => 0,
        };
        self.used[s] = true;
        s
    }

    /// Marks `slot` as holding events ([`RankRouter::slot`] of a pid
    /// whose slot is known).
    #[inline]
    pub fn mark_used(&mut self, slot: RankSlot) {
        self.used[slot] = true;
    }

    /// The slot of process `pid` without marking it.
    #[inline]
    pub fn peek(&self, pid: Option<u64>) -> RankSlot {
        pid.and_then(|p| self.by_pid.get(&p).copied()).unwrap_or(0)
    }

    /// A process name: `RANK r ...` ties the process to rank r (rule 2),
    /// unless the path decided the rank. Returns the process's slot.
    pub fn process_name(&mut self, pid: u64, label: &str) -> RankSlot {
        let (rank, _) = split_rank_label(label);
        let slot = match rank {
            Some(r) if self.path_rank => {
                if self.slots[0].rank != Some(r) && self.slots[0].conflicting_label.is_none() {
                    self.slots[0].conflicting_label = Some(r);
                }
                0
            }
            Some(r) => self.rank_slot(r),
            None => self.peek(Some(pid)),
        };
        self.by_pid.insert(pid, slot);
        slot
    }

    fn rank_slot(&mut self, rank: u32) -> RankSlot {
        if let Some(&s) = self.by_rank.get(&rank) {
            return s;
        }
        // The first labelled rank of a file whose path has no rank takes
        // over the first slot while that is still empty.
        if self.slots[0].rank.is_none() && !self.used[0] && self.by_rank.is_empty() {
            self.slots[0].rank = Some(rank);
            self.by_rank.insert(rank, 0);
            return 0;
        }
        let s = self.slots.len();
        self.slots.push(RankIdentity {
            rank: Some(rank),
            conflicting_label: None,
        });
        self.used.push(false);
        self.by_rank.insert(rank, s);
        s
    }

    /// The file's own rank (rule 3): taken when neither the path nor a
    /// process name gave one.
    pub fn file_rank(&mut self, rank: u32) {
        if self.slots.len() == 1 && self.slots[0].rank.is_none() {
            self.slots[0].rank = Some(rank);
            self.by_rank.insert(rank, 0);
        }
    }

    pub fn slots(&self) -> &[RankIdentity] {
        &self.slots
    }

    pub fn is_used(&self, slot: RankSlot) -> bool {
        self.used[slot]
    }

    pub fn rank(&self, slot: RankSlot) -> Option<u32> {
        self.slots[slot].rank
    }
}

/// A `--ranks` selection: ranks and ranges, `0-3,7` or `0 3 7` (both
/// separators, in one value or several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankList(Vec<(u32, u32)>);

impl RankList {
    /// Parses the values of `--ranks`; the error names the bad item.
    pub fn parse<I, S>(values: I) -> Result<RankList, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut ranges = Vec::new();
        for value in values {
            let value = value.as_ref();
            let mut any = false;
            for item in value.split([',', ' ', '\t']).map(str::trim) {
                if item.is_empty() {
                    continue;
                }
                let (a, b) = item.split_once('-').unwrap_or((item, item));
                let num = |s: &str| {
                    s.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("'{item}' is not a rank or a range a-b"))
                };
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{item}' is an empty range"));
                }
                ranges.push((a, b));
                any = true;
            }
            if !any {
                return Err(format!("no rank in '{value}'"));
            }
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Ok(RankList(merged))
    }

    /// Whether a value looks like a rank list rather than a file name
    /// (`--ranks 0 3 a.json` hands the files to `--ranks` too).
    pub fn looks_like_ranks(value: &str) -> bool {
        !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == ',' || c == ' ')
    }

    pub fn contains(&self, rank: u32) -> bool {
        let i = self.0.partition_point(|&(_, b)| b < rank);
        self.0.get(i).is_some_and(|&(a, _)| a <= rank)
    }

    /// Every rank of the list, ascending.
    pub fn ranks(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(a, b)| a..=b)
    }

    /// How many ranks the list names.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|&(a, b)| u64::from(b - a) + 1).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_paths() {
        let r = |p: &str| rank_from_path(Path::new(p));
        assert_eq!(r("d/python.100024.3.json"), Some((3, RankSource::FileName)));
        assert_eq!(
            r("d/python.100024.3.json.gz"),
            Some((3, RankSource::FileName))
        );
        assert_eq!(
            r("d/rank_12.python.7/chrome_trace.json"),
            Some((12, RankSource::Folder))
        );
        // The folder decides over the file name inside it.
        assert_eq!(r("rank_7.x/python.1.0.json"), Some((7, RankSource::Folder)));
        assert_eq!(r("merged.json"), None);
        assert_eq!(r("rank_x/merged.json"), None);
    }

    #[test]
    fn rank_labels() {
        assert_eq!(split_rank_label("RANK 3 HOST<n0>"), (Some(3), "HOST<n0>"));
        assert_eq!(split_rank_label("HOST<n0>"), (None, "HOST<n0>"));
        assert_eq!(split_rank_label("RANK x"), (None, "RANK x"));
        assert_eq!(split_rank_label("rank 2 python3"), (Some(2), "python3"));
        assert_eq!(split_rank_label("rank 2"), (Some(2), ""));
        assert_eq!(split_rank_label("ranking 2"), (None, "ranking 2"));
    }

    #[test]
    fn a_merged_trace_routes_by_process_names() {
        let mut r = RankRouter::new(Path::new("merged.json"));
        assert_eq!(r.process_name(10, "RANK 0 HOST<a>"), 0);
        assert_eq!(r.process_name(20, "RANK 1 HOST<b>"), 1);
        assert_eq!(r.process_name(21, "RANK 1 DEVICE<b>"), 1);
        assert_eq!(r.slot(Some(21)), 1);
        assert_eq!(r.slot(Some(10)), 0);
        assert_eq!(r.slot(Some(99)), 0);
        assert_eq!(r.rank(1), Some(1));
    }

    #[test]
    fn mergetraces_rank_labels_route_as_unitraces() {
        // A merged PyTorch profiler run (docs/mergetrace.md#kineto): each
        // process named `rank R` before its events.
        let mut r = RankRouter::new(Path::new("all.json"));
        assert_eq!(r.process_name(1, "rank 0"), 0);
        assert_eq!(r.process_name(5, "rank 1"), 1);
        assert_eq!(r.slot(Some(5)), 1);
        assert_eq!(r.process_name(5, "rank 1 python3"), 1);
        assert_eq!((r.rank(0), r.rank(1)), (Some(0), Some(1)));
    }

    #[test]
    fn the_path_decides_over_process_names() {
        let mut r = RankRouter::new(Path::new("rank_7.app.1/chrome_trace.json"));
        assert_eq!(r.process_name(10, "RANK 0 HOST<a>"), 0);
        assert_eq!(r.slots().len(), 1);
        assert_eq!(r.rank(0), Some(7));
        assert_eq!(r.slots()[0].conflicting_label, Some(0));
    }

    #[test]
    fn the_file_rank_fills_in_when_nothing_else_names_one() {
        let mut r = RankRouter::new(Path::new("trace.pt.trace.json"));
        r.file_rank(5);
        assert_eq!(r.rank(0), Some(5));
        let mut r = RankRouter::new(Path::new("a.1.2.json"));
        r.file_rank(5);
        assert_eq!(r.rank(0), Some(2));
    }

    #[test]
    fn rank_lists() {
        let l = RankList::parse(["0-3,7"]).unwrap();
        assert!(l.contains(0) && l.contains(3) && l.contains(7) && !l.contains(4));
        assert_eq!(
            RankList::parse(["0 3 7"]).unwrap(),
            RankList::parse(["0", "3", "7"]).unwrap()
        );
        assert_eq!(RankList::parse(["2-4", "3-9"]).unwrap().count(), 8);
        assert_eq!(RankList::parse(["0-65535"]).unwrap().count(), 65536);
        assert!(RankList::parse(["3-1"])
            .unwrap_err()
            .contains("empty range"));
        assert!(RankList::parse(["a"])
            .unwrap_err()
            .contains("'a' is not a rank"));
        assert!(RankList::parse([""]).is_err());
        assert!(RankList::looks_like_ranks("0-3,7") && !RankList::looks_like_ranks("a.json"));
        assert_eq!(
            RankList::parse(["5,1-2"])
                .unwrap()
                .ranks()
                .collect::<Vec<_>>(),
            [1, 2, 5]
        );
    }
}
