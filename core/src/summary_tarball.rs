//! The tarball of unitrace logs read by `summary` (docs/formats.md#summary-tarball), read
//! member by member straight from the compressed stream: nothing is unpacked
//! to disk, and each member is parsed on a worker thread while the reader
//! thread inflates the next one.
//!
//! Memory is bounded by [`InFlight`]: the reader reserves a member (count and
//! bytes) before reading it and the consumer releases it after using the
//! parsed result; at most a few members and [`IN_FLIGHT_BYTES`] are held at
//! once (a single member larger than that is still read whole), so a
//! 1024-rank tarball needs a few members' worth of memory, not the archive. Results reach the
//! consumer in archive order, which keeps every output deterministic and
//! equal to summary.py's sequential order.
//!
//! Compression: gzip is read in-process (flate2, also concatenated gzip
//! streams); bzip2, xz and zstd, which Python's `tarfile` also opens, are
//! piped through the system `bzip2`/`xz`/`zstd` when installed; plain tar is
//! read as is.
//!
//! A folder (a `--result-dir` tree, a folder of logs) is read like an
//! archive of its files: members are the regular files below it, named by
//! their path relative to it, in byte order of those paths (an archive's
//! order is the order `tar` stored them in), found by the walk of every
//! input folder (`crate::walk`: links followed, each folder once, FIFOs and
//! unreadable files skipped with a warning in [`TarballStats::skipped`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Condvar, Mutex};

/// Uncompressed bytes of members read but not yet consumed, beyond which the
/// reader waits (unless nothing is in flight).
pub const IN_FLIGHT_BYTES: u64 = 64 << 20;

/// Members and bytes between the reader and the consumer.
struct InFlight {
    state: Mutex<(usize, u64, bool)>,
    freed: Condvar,
    max_members: usize,
}

impl InFlight {
    /// Waits for room for a member of `size` bytes; false once closed.
    fn reserve(&self, size: u64) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        loop {
            let (members, bytes, closed) = *st;
            if closed {
                return false;
            }
            if members == 0 || (members < self.max_members && bytes + size <= IN_FLIGHT_BYTES) {
                *st = (members + 1, bytes + size, false);
                return true;
            }
            st = match self.freed.wait(st) {
                Ok(st) => st,
                Err(_) => return false,
            };
        }
    }

    fn release(&self, size: u64) {
        if let Ok(mut st) = self.state.lock() {
            st.0 = st.0.saturating_sub(1);
            st.1 = st.1.saturating_sub(size);
        }
        self.freed.notify_all();
    }

    fn close(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.2 = true;
        }
        self.freed.notify_all();
    }
}

use crate::error::InputError;
use crate::walk::{walk, Depth, Skipped};

/// One regular file of the archive, fully read.
#[derive(Debug)]
pub struct Member {
    /// 0-based position among the regular files of the archive.
    pub index: usize,
    /// Path inside the archive as stored (lossy UTF-8).
    pub path: String,
    pub data: Vec<u8>,
}

/// Counts reported after a successful pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TarballStats {
    pub members: usize,
    /// Uncompressed bytes of all regular members.
    pub bytes: u64,
    /// Entries that are neither regular files nor directories (links, …).
    pub skipped_entries: usize,
    /// A folder's entries that were not read (FIFOs, sockets, unreadable
    /// files, links to folders walked already) or links followed out of
    /// it: one warning each for the caller (docs/robustness.md#walked-folders).
    pub skipped: Vec<Skipped>,
}

enum Msg<T> {
    Parsed(usize, String, u64, T),
    ReaderFailed(InputError),
    ReaderDone(TarballStats),
}

/// Reads every regular member of `path`, runs `parse` on worker threads and
/// hands `(path, result)` to `consume` in archive order. Stops at the first
/// error of the archive or of `consume`. Members are read whole; see
/// [`for_each_member_streaming`] for a bound on member size.
pub fn for_each_member<T, P, C>(
    path: &Path,
    workers: usize,
    parse: P,
    consume: C,
) -> Result<TarballStats, InputError>
where
    T: Send,
    P: Fn(&Member) -> T + Sync,
    C: FnMut(&str, T) -> Result<(), InputError>,
{
    let never = |_: &str, _: &mut dyn BufRead| -> Option<T> { None };
    for_each_member_streaming(path, workers, u64::MAX, parse, never, consume)
}

/// Like [`for_each_member`], but a member larger than `stream_above` bytes
/// is not read into memory: `stream` parses it on the reader thread straight
/// from the archive stream (returning `None` falls back to reading it whole).
/// Memory then stays bounded whatever the member sizes.
pub fn for_each_member_streaming<T, P, S, C>(
    path: &Path,
    workers: usize,
    stream_above: u64,
    parse: P,
    stream: S,
    mut consume: C,
) -> Result<TarballStats, InputError>
where
    T: Send,
    P: Fn(&Member) -> T + Sync,
    S: Fn(&str, &mut dyn BufRead) -> Option<T> + Sync,
    C: FnMut(&str, T) -> Result<(), InputError>,
{
    let workers = workers.max(1);
    let in_flight = workers * 2 + 2;
    let source = open_archive(path)?;

    let (work_tx, work_rx) = mpsc::sync_channel::<Member>(in_flight);
    let (msg_tx, msg_rx) = mpsc::channel::<Msg<T>>();
    let budget = InFlight {
        state: Mutex::new((0, 0, false)),
        freed: Condvar::new(),
        max_members: in_flight,
    };
    let budget = &budget;
    let work_rx = Mutex::new(work_rx);
    let stream_ref = &stream;
    std::thread::scope(|scope| {
        let reader_tx = msg_tx.clone();
        scope.spawn(move || {
            let ctx = ReaderCtx {
                path,
                work_tx: &work_tx,
                msg_tx: &reader_tx,
                budget,
                stream: stream_ref,
                stream_above,
            };
            let msg = match read_members(&ctx, source) {
                Ok(stats) => Msg::ReaderDone(stats),
                Err(e) => Msg::ReaderFailed(e),
            };
            let _ = reader_tx.send(msg);
        });
        for _ in 0..workers {
            let work_rx = &work_rx;
            let msg_tx = msg_tx.clone();
            let parse = &parse;
            scope.spawn(move || loop {
                let member = match work_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(member) = member else { return };
                let result = parse(&member);
                let size = member.data.len() as u64;
                let Member { index, path, .. } = member;
                if msg_tx.send(Msg::Parsed(index, path, size, result)).is_err() {
                    return;
                }
            });
        }
        drop(msg_tx);

        let mut waiting: BTreeMap<usize, (String, u64, T)> = BTreeMap::new();
        let mut next = 0usize;
        let mut done: Option<TarballStats> = None;
        let outcome = loop {
            if let Some(stats) = done.take_if(|stats| next == stats.members) {
                break Ok(stats);
            }
            let Ok(msg) = msg_rx.recv() else {
                break Err(InputError::at_file(
                    path,
                    "internal error: a worker stopped",
                ));
            };
            match msg {
                Msg::ReaderDone(stats) => done = Some(stats),
                Msg::ReaderFailed(e) => break Err(e),
                Msg::Parsed(index, name, size, result) => {
                    waiting.insert(index, (name, size, result));
                    let mut failed = None;
                    while let Some((name, size, result)) = waiting.remove(&next) {
                        next += 1;
                        budget.release(size);
                        if let Err(e) = consume(&name, result) {
                            failed = Some(e);
                            break;
                        }
                    }
                    if let Some(e) = failed {
                        break Err(e);
                    }
                }
            }
        };
        // Unblock the reader (no more room) and the workers (no more work).
        budget.close();
        drop(msg_rx);
        outcome
    })
}

enum Source {
    /// Regular files below a folder: (path relative to it, path), and the
    /// entries the walk skipped.
    Folder(FolderFiles, Vec<Skipped>),
    Gzip(BufReader<File>),
    Plain(BufReader<File>),
    External(&'static str, Child),
}

fn open_archive(path: &Path) -> Result<Source, InputError> {
    let file = File::open(path).map_err(|e| InputError::io(path, &e))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        let (mut files, skipped) = list_folder(path)?;
        if files.is_empty() {
            return Err(InputError::at_file(path, "empty folder (no files)"));
        }
        files.sort();
        return Ok(Source::Folder(files, skipped));
    }
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let head = reader.fill_buf().map_err(|e| InputError::io(path, &e))?;
    if head.is_empty() {
        return Err(InputError::at_file(path, "empty file, not a tar archive"));
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Source::Gzip(reader));
    }
    let external = if head.starts_with(b"BZh") {
        Some("bzip2")
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some("xz")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd")
    } else {
        None
    };
    if let Some(tool) = external {
        let child = Command::new(tool)
            .arg("-dc")
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                InputError::at_file(
                    path,
                    format!("{tool}-compressed archive, but `{tool}` could not be run ({e}); recompress with gzip"),
                )
            })?;
        return Ok(Source::External(tool, child));
    }
    if looks_like_tar_header(head) {
        return Ok(Source::Plain(reader));
    }
    Err(InputError::at_file(
        path,
        "not a tar archive (neither gzip, bzip2, xz, zstd nor plain tar)",
    ))
}

/// (path relative to the folder with `/`, path) of a folder's files.
type FolderFiles = Vec<(String, PathBuf)>;

/// The regular files below `dir` as (path relative to it with `/`, path),
/// by the walk of every input folder (`crate::walk`: FIFOs, sockets and
/// unreadable files skipped with a warning, links followed, each folder
/// once); the warnings go into the stats.
fn list_folder(dir: &Path) -> Result<(FolderFiles, Vec<Skipped>), InputError> {
    let walk = walk(dir, Depth::Tree, &|_| true).map_err(|e| InputError::io(dir, &e))?;
    let files = walk
        .files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap_or(&p);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            (name, p)
        })
        .collect();
    Ok((files, walk.skipped))
}

/// A 512-byte tar header: `ustar` magic, or (v7 tar) a valid checksum.
fn looks_like_tar_header(head: &[u8]) -> bool {
    if head.len() < 512 {
        return false;
    }
    if &head[257..262] == b"ustar" {
        return true;
    }
    let stored = std::str::from_utf8(&head[148..156])
        .ok()
        .map(|s| s.trim_matches(|c: char| c == '\0' || c == ' '))
        .and_then(|s| u32::from_str_radix(s, 8).ok());
    let computed: u32 = head[..512]
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                *b as u32
            }
        })
        .sum();
    stored == Some(computed) && head[0] != 0
}

/// What the reader thread needs besides the archive.
struct ReaderCtx<'a, T, S> {
    path: &'a Path,
    work_tx: &'a SyncSender<Member>,
    msg_tx: &'a mpsc::Sender<Msg<T>>,
    budget: &'a InFlight,
    stream: &'a S,
    stream_above: u64,
}

fn read_members<T, S>(ctx: &ReaderCtx<'_, T, S>, source: Source) -> Result<TarballStats, InputError>
where
    S: Fn(&str, &mut dyn BufRead) -> Option<T>,
{
    let path = ctx.path;
    match source {
        Source::Folder(files, skipped) => {
            let mut stats = read_folder(ctx, files)?;
            stats.skipped = skipped;
            Ok(stats)
        }
        Source::Gzip(r) => {
            // Inflate in large chunks: the tar reader asks for 512-byte
            // headers, which would make inflate and the CRC run on small
            // buffers.
            let gz = flate2::bufread::MultiGzDecoder::new(r);
            read_tar(ctx, BufReader::with_capacity(1 << 18, gz))
        }
        Source::Plain(r) => read_tar(ctx, r),
        Source::External(tool, mut child) => {
            let stdout = child.stdout.take();
            let result = match stdout {
                Some(out) => read_tar(ctx, BufReader::with_capacity(1 << 20, out)),
                None => Err(InputError::at_file(
                    path,
                    format!("`{tool}` gave no output"),
                )),
            };
            let mut err_text = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err_text);
            }
            let status = child.wait();
            match (result, status) {
                (Ok(stats), Ok(st)) if st.success() => Ok(stats),
                (Err(e), _) if err_text.trim().is_empty() => Err(e),
                (_, _) => Err(InputError::at_file(
                    path,
                    format!(
                        "truncated or corrupt archive: {tool}: {}",
                        err_text
                            .lines()
                            .map(str::trim)
                            .find(|l| !l.is_empty())
                            .unwrap_or("failed")
                    ),
                )),
            }
        }
    }
}

fn corrupt(path: &Path, member: Option<&str>, e: &io::Error) -> InputError {
    let what = match e.kind() {
        io::ErrorKind::UnexpectedEof => "truncated archive".to_string(),
        _ => format!("corrupt archive ({e})"),
    };
    match member {
        Some(m) => InputError::at_file(path, format!("{m}: {what}")),
        None => InputError::at_file(path, what),
    }
}

fn read_tar<R: Read, T, S>(ctx: &ReaderCtx<'_, T, S>, reader: R) -> Result<TarballStats, InputError>
where
    S: Fn(&str, &mut dyn BufRead) -> Option<T>,
{
    let path = ctx.path;
    let mut archive = tar::Archive::new(reader);
    let mut stats = TarballStats::default();
    let entries = archive.entries().map_err(|e| corrupt(path, None, &e))?;
    let mut last_member: Option<String> = None;
    let mut saw_entry = false;
    for entry in entries {
        let mut entry = entry.map_err(|e| {
            // The tar crate reports a bad header as "other"; name the member
            // before it so the user knows where the damage starts.
            let after = last_member
                .as_deref()
                .map(|m| format!("after {m}"))
                .unwrap_or_else(|| "at the start".to_string());
            match e.kind() {
                io::ErrorKind::UnexpectedEof => {
                    InputError::at_file(path, format!("truncated archive ({after})"))
                }
                _ if !saw_entry => {
                    InputError::at_file(path, "not a tar archive (the first header is invalid)")
                }
                _ => InputError::at_file(path, format!("corrupt archive {after}: {e}")),
            }
        })?;
        saw_entry = true;
        let kind = entry.header().entry_type();
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if kind.is_dir() {
            continue;
        }
        if !(kind.is_file() || kind.is_contiguous()) {
            stats.skipped_entries += 1;
            continue;
        }
        let size = entry.size();
        if size > ctx.stream_above {
            // Too big to hold: parse it here while it streams (the parser
            // threads keep working on the members before it).
            if !ctx.budget.reserve(0) {
                return Ok(stats);
            }
            let mut counted = CountingReader {
                inner: &mut entry,
                count: 0,
            };
            let mut buffered = BufReader::with_capacity(1 << 16, &mut counted);
            let result = (ctx.stream)(&name, &mut buffered);
            drop(buffered);
            if let Some(result) = result {
                // Whatever the parser left unread still counts for the size
                // check (truncation).
                io::copy(&mut counted, &mut io::sink())
                    .map_err(|e| corrupt(path, Some(&name), &e))?;
                if counted.count < size {
                    return Err(InputError::at_file(
                        path,
                        format!(
                            "{name}: truncated archive ({} of {size} bytes)",
                            counted.count
                        ),
                    ));
                }
                stats.bytes += size;
                let index = stats.members;
                stats.members += 1;
                last_member = Some(name.clone());
                if ctx
                    .msg_tx
                    .send(Msg::Parsed(index, name, 0, result))
                    .is_err()
                {
                    return Ok(stats);
                }
                continue;
            }
            return Err(InputError::at_file(
                path,
                format!("{name}: member of {size} bytes is too large to read whole"),
            ));
        }
        // Wait for room (bounded memory).
        if !ctx.budget.reserve(size) {
            return Ok(stats); // the consumer stopped; its error wins
        }
        let mut data = Vec::with_capacity(size.min(1 << 30) as usize);
        entry
            .read_to_end(&mut data)
            .map_err(|e| corrupt(path, Some(&name), &e))?;
        if (data.len() as u64) < size {
            return Err(InputError::at_file(
                path,
                format!("{name}: truncated archive ({} of {size} bytes)", data.len()),
            ));
        }
        stats.bytes += data.len() as u64;
        let member = Member {
            index: stats.members,
            path: name.clone(),
            data,
        };
        stats.members += 1;
        last_member = Some(name);
        if ctx.work_tx.send(member).is_err() {
            return Ok(stats);
        }
    }
    if !saw_entry {
        return Err(InputError::at_file(path, "empty archive (no members)"));
    }
    Ok(stats)
}

/// [`read_tar`] for the files of a folder.
fn read_folder<T, S>(
    ctx: &ReaderCtx<'_, T, S>,
    files: Vec<(String, PathBuf)>,
) -> Result<TarballStats, InputError>
where
    S: Fn(&str, &mut dyn BufRead) -> Option<T>,
{
    let path = ctx.path;
    let mut stats = TarballStats::default();
    for (name, file_path) in files {
        let unreadable = |e: &io::Error| InputError::at_file(path, format!("{name}: {e}"));
        let mut file = File::open(&file_path).map_err(|e| unreadable(&e))?;
        let size = file.metadata().map_err(|e| unreadable(&e))?.len();
        if size > ctx.stream_above {
            if !ctx.budget.reserve(0) {
                return Ok(stats);
            }
            let mut buffered = BufReader::with_capacity(1 << 16, &mut file);
            let result = (ctx.stream)(&name, &mut buffered);
            let Some(result) = result else {
                return Err(InputError::at_file(
                    path,
                    format!("{name}: file of {size} bytes is too large to read whole"),
                ));
            };
            stats.bytes += size;
            let index = stats.members;
            stats.members += 1;
            if ctx
                .msg_tx
                .send(Msg::Parsed(index, name, 0, result))
                .is_err()
            {
                return Ok(stats);
            }
            continue;
        }
        if !ctx.budget.reserve(size) {
            return Ok(stats);
        }
        let mut data = Vec::with_capacity(size.min(1 << 30) as usize);
        // A file that grew since its size was taken is read up to that size
        // (the in-flight budget reserved it).
        (&mut file)
            .take(size)
            .read_to_end(&mut data)
            .map_err(|e| unreadable(&e))?;
        stats.bytes += data.len() as u64;
        let member = Member {
            index: stats.members,
            path: name,
            data,
        };
        stats.members += 1;
        if ctx.work_tx.send(member).is_err() {
            return Ok(stats);
        }
    }
    Ok(stats)
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tgz(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data) in members {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, name, *data).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    fn run(bytes: &[u8]) -> Result<Vec<(String, usize)>, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.tgz");
        std::fs::write(&p, bytes).unwrap();
        let mut got = Vec::new();
        for_each_member(
            &p,
            3,
            |m| m.data.len(),
            |name, len| {
                got.push((name.to_string(), len));
                Ok(())
            },
        )
        .map_err(|e| e.to_string().replace(&p.display().to_string(), "A"))?;
        Ok(got)
    }

    #[test]
    fn members_come_back_in_order() {
        let data: Vec<Vec<u8>> = (0..50).map(|i| vec![b'x'; i * 100]).collect();
        let names: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
        let members: Vec<(&str, &[u8])> = names
            .iter()
            .zip(&data)
            .map(|(n, d)| (n.as_str(), d.as_slice()))
            .collect();
        let got = run(&tgz(&members)).unwrap();
        assert_eq!(got.len(), 50);
        for (i, (name, len)) in got.iter().enumerate() {
            assert_eq!((name.as_str(), *len), (names[i].as_str(), i * 100));
        }
    }

    #[test]
    fn big_members_stream_and_keep_their_place() {
        let sizes = [10usize, 5000, 20, 7000, 30];
        let data: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![b'y'; n]).collect();
        let names: Vec<String> = (0..sizes.len()).map(|i| format!("m{i}")).collect();
        let members: Vec<(&str, &[u8])> = names
            .iter()
            .zip(&data)
            .map(|(n, d)| (n.as_str(), d.as_slice()))
            .collect();
        let bytes = tgz(&members);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.tgz");
        std::fs::write(&p, &bytes).unwrap();
        let mut got = Vec::new();
        for_each_member_streaming(
            &p,
            2,
            1000,
            |m| format!("whole {}", m.data.len()),
            |_, r| {
                // Read only part: the rest must still be checked and skipped.
                let mut first = [0u8; 100];
                r.read_exact(&mut first).ok()?;
                Some("streamed".to_string())
            },
            |name, v| {
                got.push(format!("{name} {v}"));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "m0 whole 10",
                "m1 streamed",
                "m2 whole 20",
                "m3 streamed",
                "m4 whole 30"
            ]
        );
        // A streamed member cut short is a truncated archive.
        let tar_bytes = {
            let mut d = flate2::read::GzDecoder::new(&bytes[..]);
            let mut v = Vec::new();
            d.read_to_end(&mut v).unwrap();
            v
        };
        let cut = dir.path().join("cut.tar");
        std::fs::write(&cut, &tar_bytes[..512 * 4 + 3000]).unwrap();
        let err = for_each_member_streaming(
            &cut,
            1,
            1000,
            |m| m.data.len(),
            |_, r| {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                Some(v.len())
            },
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(err.to_string().contains("m1: truncated archive"), "{err}");
    }

    #[test]
    fn bad_archives() {
        assert_eq!(run(b"").unwrap_err(), "A: empty file, not a tar archive");
        assert_eq!(
            run(b"hello world, this is text").unwrap_err(),
            "A: not a tar archive (neither gzip, bzip2, xz, zstd nor plain tar)"
        );
        let good = tgz(&[("a", &[b'a'; 5000][..]), ("b", &[b'b'; 5000][..])]);
        let cut = &good[..good.len() / 2];
        assert!(run(cut).unwrap_err().starts_with("A: "), "truncated");
        assert!(
            run(cut).unwrap_err().contains("truncated"),
            "{:?}",
            run(cut)
        );
        assert_eq!(run(&tgz(&[])).unwrap_err(), "A: empty archive (no members)");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&[b'z'; 2000]).unwrap();
        let not_tar = gz.finish().unwrap();
        assert!(run(&not_tar)
            .unwrap_err()
            .starts_with("A: not a tar archive"));
    }

    #[test]
    fn a_folder_reads_like_an_archive_of_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("rank_1.a.7")).unwrap();
        std::fs::create_dir_all(root.join("rank_0.a.6")).unwrap();
        std::fs::write(root.join("rank_1.a.7/device_timing.txt"), b"12").unwrap();
        std::fs::write(root.join("rank_0.a.6/device_timing.txt"), b"1").unwrap();
        std::fs::write(root.join("b.txt"), b"123").unwrap();
        // A link to a folder walked already is not followed again (no
        // loops); one to a file is.
        std::os::unix::fs::symlink(root, root.join("rank_0.a.6/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("b.txt"), root.join("c.txt")).unwrap();
        let mut got = Vec::new();
        // Stream everything above 1 byte: both paths of the reader.
        let stats = for_each_member_streaming(
            root,
            2,
            1,
            |m| m.data.len(),
            |_, r| {
                let mut n = 0;
                while let Ok(chunk) = r.fill_buf() {
                    if chunk.is_empty() {
                        break;
                    }
                    let len = chunk.len();
                    r.consume(len);
                    n += len;
                }
                Some(n)
            },
            |name, len| {
                got.push((name.to_string(), len));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            got,
            [
                ("b.txt".to_string(), 3),
                ("c.txt".to_string(), 3),
                ("rank_0.a.6/device_timing.txt".to_string(), 1),
                ("rank_1.a.7/device_timing.txt".to_string(), 2),
            ]
        );
        assert_eq!((stats.members, stats.bytes), (4, 9));
        assert_eq!(
            stats.skipped,
            [Skipped {
                path: root.join("rank_0.a.6/loop"),
                problem: format!(
                    "a link to the folder {}, walked already (a loop or a second name); skipped",
                    root.display()
                ),
            }]
        );
        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir(empty.path().join("sub")).unwrap();
        let e = for_each_member(empty.path(), 1, |_| (), |_, _| Ok(())).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: empty folder (no files)", empty.path().display())
        );
    }
}
