//! Guard of the one-test-binary layout (tests/README.md, "Layout"): with
//! `autotests = false` cargo builds only `tests/main.rs`, so a new
//! `tests/NAME.rs` that is not declared there as `mod NAME;` would silently
//! never be built or run.

use std::fs;
use std::path::Path;

/// Panics with the names of the `tests/*.rs` files (and `tests/*/mod.rs`
/// folders) of the crate at `manifest_dir` that `tests/main.rs` does not
/// declare as modules.
pub fn assert_every_test_file_is_a_module(manifest_dir: &str) {
    let tests = Path::new(manifest_dir).join("tests");
    let main = fs::read_to_string(tests.join("main.rs"))
        .unwrap_or_else(|e| panic!("{}/main.rs: {e}", tests.display()));
    let declared: Vec<&str> = main
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("pub ").unwrap_or(l.trim());
            l.strip_prefix("mod ")?.strip_suffix(';')
        })
        .map(str::trim)
        .collect();
    let mut missing = Vec::new();
    for entry in fs::read_dir(&tests).unwrap_or_else(|e| panic!("{}: {e}", tests.display())) {
        let path = entry.expect("readable tests folder").path();
        let module = if path.is_dir() && path.join("mod.rs").is_file() {
            path.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
        } else if path.extension().is_some_and(|e| e == "rs") {
            path.file_stem()
                .and_then(|n| n.to_str())
                .map(str::to_string)
        } else {
            None
        };
        if let Some(module) = module {
            if module != "main" && !declared.contains(&module.as_str()) {
                missing.push(module);
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "{}/main.rs does not declare {missing:?}: add `mod NAME;` for each, or they never run",
        tests.display()
    );
}
