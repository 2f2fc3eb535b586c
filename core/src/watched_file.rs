//! [`WatchedFile`]: an input file read as a stream whose size and
//! modification time are checked after every read, so that a file that
//! another process truncates, extends or rewrites while a tool reads it is
//! one error, `FILE: changed while read (was N bytes, now M)`, instead of a
//! trace that mixes two versions, a misleading syntax error or a cut that
//! looks like a killed writer (docs/robustness.md#changed-inputs).
//!
//! Inputs are streamed, never mapped into memory (docs/robustness.md#changed-inputs
//! says why): a file that shrinks under a mapping stops the process with
//! SIGBUS, while a read of a shrunk file only returns fewer bytes.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// What a regular file looked like when it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    /// Modification time (seconds, nanoseconds).
    modified: (i64, i64),
}

impl Stamp {
    fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        let modified = {
            use std::os::unix::fs::MetadataExt;
            (meta.mtime(), meta.mtime_nsec())
        };
        #[cfg(not(unix))]
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| (d.as_secs() as i64, d.subsec_nanos() as i64))
            .unwrap_or((0, 0));
        Stamp {
            len: meta.len(),
            modified,
        }
    }
}

/// The error of a file that changed while it was read; its `Display` is
/// the problem of the one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedWhileRead {
    /// Bytes when the file was opened.
    pub was: u64,
    /// Bytes when the change was seen.
    pub now: u64,
}

impl std::fmt::Display for ChangedWhileRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "changed while read (was {} bytes, now {})",
            self.was, self.now
        )
    }
}

impl std::error::Error for ChangedWhileRead {}

impl ChangedWhileRead {
    /// The change behind an I/O error, if it is one.
    pub fn of(err: &io::Error) -> Option<&ChangedWhileRead> {
        err.get_ref()?.downcast_ref::<ChangedWhileRead>()
    }
}

/// A file read front to back (seeks allowed) that fails with
/// [`ChangedWhileRead`] as soon as its size or modification time differs
/// from those at open, or its end comes before or after the size at open.
/// Pipes, devices and other files that are not regular are read as they
/// are, unchecked (they have no size to keep).
pub struct WatchedFile {
    file: File,
    /// `None` for what is not a regular file.
    at_open: Option<Stamp>,
    /// Offset of the next byte read.
    pos: u64,
}

impl WatchedFile {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> io::Result<WatchedFile> {
        WatchedFile::new(File::open(path)?)
    }

    /// Watches a file opened by the caller, from its current state and
    /// offset.
    pub fn new(mut file: File) -> io::Result<WatchedFile> {
        let meta = file.metadata()?;
        let at_open = meta.is_file().then(|| Stamp::of(&meta));
        let pos = match at_open {
            Some(_) => file.stream_position()?,
            None => 0,
        };
        Ok(WatchedFile { file, at_open, pos })
    }

    /// The file, for reads that leave the offset where they found it or
    /// are followed by a seek through [`WatchedFile`].
    pub fn get_ref(&self) -> &File {
        &self.file
    }

    /// Whether the file is a regular one (watched, seekable).
    pub fn is_regular(&self) -> bool {
        self.at_open.is_some()
    }

    /// `Err` when the file is no longer as it was at open (or, `at_end`,
    /// when everything read does not add up to its size at open).
    fn check(&self, at_end: bool) -> io::Result<()> {
        let Some(was) = self.at_open else {
            return Ok(());
        };
        let now = Stamp::of(&self.file.metadata()?);
        if now != was || self.pos > was.len || (at_end && self.pos != was.len) {
            return Err(io::Error::other(ChangedWhileRead {
                was: was.len,
                now: now.len,
            }));
        }
        Ok(())
    }
}

impl Read for WatchedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        if self.at_open.is_some() {
            let before = self.pos;
            self.pos += n as u64;
            // Checked after the read: a writer updates the modification
            // time before its bytes can be read, and a truncation before
            // a read can return less, so bytes of another version never
            // reach the caller unnoticed.
            self.check(n == 0 && !buf.is_empty())?;
            test_stop::after_read(before, self.pos);
        }
        Ok(n)
    }
}

/// The hook of the tests of changed inputs (`tests/tests/changed_inputs.rs`):
/// with `UNITRACE_TEST_STOP_AT=OFFSET` in the environment, the first read
/// of a watched file that reaches byte OFFSET stops the process
/// (SIGSTOP) right after it, once per process, so that a test can change
/// the file at an exact moment of the read and continue the process. Unset,
/// it costs one load per read.
mod test_stop {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;

    pub const VARIABLE: &str = "UNITRACE_TEST_STOP_AT";

    pub fn after_read(before: u64, after: u64) {
        static AT: OnceLock<Option<u64>> = OnceLock::new();
        static DONE: AtomicBool = AtomicBool::new(false);
        let Some(at) = *AT.get_or_init(|| std::env::var(VARIABLE).ok()?.parse().ok()) else {
            return;
        };
        if before < at && after >= at && !DONE.swap(true, Ordering::SeqCst) {
            #[cfg(unix)]
            // SAFETY: raise only sends a signal to this process.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
        }
    }
}

impl Seek for WatchedFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = self.file.seek(to)?;
        self.pos = pos;
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(dir: &Path, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join("t");
        std::fs::write(&p, bytes).unwrap();
        // An old modification time: any later write gives another.
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        p
    }

    fn read_all(w: &mut WatchedFile, chunk: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = vec![0; chunk];
        loop {
            let n = w.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn an_unchanged_file_reads_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"0123456789");
        let mut w = WatchedFile::open(&p).unwrap();
        assert!(w.is_regular());
        assert_eq!(read_all(&mut w, 3).unwrap(), b"0123456789");
        w.rewind().unwrap();
        assert_eq!(read_all(&mut w, 4).unwrap(), b"0123456789");
    }

    #[test]
    fn truncating_extending_or_rewriting_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        type Change = fn(&Path);
        let changes: [(&str, Change, u64); 4] = [
            (
                "truncated",
                |p| {
                    File::options()
                        .write(true)
                        .open(p)
                        .unwrap()
                        .set_len(4)
                        .unwrap()
                },
                4,
            ),
            (
                "extended",
                |p| {
                    File::options()
                        .append(true)
                        .open(p)
                        .unwrap()
                        .write_all(b"more")
                        .unwrap()
                },
                14,
            ),
            (
                "rewritten",
                |p| std::fs::write(p, b"abcdefghij").unwrap(),
                10,
            ),
            ("emptied", |p| std::fs::write(p, b"").unwrap(), 0),
        ];
        for (what, change, now) in changes {
            let p = file_of(dir.path(), b"0123456789");
            let mut w = WatchedFile::open(&p).unwrap();
            let mut buf = [0; 3];
            assert_eq!(w.read(&mut buf).unwrap(), 3);
            change(&p);
            let err = read_all(&mut w, 3).expect_err(what);
            let changed = ChangedWhileRead::of(&err).expect(what);
            assert_eq!((changed.was, changed.now), (10, now), "{what}");
            assert_eq!(
                err.to_string(),
                format!("changed while read (was 10 bytes, now {now})")
            );
        }
    }

    #[test]
    fn pipes_are_read_unchecked() {
        let mut child = std::process::Command::new("printf")
            .arg("abc")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let fd: std::os::fd::OwnedFd = out.into();
        let mut w = WatchedFile::new(File::from(fd)).unwrap();
        assert!(!w.is_regular());
        assert_eq!(read_all(&mut w, 2).unwrap(), b"abc");
        child.wait().unwrap();
    }
}
