//! Every output file of every tool is written through [`AtomicFile`]: the
//! bytes go to a temporary file in the destination folder, which is renamed
//! over the destination only on [`AtomicFile::commit`]. A run that fails (or
//! panics) therefore never leaves a partial output file behind; dropping an
//! uncommitted `AtomicFile` removes the temporary file.
//!
//! What else holds for every output (docs/robustness.md#outputs):
//! * **Interrupts.** Temporary files are kept in a process-wide registry;
//!   after [`remove_temp_files_on_signals`] a SIGINT, SIGTERM or SIGHUP
//!   removes every live one and exits with 128 + the signal (130, 143, 129).
//!   A SIGKILL cannot be caught: temporary files are named
//!   `.NAME.unitrace-tmp.HOST.PID.RANDOM`, and creating an output in a folder
//!   removes the ones there whose process (on this host) is gone.
//! * **One run, one commit.** All files created on a thread while an
//!   [`OutputSet`] is open are renamed into place together by
//!   [`OutputSet::commit`], after every one of them was written in full: a
//!   failed last write leaves none of the outputs of the run.
//! * **Permissions and links.** A new file gets `0666` less the umask, as
//!   `File::create` gives; a replaced file keeps its mode (and, for root, its
//!   owner). A destination that is a symbolic link is resolved, and its
//!   target is replaced atomically in the target's folder, as shell
//!   redirection writes the target.
//! * A destination that exists and is not a regular file (`/dev/null`,
//!   `/dev/stdout`, a FIFO from `<(...)`/`mkfifo`) cannot be replaced by a
//!   rename — renaming over `/dev/null` as root would replace the device node
//!   with a regular file — so such a destination is opened and written
//!   directly.
//! * Errors of writing and committing are plain `io::Error`s without the
//!   temporary name: callers name the destination ([`AtomicFile::path`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use crate::error::InputError;

/// The part of every temporary file name that marks it as ours.
pub const TEMP_MARKER: &str = ".unitrace-tmp.";

/// What the signal clean-up does with a registered path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leftover {
    /// A temporary file: removed.
    File,
    /// A temporary folder and what it holds ([`TempDir`]): removed whole.
    Tree,
    /// A folder this run created ([`CreatedDir`]): removed when empty.
    EmptyDir,
}

/// Live temporary files (and folders) of this process, by registration
/// number. Creating, renaming and the signal clean-up all hold this lock,
/// so a signal never races a commit: a file is either renamed into place
/// or removed.
static LIVE_TEMP_FILES: Mutex<BTreeMap<u64, (PathBuf, Leftover)>> = Mutex::new(BTreeMap::new());
static NEXT_TEMP_ID: AtomicU64 = AtomicU64::new(0);
/// Set by servers that handle SIGINT themselves (`Goodbye!`).
static INTERRUPT_LEFT_TO_CALLER: AtomicBool = AtomicBool::new(false);

fn live_temp_files() -> MutexGuard<'static, BTreeMap<u64, (PathBuf, Leftover)>> {
    // A panic while holding the lock leaves the map consistent (every
    // operation on it is a single insert or remove).
    LIVE_TEMP_FILES.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct AtomicFile {
    dest: PathBuf,
    writer: Sink,
    /// The [`OutputSet`] this file is committed with, if any.
    set: Option<Arc<SetInner>>,
}

enum Sink {
    /// A temporary file next to the destination, renamed on commit.
    Temp(TempOutput),
    /// A device or FIFO, written in place.
    Direct(BufWriter<fs::File>),
    /// Committed (only while `commit` consumes the file).
    Done,
}

/// A registered temporary file and where it goes. Dropping it before
/// [`TempOutput::persist`] removes the file.
struct TempOutput {
    writer: BufWriter<fs::File>,
    temp: PathBuf,
    /// The final path, links resolved.
    target: PathBuf,
    id: u64,
    persisted: bool,
}

impl TempOutput {
    /// Flushes the buffer and gives the file the mode (and owner) it
    /// should have once renamed.
    fn prepare(&mut self) -> io::Result<()> {
        self.writer.flush()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            // A replaced file keeps its mode and owner, as `>` keeps them
            // (it truncates in place). New files keep what `open(0666)`
            // gave them: the umask applies.
            if let Ok(old) = fs::metadata(&self.target) {
                let file = self.writer.get_ref();
                let mode = old.mode() & 0o777;
                file.set_permissions(fs::Permissions::from_mode(mode))?;
                if let Ok(mine) = file.metadata() {
                    if mine.uid() != old.uid() || mine.gid() != old.gid() {
                        // Only root (or a member of the group) may; others
                        // get their own file, as any editor would give.
                        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Renames the temporary file over the target. The caller holds the
    /// registry lock.
    fn persist(&mut self, live: &mut BTreeMap<u64, (PathBuf, Leftover)>) -> io::Result<()> {
        fs::rename(&self.temp, &self.target)?;
        live.remove(&self.id);
        self.persisted = true;
        Ok(())
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.persisted {
            let mut live = live_temp_files();
            let _ = fs::remove_file(&self.temp);
            live.remove(&self.id);
        }
    }
}

/// Whether `dest` exists and is something a rename must not replace.
fn is_special_file(dest: &Path) -> bool {
    match fs::metadata(dest) {
        Ok(meta) => !meta.is_file() && !meta.is_dir(),
        Err(_) => false,
    }
}

/// Follows symbolic links from `dest` to the path that is finally written
/// (which may not exist yet: `ln -s new.pdf out.pdf`). Relative link targets
/// are relative to the link's folder.
fn resolve_links(dest: &Path) -> io::Result<PathBuf> {
    let mut path = dest.to_path_buf();
    // Linux's own limit on links followed in one lookup.
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = if target.is_absolute() {
                    target
                } else {
                    parent_dir(&path).join(target)
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The folder of `path`, `.` for a bare file name.
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl AtomicFile {
    /// Starts writing `dest`. The temporary file is created next to the
    /// file finally written (the link target when `dest` is a symbolic
    /// link) so the final rename stays on one file system. Joins the
    /// [`OutputSet`] open on this thread, if any.
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        if dest.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "output path is a directory",
            ));
        }
        let set = CURRENT_SET.with(|current| current.borrow().last().cloned());
        if is_special_file(dest) {
            let file = fs::OpenOptions::new().write(true).open(dest)?;
            return Ok(AtomicFile {
                dest: dest.to_path_buf(),
                writer: Sink::Direct(BufWriter::with_capacity(1 << 16, file)),
                set: None,
            });
        }
        let target = resolve_links(dest)?;
        let dir = parent_dir(&target);
        remove_stale_temp_files_once(&dir);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        let temp = create_temp_file(&dir, &name, target.clone())?;
        if let Some(set) = &set {
            set.open_files.fetch_add(1, Ordering::SeqCst);
        }
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            writer: Sink::Temp(temp),
            set,
        })
    }

    /// The destination as given.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes and renames the temporary file over the destination; inside
    /// an [`OutputSet`], flushes only and leaves the rename to
    /// [`OutputSet::commit`].
    pub fn commit(mut self) -> io::Result<()> {
        let set = self.set.take();
        let sink = std::mem::replace(&mut self.writer, Sink::Done);
        let mut temp = match sink {
            Sink::Temp(t) => t,
            Sink::Direct(mut w) => return w.flush(),
            Sink::Done => return Ok(()),
        };
        let prepared = temp.prepare();
        match set {
            Some(set) => {
                set.open_files.fetch_sub(1, Ordering::SeqCst);
                if prepared.is_err() {
                    set.abandoned.store(true, Ordering::SeqCst);
                }
                prepared?;
                set.ready
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(temp);
                Ok(())
            }
            None => {
                prepared?;
                temp.persist(&mut live_temp_files())
            }
        }
    }

    /// Gives up the file on purpose: the temporary file is removed and an
    /// [`OutputSet`] it belongs to is committed without it (dropping it
    /// instead marks the set as failed). For a run that finds out midway
    /// that what it wrote so far is not the output (analyze's rows before
    /// the first device banner, docs/robustness.md#metric-csvs). A device
    /// or FIFO output keeps what was already written to it.
    pub fn discard(mut self) {
        if let (Some(set), Sink::Temp(_)) = (self.set.take(), &self.writer) {
            set.open_files.fetch_sub(1, Ordering::SeqCst);
        }
        // Dropping the `TempOutput` removes the temporary file.
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (Some(set), Sink::Temp(_)) = (&self.set, &self.writer) {
            // Never committed: the set must not be committed without it.
            set.open_files.fetch_sub(1, Ordering::SeqCst);
            set.abandoned.store(true, Ordering::SeqCst);
        }
    }
}

/// Creates `.NAME.unitrace-tmp.HOST.PID.RANDOM` in `dir` with mode 0666
/// (less the umask) and registers it.
fn create_temp_file(dir: &Path, name: &str, target: PathBuf) -> io::Result<TempOutput> {
    for attempt in 0u32..100 {
        let temp = temp_name(dir, name, attempt);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o666);
        }
        // Created and registered under the lock: a signal in between
        // would otherwise leave it behind.
        let mut live = live_temp_files();
        match options.open(&temp) {
            Ok(file) => {
                let id = NEXT_TEMP_ID.fetch_add(1, Ordering::Relaxed);
                live.insert(id, (temp.clone(), Leftover::File));
                return Ok(TempOutput {
                    writer: BufWriter::with_capacity(1 << 16, file),
                    temp,
                    target,
                    id,
                    persisted: false,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "cannot find a free temporary file name",
    ))
}

/// `.NAME.unitrace-tmp.HOST.PID.RANDOM` in `dir`, NAME cut to keep the
/// whole name within NAME_MAX (255 bytes).
fn temp_name(dir: &Path, name: &str, attempt: u32) -> PathBuf {
    let mut base: String = name.to_string();
    while base.len() > 160 {
        base.pop();
    }
    dir.join(format!(
        ".{base}{TEMP_MARKER}{}.{}.{:08x}",
        host_tag(),
        std::process::id(),
        random_u32(attempt)
    ))
}

/// A folder whose contents are written under a hidden temporary name and
/// then published whole, by one rename, under its final name (a dataset's
/// partition: docs/robustness.md#datasets): a reader sees the old folder,
/// or the new one complete, never one being filled. The temporary name is
/// `.NAME.unitrace-tmp.HOST.PID.RANDOM` beside the destination, registered
/// like a temporary file: removed with its contents when dropped
/// unpublished, on SIGINT/SIGTERM/SIGHUP, and (after a SIGKILL) by the next
/// [`remove_stale_temp_files`] of its folder.
pub struct TempDir {
    path: PathBuf,
    dest: PathBuf,
    id: u64,
    published: bool,
}

impl TempDir {
    /// Creates the temporary folder of `dest` (whose parent must exist).
    pub fn create(dest: &Path) -> io::Result<TempDir> {
        let parent = parent_dir(dest);
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        for attempt in 0u32..100 {
            let path = temp_name(&parent, &name, attempt);
            let mut live = live_temp_files();
            match fs::create_dir(&path) {
                Ok(()) => {
                    let id = NEXT_TEMP_ID.fetch_add(1, Ordering::Relaxed);
                    live.insert(id, (path.clone(), Leftover::Tree));
                    return Ok(TempDir {
                        path,
                        dest: dest.to_path_buf(),
                        id,
                        published: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "cannot find a free temporary folder name",
        ))
    }

    /// Where the contents go until [`TempDir::publish`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the folder to its destination ([`publish_dir`]).
    pub fn publish(mut self) -> io::Result<()> {
        let mut live = live_temp_files();
        replace_dir(&self.path, &self.dest, &mut live)?;
        live.remove(&self.id);
        self.published = true;
        Ok(())
    }
}

/// Renames the folder `src` (complete: a subfolder of a [`TempDir`], say)
/// to `dest`, on the same file system. A `dest` that exists (an earlier,
/// incomplete or outdated version) is first moved aside, to a temporary
/// name in `src`'s folder (so that it is taken apart away from `dest`'s
/// folder, where a reader might list it), and removed after: between the
/// two renames, which an interrupt cannot separate, `dest` is absent for
/// an instant, never incomplete.
pub fn publish_dir(src: &Path, dest: &Path) -> io::Result<()> {
    replace_dir(src, dest, &mut live_temp_files())
}

fn replace_dir(
    src: &Path,
    dest: &Path,
    live: &mut BTreeMap<u64, (PathBuf, Leftover)>,
) -> io::Result<()> {
    let mut old = None;
    if fs::symlink_metadata(dest).is_ok() {
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let aside = temp_name(&parent_dir(src), &format!("{name}.old"), 0);
        fs::rename(dest, &aside)?;
        let id = NEXT_TEMP_ID.fetch_add(1, Ordering::Relaxed);
        live.insert(id, (aside.clone(), Leftover::Tree));
        old = Some((aside, id));
    }
    if let Err(e) = fs::rename(src, dest) {
        if let Some((aside, id)) = old {
            if fs::rename(&aside, dest).is_ok() {
                live.remove(&id);
            }
        }
        return Err(e);
    }
    if let Some((aside, id)) = old {
        // Not followed if it is a link: only the link goes.
        let is_dir = fs::symlink_metadata(&aside).is_ok_and(|m| m.is_dir());
        let _ = if is_dir {
            fs::remove_dir_all(&aside)
        } else {
            fs::remove_file(&aside)
        };
        live.remove(&id);
    }
    Ok(())
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.published {
            let mut live = live_temp_files();
            let _ = fs::remove_dir_all(&self.path);
            live.remove(&self.id);
        }
    }
}

/// A folder a run creates for its outputs: removed again, when still
/// empty, if the run fails (dropped without [`CreatedDir::keep`]) or is
/// interrupted, so that a failed run leaves no empty output folder
/// (docs/robustness.md#datasets). A folder that existed is left alone.
pub struct CreatedDir {
    path: PathBuf,
    /// Registration of a folder this run created.
    id: Option<u64>,
    /// The missing parent this run created for it, removed after it (a
    /// field drops after the folder's own `drop`; the signal handler
    /// removes the newest first).
    parent: Option<Box<CreatedDir>>,
}

impl CreatedDir {
    /// Creates `path` (and missing parents, each removed as it is) unless
    /// it exists.
    pub fn create_all(path: &Path) -> io::Result<CreatedDir> {
        let mut parent = None;
        loop {
            let mut live = live_temp_files();
            let id = match fs::create_dir(path) {
                Ok(()) => {
                    let id = NEXT_TEMP_ID.fetch_add(1, Ordering::Relaxed);
                    live.insert(id, (path.to_path_buf(), Leftover::EmptyDir));
                    Some(id)
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => None,
                Err(e) if e.kind() == io::ErrorKind::NotFound && parent.is_none() => {
                    drop(live);
                    parent = Some(Box::new(CreatedDir::create_all(&parent_dir(path))?));
                    continue;
                }
                Err(e) => return Err(e),
            };
            return Ok(CreatedDir {
                path: path.to_path_buf(),
                id,
                parent,
            });
        }
    }

    /// The run succeeded: the folder stays, empty or not, and the parents
    /// it created.
    pub fn keep(mut self) {
        if let Some(id) = self.id.take() {
            live_temp_files().remove(&id);
        }
        if let Some(p) = self.parent.take() {
            p.keep();
        }
    }
}

impl Drop for CreatedDir {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let mut live = live_temp_files();
            let _ = fs::remove_dir(&self.path);
            live.remove(&id);
        }
    }
}

fn random_u32(salt: u32) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded per process from the OS; the counter keeps two
    // files of one process apart.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(salt);
    h.finish() as u32
}

/// This host's name reduced to `[A-Za-z0-9-]` (at most 32 bytes): a shared
/// folder may be written from several hosts, and a process id says nothing
/// about another host's processes.
fn host_tag() -> String {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let raw = fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| fs::read_to_string("/etc/hostname"))
            .unwrap_or_default();
        let tag: String = raw
            .trim()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(32)
            .collect();
        if tag.is_empty() {
            "host".to_string()
        } else {
            tag
        }
    })
    .clone()
}

/// Removes, once per folder and process, the temporary files left in `dir`
/// by runs on this host that were killed (SIGKILL, power loss).
fn remove_stale_temp_files_once(dir: &Path) {
    static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !swept.get_or_insert_with(HashSet::new).insert(key) {
            return;
        }
    }
    let _ = remove_stale_temp_files(dir);
}

/// Removes the temporary files (and temporary folders, [`TempDir`]) in
/// `dir` whose process, on this host, no longer runs; returns the paths
/// removed.
pub fn remove_stale_temp_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let host = host_tag();
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = stale_candidate_pid(name, &host) else {
            continue;
        };
        if pid != std::process::id() && !process_exists(pid) {
            let path = entry.path();
            // Not followed if it is a link: only what the name says is ours.
            let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
            let gone = if is_dir {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            if gone.is_ok() {
                removed.push(path);
            }
        }
    }
    Ok(removed)
}

/// The pid in `.NAME.unitrace-tmp.HOST.PID.RANDOM` when HOST is `host`.
fn stale_candidate_pid(name: &str, host: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    let at = name.rfind(TEMP_MARKER)?;
    let mut parts = name[at + TEMP_MARKER.len()..].split('.');
    let (h, pid, random) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h != host || random.len() != 8 {
        return None;
    }
    pid.parse().ok()
}

fn process_exists(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 only checks for existence.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        // EPERM: it exists but belongs to someone else.
        io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Installs the interrupt clean-up (once per process): on SIGINT, SIGTERM
/// or SIGHUP every live temporary file is removed and the process exits with
/// 128 + the signal number. A signal the process inherited as ignored
/// (`nohup`, a background job of a script) stays ignored.
pub fn remove_temp_files_on_signals() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
                .into_iter()
                .filter(|&sig| !signal_is_ignored(sig))
                .collect();
            let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("unitrace-signals".to_string())
                .spawn(move || {
                    for sig in signals.forever() {
                        if sig == SIGINT && INTERRUPT_LEFT_TO_CALLER.load(Ordering::SeqCst) {
                            continue;
                        }
                        let live = live_temp_files();
                        // Newest first: a run's temporary folders go
                        // before the folder it created for them.
                        for (path, leftover) in live.values().rev() {
                            let _ = match leftover {
                                Leftover::File => fs::remove_file(path),
                                Leftover::Tree => fs::remove_dir_all(path),
                                Leftover::EmptyDir => fs::remove_dir(path),
                            };
                        }
                        // Exits with the lock held: no commit or new
                        // temporary file can follow the removal.
                        std::process::exit(128 + sig);
                    }
                });
        }
    });
}

/// For servers that stop on Ctrl-C themselves (and say `Goodbye!`): SIGINT
/// no longer ends the process from [`remove_temp_files_on_signals`];
/// SIGTERM and SIGHUP still do.
pub fn leave_interrupt_to_caller() {
    INTERRUPT_LEFT_TO_CALLER.store(true, Ordering::SeqCst);
}

#[cfg(unix)]
fn signal_is_ignored(sig: i32) -> bool {
    // SAFETY: a query only (null new action), into a zeroed sigaction.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

thread_local! {
    /// The open [`OutputSet`]s of this thread, innermost last.
    static CURRENT_SET: RefCell<Vec<Arc<SetInner>>> = const { RefCell::new(Vec::new()) };
}

#[derive(Default)]
struct SetInner {
    /// Written in full, waiting for the rename.
    ready: Mutex<Vec<TempOutput>>,
    /// Created and neither committed nor dropped yet.
    open_files: std::sync::atomic::AtomicUsize,
    /// A member was dropped without commit (its run failed).
    abandoned: AtomicBool,
}

/// The outputs of one run, committed together: every [`AtomicFile`]
/// created on this thread while the set is open joins it; its `commit`
/// only flushes, and [`OutputSet::commit`] renames them all once every
/// write succeeded. Dropping the set uncommitted removes them all.
pub struct OutputSet {
    inner: Arc<SetInner>,
}

impl OutputSet {
    /// Opens a set on the current thread.
    pub fn begin() -> OutputSet {
        let inner = Arc::new(SetInner::default());
        CURRENT_SET.with(|current| current.borrow_mut().push(inner.clone()));
        OutputSet { inner }
    }

    /// Renames every finished member into place, in the order they were
    /// committed. Fails (and renames nothing) when a member is still open
    /// or was dropped unfinished. The error names the destination.
    pub fn commit(self) -> io::Result<()> {
        self.leave();
        if self.inner.open_files.load(Ordering::SeqCst) > 0
            || self.inner.abandoned.load(Ordering::SeqCst)
        {
            return Err(io::Error::other(
                "an output of the run was not finished; none was written",
            ));
        }
        let mut ready =
            std::mem::take(&mut *self.inner.ready.lock().unwrap_or_else(|e| e.into_inner()));
        // One lock over all renames: an interrupt sees all or none.
        let mut live = live_temp_files();
        for temp in ready.iter_mut() {
            temp.persist(&mut live)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", temp.target.display())))?;
        }
        drop(live);
        Ok(())
    }

    fn leave(&self) {
        CURRENT_SET.with(|current| {
            let mut current = current.borrow_mut();
            if let Some(at) = current.iter().rposition(|s| Arc::ptr_eq(s, &self.inner)) {
                current.remove(at);
            }
        });
    }
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        self.leave();
        // Members still waiting are removed by their own Drop.
        self.inner
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.writer {
            Sink::Temp(t) => t.writer.write(buf),
            Sink::Direct(w) => w.write(buf),
            Sink::Done => Ok(0),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.writer {
            Sink::Temp(t) => t.writer.write_all(buf),
            Sink::Direct(w) => w.write_all(buf),
            Sink::Done => Err(io::Error::other("output already committed")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.writer {
            Sink::Temp(t) => t.writer.flush(),
            Sink::Direct(w) => w.flush(),
            Sink::Done => Ok(()),
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

/// Refuses an output path that names one of the inputs (writing it would
/// destroy the input). Compares file identity when both exist, the
/// normalised path otherwise.
pub fn ensure_not_input(output: &Path, inputs: &[&Path]) -> Result<(), InputError> {
    for input in inputs {
        if same_file(output, input) {
            return Err(InputError::at_file(
                output,
                format!(
                    "output path is the input file {}; refusing to overwrite it",
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// What a tool is about to write, for [`ensure_replaceable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// A timeline (mergetrace's merged trace).
    Trace,
    /// A CSV or Parquet table.
    Table,
    /// A JSON report or partial.
    Report,
    /// An HTML page.
    Page,
}

impl OutputKind {
    fn noun(self) -> &'static str {
        match self {
            OutputKind::Trace => "a merged trace",
            OutputKind::Table => "a table",
            OutputKind::Report => "a report",
            OutputKind::Page => "a page",
        }
    }
}

/// Refuses an output path that already holds unitrace data of another
/// kind — a trace where a table goes, a metric CSV where a stats table
/// goes (docs/robustness.md#foreign-outputs): that file is someone's input
/// kept under a name that looks like an output, and replacing it loses it.
/// A file of the same kind (a trace replaced by a merged trace, an earlier
/// report) or that is not unitrace data is replaced as usual.
pub fn ensure_replaceable(output: &Path, kind: OutputKind) -> Result<(), InputError> {
    use std::io::Read;
    let Ok(meta) = fs::metadata(output) else {
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    let mut head = Vec::new();
    let read = fs::File::open(output).and_then(|f| f.take(64 << 10).read_to_end(&mut head));
    if read.is_err() {
        return Ok(());
    }
    let Some(holds) = unitrace_data(&head) else {
        return Ok(());
    };
    if kind == OutputKind::Trace && holds.ends_with("trace") {
        return Ok(());
    }
    Err(InputError::at_file(
        output,
        format!(
            "holds {holds}; refusing to replace it with {} (remove it first or choose another name)",
            kind.noun()
        ),
    ))
}

/// What unitrace data a file's first bytes are, if any.
fn unitrace_data(head: &[u8]) -> Option<&'static str> {
    use crate::timeline::detect::{sniff, Sniffed};
    match sniff(head) {
        Sniffed::Json(_) => {
            memchr::memmem::find(head, b"\"traceEvents\"").map(|_| "a Chrome/Perfetto trace")
        }
        Sniffed::Pftrace => Some("a .pftrace trace"),
        Sniffed::Gzip => Some("gzip data, e.g. a compressed trace"),
        Sniffed::Other(what) => [
            "a metric CSV (unitrace -k/-q)",
            "a stall-sampling CSV (unitrace --stall-sampling)",
            "a tar archive",
            "a unitrace text report",
        ]
        .into_iter()
        .find(|w| *w == what),
        Sniffed::Empty => None,
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(ca), Ok(cb)) => ca == cb,
        _ => a == b,
    }
}

/// Whether two output paths name the same file (e.g. two outputs of one
/// run), whether or not they exist yet: existing paths are compared after
/// resolving links; otherwise the canonical folders and the file names are.
pub fn same_output_path(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (fs::canonicalize(a), fs::canonicalize(b)) {
        return x == y;
    }
    let dir = |p: &Path| -> Option<PathBuf> {
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        fs::canonicalize(parent).ok()
    };
    match (dir(a), dir(b)) {
        (Some(da), Some(db)) => da == db && a.file_name() == b.file_name(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_output_path_needs_no_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("out.pdf");
        let b = dir.path().join(".").join("out.pdf");
        assert!(same_output_path(&a, &b));
        assert!(!same_output_path(&a, &dir.path().join("data.csv")));
        fs::write(&a, b"x").unwrap();
        assert!(same_output_path(&a, &b));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.pdf");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert!(same_output_path(&a, &link));
        }
    }

    #[test]
    fn commit_renames_and_drop_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.txt");
        {
            let mut f = AtomicFile::create(&dest).unwrap();
            f.write_all(b"partial").unwrap();
            // dropped without commit
        }
        assert!(!dest.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&dest, b"done").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"done");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// Writing to `/dev/null` must not replace the device node (a rename
    /// over it, as root, would turn it into a regular file).
    #[test]
    fn special_files_are_written_in_place() {
        let null = Path::new("/dev/null");
        if !is_special_file(null) {
            return; // no /dev/null on this system: nothing to check
        }
        write_atomic(null, b"discarded").unwrap();
        assert!(is_special_file(null), "/dev/null was replaced");
        let mut f = AtomicFile::create(null).unwrap();
        f.write_all(b"x").unwrap();
        drop(f); // an uncommitted direct write leaves the device alone too
        assert!(is_special_file(null));
    }

    #[test]
    fn refuses_output_equal_to_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        fs::write(&input, b"{}").unwrap();
        let alias = dir.path().join(".").join("in.json");
        assert!(ensure_not_input(&alias, &[&input]).is_err());
        assert!(ensure_not_input(&dir.path().join("out.json"), &[&input]).is_ok());
    }

    /// Names every file in `dir` (sorted).
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temp_names_carry_host_and_pid() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.json");
        let f = AtomicFile::create(&dest).unwrap();
        let listed = names(dir.path());
        assert_eq!(listed.len(), 1);
        let pid = stale_candidate_pid(&listed[0], &host_tag());
        assert_eq!(pid, Some(std::process::id()), "{listed:?}");
        assert!(listed[0].starts_with(".out.json.unitrace-tmp."));
        drop(f);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that cannot be running: beyond Linux's pid_max limit.
        let dead = format!(".x.pdf{TEMP_MARKER}{}.{}.0123abcd", host_tag(), 1u32 << 30);
        let alive = format!(
            ".y.pdf{TEMP_MARKER}{}.{}.0123abcd",
            host_tag(),
            std::process::id()
        );
        let other_host = format!(".z.pdf{TEMP_MARKER}elsewhere.{}.0123abcd", 1u32 << 30);
        for n in [&dead, &alive, &other_host, &"x.pdf".to_string()] {
            fs::write(dir.path().join(n), b"x").unwrap();
        }
        let removed = remove_stale_temp_files(dir.path()).unwrap();
        assert_eq!(removed, vec![dir.path().join(&dead)]);
        let mut want = vec![alive.clone(), other_host.clone(), "x.pdf".to_string()];
        want.sort();
        assert_eq!(names(dir.path()), want);
    }

    #[cfg(unix)]
    #[test]
    fn replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.csv");
        fs::write(&dest, b"old").unwrap();
        fs::set_permissions(&dest, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&dest, b"new").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"new");
        let mode = fs::metadata(&dest).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_kept_and_its_target_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("real");
        fs::create_dir(&sub).unwrap();
        let target = sub.join("data.csv");
        fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("real/data.csv", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        // A dangling link: its target is created, as `>` creates it.
        let dangling = dir.path().join("dangling.csv");
        std::os::unix::fs::symlink("real/new.csv", &dangling).unwrap();
        write_atomic(&dangling, b"made").unwrap();
        assert_eq!(fs::read(sub.join("new.csv")).unwrap(), b"made");
        assert_eq!(names(&sub), vec!["data.csv", "new.csv"]);
    }

    #[test]
    fn a_discarded_file_leaves_nothing_and_its_set_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.pdf"), dir.path().join("b.csv"));
        let set = OutputSet::begin();
        let mut f = AtomicFile::create(&a).unwrap();
        f.write_all(b"drawn from rows that belong to no device")
            .unwrap();
        f.discard();
        assert!(names(dir.path()).is_empty(), "temporary file removed");
        // Written again from scratch, as analyze does after the discard.
        write_atomic(&a, b"A").unwrap();
        write_atomic(&b, b"B").unwrap();
        set.commit().unwrap();
        assert_eq!(names(dir.path()), vec!["a.pdf", "b.csv"]);
        assert_eq!(fs::read(&a).unwrap(), b"A");
    }

    #[test]
    fn an_output_set_renames_all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.pdf"), dir.path().join("b.csv"));
        {
            let set = OutputSet::begin();
            write_atomic(&a, b"A").unwrap();
            assert!(!a.exists(), "renamed before the set commits");
            let mut f = AtomicFile::create(&b).unwrap();
            f.write_all(b"B").unwrap();
            drop(f); // the second output failed
            assert!(set.commit().is_err());
        }
        assert!(names(dir.path()).is_empty());
        let set = OutputSet::begin();
        write_atomic(&a, b"A").unwrap();
        write_atomic(&b, b"B").unwrap();
        assert!(!a.exists() && !b.exists());
        set.commit().unwrap();
        assert_eq!(names(dir.path()), vec!["a.pdf", "b.csv"]);
        // Outside the set, commits rename at once again.
        write_atomic(&dir.path().join("c"), b"C").unwrap();
        assert!(dir.path().join("c").exists());
        // A set dropped uncommitted leaves nothing.
        {
            let _set = OutputSet::begin();
            write_atomic(&dir.path().join("d"), b"D").unwrap();
        }
        assert!(!dir.path().join("d").exists());
        assert_eq!(names(dir.path()).len(), 3);
    }
}
