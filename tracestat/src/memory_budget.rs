//! How many trace files to read at once when `--jobs` is not given
//! (docs/tracestat.md#scale): one per core, unless the files being read at
//! once would not fit in half the memory the system has available. Each
//! file being read holds its intervals and its critical-path graph until
//! its summary is made: about 0.35 of its JSON bytes, 0.7 of a `.pftrace`'s
//! (the 8 x 500 MB benchmark: 167 MB more per file read at once, and 165 MB
//! per 250 MB `.pftrace`); 0.8 is taken for either, and a gzipped file
//! counts by its inflated size (its trailer's). Hand-written: reading
//! `/proc/meminfo` and a gzip trailer is a few lines no crate is needed for.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What a file being read holds at most, as a share of its bytes.
const HELD_PER_BYTE: f64 = 0.8;
/// The share of the available memory the files read at once may take.
const SHARE_OF_AVAILABLE: f64 = 0.5;

/// The files to read at once: `cores`, or fewer when the largest file's
/// estimate times that many is over the budget; `None` when nothing is
/// capped (or the memory available cannot be read).
pub fn capped_jobs(cores: usize, paths: &[impl AsRef<Path>]) -> Option<(usize, u64, u64)> {
    let available = available_memory()?;
    let largest = paths
        .iter()
        .filter_map(|p| content_bytes(p.as_ref()))
        .max()?;
    let jobs = jobs_within(cores, available, largest);
    (jobs < cores.min(paths.len())).then_some((jobs, held_bytes(largest), available))
}

/// [`capped_jobs`]' rule: at least one file, at most `cores`.
pub fn jobs_within(cores: usize, available: u64, largest: u64) -> usize {
    let budget = available as f64 * SHARE_OF_AVAILABLE;
    let fit = (budget / held_bytes(largest).max(1) as f64).floor() as usize;
    fit.clamp(1, cores.max(1))
}

fn held_bytes(file: u64) -> u64 {
    (file as f64 * HELD_PER_BYTE) as u64
}

/// `MemAvailable` of `/proc/meminfo`, in bytes (Linux); the tests' hook
/// `UNITRACE_TEST_MEM_AVAILABLE` (bytes) stands for it.
fn available_memory() -> Option<u64> {
    if let Some(v) = std::env::var_os("UNITRACE_TEST_MEM_AVAILABLE") {
        return v.to_str()?.parse().ok();
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

/// The `MemAvailable:  123456 kB` line, in bytes.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// A file's content bytes: its size, or for gzip the inflated size its
/// last member's trailer records (modulo 4 GiB, as gzip keeps it; a
/// larger member counts by at least its compressed size).
fn content_bytes(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    if size < 18 || f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return Some(size);
    }
    let mut trailer = [0u8; 4];
    f.seek(SeekFrom::End(-4)).ok()?;
    f.read_exact(&mut trailer).ok()?;
    Some(u64::from(u32::from_le_bytes(trailer)).max(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_read_at_once_fit_half_the_available_memory() {
        const GB: u64 = 1 << 30;
        // 16 cores, 64 GB available, 5 GB ranks: 4 GB held each, 8 fit.
        assert_eq!(jobs_within(16, 64 * GB, 5 * GB), 8);
        // Small files: every core.
        assert_eq!(jobs_within(16, 64 * GB, 100 << 20), 16);
        // A file larger than the budget is still read, one at a time.
        assert_eq!(jobs_within(16, 4 * GB, 20 * GB), 1);
        assert_eq!(jobs_within(0, 4 * GB, 1), 1);
    }

    #[test]
    fn meminfo_and_gzip_trailers_are_read() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_meminfo(text), Some(20_000_000 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, vec![b' '; 1000]).unwrap();
        assert_eq!(content_bytes(&plain), Some(1000));
        let gz = dir.path().join("a.json.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut e, &vec![b' '; 100_000]).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(content_bytes(&gz), Some(100_000));
    }
}
