//! Replays the option-file fuzz target's crashers
//! (`fuzz/regressions/option_file/*`) and the option files of the shared
//! corpus through its checks (`fuzz/exercise/option_file.rs`). The core
//! parsers' targets are replayed by `core/tests/fuzz_regressions.rs`; this
//! one needs the analyze crate.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};

use unitrace_system_tests::repo_root;

#[path = "../../fuzz/exercise/option_file.rs"]
mod option_file;

#[test]
fn option_file_regressions() {
    let root = repo_root();
    let mut inputs = Vec::new();
    for dir in [
        root.join("fuzz/regressions/option_file"),
        root.join("tests/bad_inputs/option_file"),
    ] {
        if let Ok(entries) = fs::read_dir(&dir) {
            inputs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    inputs.sort();
    let mut panicked = Vec::new();
    for path in &inputs {
        let bytes = fs::read(path).expect("readable regression input");
        if catch_unwind(AssertUnwindSafe(|| option_file::run(&bytes))).is_err() {
            panicked.push(path.display().to_string());
        }
    }
    assert!(panicked.is_empty(), "option_file panicked on: {panicked:?}");
    assert!(inputs.len() >= 5, "only {} inputs replayed", inputs.len());
}
