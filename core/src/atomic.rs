//! Every output file of every tool is written through [`AtomicFile`]: the
//! bytes go to a temporary file in the destination folder, which is renamed
//! over the destination only on [`AtomicFile::commit`]. A run that fails (or
//! panics) therefore never leaves a partial output file behind; dropping an
//! uncommitted `AtomicFile` removes the temporary file.
//!
//! A destination that exists and is not a regular file (`/dev/null`,
//! `/dev/stdout`, a FIFO from `<(...)`/`mkfifo`) cannot be replaced by a
//! rename — renaming over `/dev/null` as root would replace the device node
//! with a regular file — so such a destination is opened and written
//! directly.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::InputError;

pub struct AtomicFile {
    dest: PathBuf,
    writer: Sink,
}

enum Sink {
    /// A temporary file next to the destination, renamed on commit.
    Temp(BufWriter<tempfile::NamedTempFile>),
    /// A device or FIFO, written in place.
    Direct(BufWriter<fs::File>),
}

/// Whether `dest` exists and is something a rename must not replace.
fn is_special_file(dest: &Path) -> bool {
    match fs::metadata(dest) {
        Ok(meta) => !meta.is_file() && !meta.is_dir(),
        Err(_) => false,
    }
}

impl AtomicFile {
    /// Starts writing `dest`. The temporary file is created next to it so the
    /// final rename stays on one file system.
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if dest.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "output path is a directory",
            ));
        }
        if is_special_file(dest) {
            let file = fs::OpenOptions::new().write(true).open(dest)?;
            return Ok(AtomicFile {
                dest: dest.to_path_buf(),
                writer: Sink::Direct(BufWriter::with_capacity(1 << 16, file)),
            });
        }
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            writer: Sink::Temp(BufWriter::with_capacity(1 << 16, tmp)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes and renames the temporary file over the destination.
    pub fn commit(self) -> io::Result<()> {
        let tmp = match self.writer {
            Sink::Temp(w) => w.into_inner().map_err(|e| e.into_error())?,
            Sink::Direct(mut w) => return w.flush(),
        };
        // Keep the permissions a plain `File::create` would give (tempfile
        // creates 0600 files).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = 0o666 & !current_umask();
            let _ = fs::set_permissions(tmp.path(), fs::Permissions::from_mode(mode));
        }
        tmp.persist(&self.dest).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(unix)]
fn current_umask() -> u32 {
    // There is no way to read the umask without setting it; 022 is what
    // nearly every login shell uses and only affects the permission bits.
    0o022
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.writer {
            Sink::Temp(w) => w.write(buf),
            Sink::Direct(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.writer {
            Sink::Temp(w) => w.write_all(buf),
            Sink::Direct(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.writer {
            Sink::Temp(w) => w.flush(),
            Sink::Direct(w) => w.flush(),
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
}
