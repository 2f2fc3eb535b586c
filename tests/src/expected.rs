//! Expected-output files and the `BLESS=1` switch (tests/README.md,
//! "Expected files").
//!
//! * `CASE.orig.EXT`: what the original script wrote. Made only by the
//!   regeneration scripts next to them, never edited, never blessed.
//! * `CASE.fixed.EXT`: what our tool must write where the original is wrong
//!   (the folder's README says why, case by case), beside `CASE.orig.EXT`
//!   when the original wrote anything at all.
//!
//! A test reads an expected file through [`file`] (or [`text`]) with the
//! output it got: normally that returns the file's bytes, for the test to
//! compare however it compares. With `BLESS=1` in the environment a
//! `.fixed.` file that differs from the output is first rewritten with it
//! (atomically), so the comparison passes and `git diff` shows what changed;
//! `.orig.` files are never written, so a difference from the original
//! still fails.

use std::fs;
use std::path::Path;

/// `BLESS=1` (or any value but `0` and empty) is set.
pub fn blessing() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The file holds the original script's output (its name has an `orig`
/// component: `CASE.orig.EXT`).
pub fn is_original(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.split('.').skip(1).any(|part| part == "orig"))
}

/// The expected bytes for `actual` from `path`; under `BLESS=1` a file that
/// is not an original's output is first rewritten with `actual` when it
/// differs.
pub fn file(path: &Path, actual: &[u8]) -> Vec<u8> {
    file_unless_same(path, actual, |a, b| a == b)
}

/// [`file`] for a test that compares up to an equivalence (e.g. JSON values,
/// not bytes): under `BLESS=1` the file is only rewritten when `same(actual,
/// expected)` is false, so blessing never churns a file the test accepts.
pub fn file_unless_same(
    path: &Path,
    actual: &[u8],
    same: impl Fn(&[u8], &[u8]) -> bool,
) -> Vec<u8> {
    if blessing() && !is_original(path) {
        let current = fs::read(path).ok();
        if !current.is_some_and(|c| same(actual, &c)) {
            write_atomically(path, actual);
            eprintln!("BLESS: wrote {}", path.display());
        }
    }
    fs::read(path).unwrap_or_else(|e| panic!("expected file {}: {e}", path.display()))
}

/// [`file`] for text outputs.
pub fn text(path: &Path, actual: &str) -> String {
    String::from_utf8(file(path, actual.as_bytes()))
        .unwrap_or_else(|e| panic!("expected file {} is not UTF-8: {e}", path.display()))
}

/// Tests of one binary run in parallel: a reader must never see a half
/// written file.
fn write_atomically(path: &Path, bytes: &[u8]) {
    let dir = path.parent().expect("expected files live in a folder");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .unwrap_or_else(|e| panic!("BLESS: cannot write in {}: {e}", dir.display()));
    std::io::Write::write_all(&mut tmp, bytes)
        .unwrap_or_else(|e| panic!("BLESS: cannot write {}: {e}", path.display()));
    tmp.persist(path)
        .unwrap_or_else(|e| panic!("BLESS: cannot write {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orig_files_are_recognised_by_their_name() {
        assert!(is_original(Path::new("a/b_nth.orig.txt")));
        assert!(is_original(Path::new("dups.orig.min+1.json")));
        assert!(is_original(Path::new("sampling_pvc.orig.list.txt")));
        assert!(!is_original(Path::new("d_one.fixed.stdout")));
        assert!(!is_original(Path::new("orig.txt")));
        assert!(!is_original(Path::new("original.fixed.json")));
    }
}
