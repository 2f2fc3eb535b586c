//! The one walk of a folder that tools read inputs from: a `--result-dir`
//! tree ([`crate::result_dir`]), a folder of traces given to `compare`, a
//! folder read like a summary tarball ([`crate::summary_tarball`]). Only
//! regular files that can be opened come back as inputs; everything else a
//! tool would have read is skipped with one [`Skipped`] entry each, which the
//! tool prints as one warning (docs/robustness.md#walked-folders).
//!
//! The rules:
//! * An entry is looked at only when the caller's `is_input` says its name
//!   makes it an input (`chrome_trace.json`, `metrics/metrics_0.csv`, ...);
//!   other entries are ignored as before, whatever they are.
//! * A FIFO, a socket or a device with an input's name is skipped: it is
//!   never opened, so a tool cannot block on a pipe nobody writes to. A
//!   regular file is opened once here with `O_NONBLOCK` (a file replaced by
//!   a FIFO in between cannot block either) and skipped when that fails
//!   (permissions, a link to nothing).
//! * Symbolic links are followed. Every folder is walked once, found by
//!   (device, inode): the real folders of the tree first, then the links
//!   to folders in path order, so a folder reached both ways keeps its real
//!   path, and a link to a folder already walked (a loop such as
//!   `rank_0.a.1/up -> ..`, or a second name of a folder) is skipped with a
//!   warning. A link that leads out of the tree is followed and named in a
//!   warning, so a reader of the output knows that files from elsewhere were
//!   read.
//!
//! What a link-free tree gives is unchanged; paths are those below the root
//! as given (through links, not their targets), so a `rank_<r>.` folder
//! name on the way still decides the rank.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// An entry of the tree a tool would have read but does not, or a link it
/// follows out of the tree: displayed `PATH: problem` (the problem says
/// whether the entry was skipped or followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub problem: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

/// What a walk found.
#[derive(Debug, Default, Clone)]
pub struct Walk {
    /// Regular files with an input's name that could be opened, in path
    /// order (byte order of the paths as found).
    pub files: Vec<PathBuf>,
    /// One entry per warning, in path order.
    pub skipped: Vec<Skipped>,
}

/// How deep a walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The folder's own entries only.
    Flat,
    /// Every folder below it.
    Tree,
}

/// Walks `root` (a folder) by the rules of the module. `Err` only when
/// `root` itself cannot be listed.
pub fn walk(root: &Path, depth: Depth, is_input: &dyn Fn(&Path) -> bool) -> io::Result<Walk> {
    let mut walker = Walker {
        real_root: fs::canonicalize(root)?,
        is_input,
        seen: HashMap::new(),
        out: Walk::default(),
    };
    let root_meta = fs::metadata(root)?;
    let _first = walker.first_visit(root, &root_meta);
    // The root must be listable: that is an error, not a warning.
    let mut entries = list(root)?;
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut links: Vec<PathBuf> = Vec::new();
    loop {
        let mut below = Vec::new();
        for entry in entries.drain(..) {
            walker.entry(entry, depth, &mut below, &mut links);
        }
        // Reversed, so that folders are walked in name order.
        folders.extend(below.into_iter().rev());
        // Depth first over the real folders; the links once none is left.
        if let Some(folder) = folders.pop() {
            match list(&folder) {
                Ok(found) => entries = found,
                Err(e) => walker.skip(&folder, format!("cannot be read: {e}; skipped")),
            }
            continue;
        }
        if links.is_empty() {
            break;
        }
        links.sort();
        let followed: Vec<PathBuf> = std::mem::take(&mut links)
            .into_iter()
            .filter_map(|link| walker.follow_folder_link(link))
            .collect();
        // Reversed, so that the first link is walked first.
        folders.extend(followed.into_iter().rev());
    }
    walker.out.files.sort();
    walker.out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walker.out)
}

/// The entries of a folder in byte order of their names.
fn list(folder: &Path) -> io::Result<Vec<fs::DirEntry>> {
    let mut entries = fs::read_dir(folder)?.collect::<io::Result<Vec<_>>>()?;
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

struct Walker<'a> {
    real_root: PathBuf,
    is_input: &'a dyn Fn(&Path) -> bool,
    /// Folders walked, by (device, inode), with the path they were walked by.
    seen: HashMap<(u64, u64), PathBuf>,
    out: Walk,
}

impl Walker<'_> {
    fn skip(&mut self, path: &Path, problem: String) {
        self.out.skipped.push(Skipped {
            path: path.to_path_buf(),
            problem,
        });
    }

    /// Marks a folder as walked; `Err` with the path it was walked by.
    fn first_visit(&mut self, path: &Path, meta: &Metadata) -> Result<(), PathBuf> {
        match self.seen.entry(file_id(path, meta)) {
            std::collections::hash_map::Entry::Occupied(e) => Err(e.get().clone()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(path.to_path_buf());
                Ok(())
            }
        }
    }

    fn entry(
        &mut self,
        entry: fs::DirEntry,
        depth: Depth,
        folders: &mut Vec<PathBuf>,
        links: &mut Vec<PathBuf>,
    ) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            if (self.is_input)(&path) {
                self.skip(&path, "cannot be read: its type is unknown; skipped".into());
            }
            return;
        };
        if kind.is_dir() {
            if depth == Depth::Tree {
                match fs::symlink_metadata(&path) {
                    Ok(meta) => match self.first_visit(&path, &meta) {
                        Ok(()) => folders.push(path),
                        Err(first) => self.skip(
                            &path,
                            format!("the folder {} again; skipped", first.display()),
                        ),
                    },
                    Err(e) => self.skip(&path, format!("cannot be read: {e}; skipped")),
                }
            }
            return;
        }
        if kind.is_symlink() {
            match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    if depth == Depth::Tree {
                        links.push(path);
                    }
                }
                Ok(meta) => {
                    if (self.is_input)(&path) {
                        self.file(&path, &meta, true);
                    }
                }
                Err(e) => {
                    if (self.is_input)(&path) {
                        self.skip(
                            &path,
                            format!("a link that cannot be followed ({e}); skipped"),
                        );
                    }
                }
            }
            return;
        }
        if (self.is_input)(&path) {
            match entry.metadata() {
                Ok(meta) => self.file(&path, &meta, false),
                Err(e) => self.skip(&path, format!("cannot be read: {e}; skipped")),
            }
        }
    }

    /// An entry with an input's name (`meta` of the link's target for a link).
    fn file(&mut self, path: &Path, meta: &Metadata, linked: bool) {
        let opened = if meta.is_file() {
            open_regular(path)
        } else {
            Err(format!("{}, not a regular file", kind_name(meta)))
        };
        if let Err(problem) = opened {
            self.skip(path, format!("{problem}; skipped"));
            return;
        }
        if linked {
            self.note_outside(path);
        }
        self.out.files.push(path.to_path_buf());
    }

    /// A link to a folder, followed unless that folder was walked already.
    fn follow_folder_link(&mut self, link: PathBuf) -> Option<PathBuf> {
        let meta = match fs::metadata(&link) {
            Ok(meta) if meta.is_dir() => meta,
            // Changed since it was listed.
            Ok(_) => return None,
            Err(e) => {
                self.skip(
                    &link,
                    format!("a link that cannot be followed ({e}); skipped"),
                );
                return None;
            }
        };
        if let Err(first) = self.first_visit(&link, &meta) {
            self.skip(
                &link,
                format!(
                    "a link to the folder {}, walked already (a loop or a second name); skipped",
                    first.display()
                ),
            );
            return None;
        }
        self.note_outside(&link);
        Some(link)
    }

    /// Warns when a followed link leads out of the tree.
    fn note_outside(&mut self, link: &Path) {
        if let Ok(target) = fs::canonicalize(link) {
            if !target.starts_with(&self.real_root) {
                let problem = format!("a link out of the tree to {}; followed", target.display());
                self.skip(link, problem);
            }
        }
    }
}

fn kind_name(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_char_device() {
            return "a character device";
        }
    }
    if meta.is_dir() {
        return "a folder";
    }
    "a special file"
}

/// Opens `path` for reading when it is a regular file, without ever
/// waiting: the type is checked before opening (a device is never opened)
/// and again on the open handle, which is opened with `O_NONBLOCK` (a file
/// replaced by a FIFO in between cannot block the tool). `Err` is the
/// problem in the walk's words: `a FIFO, not a regular file`, `cannot be
/// read: Permission denied (os error 13)`.
pub fn open_regular(path: &Path) -> Result<fs::File, String> {
    let meta = fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{}, not a regular file", kind_name(&meta)));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot be read: {e}"))?;
    match file.metadata() {
        Ok(meta) if meta.is_file() => Ok(file),
        Ok(meta) => Err(format!("{}, not a regular file", kind_name(&meta))),
        Err(e) => Err(format!("cannot be read: {e}")),
    }
}

/// (device, inode) of a folder; elsewhere than unix, its canonical path's
/// hash stands in.
fn file_id(path: &Path, meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        let _ = path;
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let _ = meta;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        fs::canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .hash(&mut h);
        (0, h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &Path) -> bool {
        true
    }

    fn rel(root: &Path, paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    fn problems(root: &Path, w: &Walk) -> Vec<String> {
        w.skipped
            .iter()
            .map(|s| {
                let p = s.path.strip_prefix(root).unwrap().display().to_string();
                format!("{p}: {}", s.problem)
            })
            .collect()
    }

    #[cfg(unix)]
    #[test]
    fn fifos_sockets_and_devices_are_skipped_never_opened() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir(r.join("d")).unwrap();
        fs::write(r.join("d/a.txt"), b"a").unwrap();
        let fifo = std::ffi::CString::new(r.join("d/fifo.txt").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let _socket = std::os::unix::net::UnixListener::bind(r.join("d/sock.txt")).unwrap();
        std::os::unix::fs::symlink("/dev/null", r.join("d/null.txt")).unwrap();
        let w = walk(r, Depth::Tree, &all).unwrap();
        assert_eq!(rel(r, &w.files), ["d/a.txt"]);
        assert_eq!(
            problems(r, &w),
            [
                "d/fifo.txt: a FIFO, not a regular file; skipped",
                "d/null.txt: a character device, not a regular file; skipped",
                "d/sock.txt: a socket, not a regular file; skipped",
            ]
        );
        // Names that are no input are not looked at.
        let only_a = |p: &Path| p.file_name().is_some_and(|n| n == "a.txt");
        let w = walk(r, Depth::Tree, &only_a).unwrap();
        assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    }

    #[cfg(unix)]
    #[test]
    fn loops_are_walked_once_and_links_out_of_the_tree_are_named() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("o.txt"), b"o").unwrap();
        let r = t.path().join("root");
        fs::create_dir_all(r.join("rank_0.a.1/sub")).unwrap();
        fs::write(r.join("rank_0.a.1/sub/x.txt"), b"x").unwrap();
        // A loop, a second name of a folder and a link out of the tree.
        std::os::unix::fs::symlink("..", r.join("rank_0.a.1/sub/up")).unwrap();
        std::os::unix::fs::symlink("rank_0.a.1", r.join("again")).unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("rank_1.a.2")).unwrap();
        std::os::unix::fs::symlink("nowhere", r.join("dangling.txt")).unwrap();
        let w = walk(&r, Depth::Tree, &all).unwrap();
        assert_eq!(
            rel(&r, &w.files),
            ["rank_0.a.1/sub/x.txt", "rank_1.a.2/o.txt"]
        );
        let real_outside = fs::canonicalize(outside.path()).unwrap();
        assert_eq!(
            problems(&r, &w),
            [
                format!("again: a link to the folder {}, walked already (a loop or a second name); skipped", r.join("rank_0.a.1").display()),
                "dangling.txt: a link that cannot be followed (No such file or directory (os error 2)); skipped".to_string(),
                format!("rank_0.a.1/sub/up: a link to the folder {}, walked already (a loop or a second name); skipped", r.join("rank_0.a.1").display()),
                format!("rank_1.a.2: a link out of the tree to {}; followed", real_outside.display()),
            ]
        );
        // Flat: the root's own files only, links to folders not followed.
        let w = walk(&r, Depth::Flat, &all).unwrap();
        assert!(w.files.is_empty());
        assert_eq!(w.skipped.len(), 1, "{:?}", w.skipped);
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_file_is_skipped_unless_root() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join("locked.txt"), b"x").unwrap();
        fs::set_permissions(r.join("locked.txt"), fs::Permissions::from_mode(0o000)).unwrap();
        let w = walk(r, Depth::Flat, &all).unwrap();
        // Root reads any file: then the file is an input like the others
        // (tests/tests/walked_folders.rs runs the tools as another user).
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(w.files.len(), 1);
        } else {
            assert_eq!(
                problems(r, &w),
                ["locked.txt: cannot be read: Permission denied (os error 13); skipped"]
            );
        }
    }
}
