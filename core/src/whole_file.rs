//! Reading a small input file whole, with a size cap: the formats read this
//! way (compiled category schemas, INI category rules, `analyze -f` option
//! files, device configs, PEM files) are a few KB, and
//! without a cap `--schema /dev/zero` reads until memory runs out. The caps
//! are documented in docs/formats.md#category-json and #category-ini.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::InputError;

/// Largest compiled category schema (JSON) `summary` and `mergetrace --schema`
/// read: the shipped ones are under 10 KB.
pub const MAX_SCHEMA_BYTES: u64 = 16 << 20;

/// Largest INI file of category rules `categorize` reads.
pub const MAX_INI_BYTES: u64 = 16 << 20;

/// Largest `analyze`/`uniview -f` option file, device config (roofline) or
/// PEM certificate/key (the chart servers) read (docs/robustness.md#bounds).
pub const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;

/// The bytes of `path`, or an error naming it when it is missing, unreadable
/// or larger than `max_bytes` (`larger than N MiB: not a WHAT`). At most
/// `max_bytes + 1` bytes are read, whatever the file (`/dev/zero`, a FIFO).
pub fn read_capped(path: &Path, max_bytes: u64, what: &str) -> Result<Vec<u8>, InputError> {
    let file = File::open(path).map_err(|e| InputError::io(path, &e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(InputError::at_file(path, "is a directory"));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::io(path, &e))?;
    if bytes.len() as u64 > max_bytes {
        let cap = if max_bytes >= 1 << 20 && max_bytes & ((1 << 20) - 1) == 0 {
            format!("{} MiB", max_bytes >> 20)
        } else {
            format!("{max_bytes} bytes")
        };
        return Err(InputError::at_file(
            path,
            format!("larger than {cap}: not a {what}"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_the_bytes_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        std::fs::write(&p, vec![b' '; (1 << 20) + 1]).unwrap();
        let e = read_capped(&p, 1 << 20, "compiled category schema").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: larger than 1 MiB: not a compiled category schema",
                p.display()
            )
        );
        std::fs::write(&p, vec![b' '; 1 << 20]).unwrap();
        assert_eq!(read_capped(&p, 1 << 20, "x").unwrap().len(), 1 << 20);
        let zero = read_capped(Path::new("/dev/zero"), 1 << 10, "x").unwrap_err();
        assert!(
            zero.to_string()
                .ends_with(": larger than 1024 bytes: not a x"),
            "{zero}"
        );
        let missing = read_capped(&dir.path().join("no"), 1, "x").unwrap_err();
        assert!(missing.to_string().ends_with(": no such file"), "{missing}");
    }
}
