//! INI category schemas of `categorize` (docs/formats.md#category-ini,
//! `unitrace_core::ini_schema`): any bytes give rules or an error, never a
//! panic, with every option combination; compiling the rules and reading
//! the compiled JSON back gives a schema that classifies names.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/ini_schema/*`).

use std::path::Path;

use unitrace_core::category_schema::{compile_rules, CategorySchema};
use unitrace_core::ini_schema::{parse_ini, remove_spaces, IniOptions};

pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = remove_spaces(text);
    for (remove_spaces, keep_dotted) in [(true, false), (false, true)] {
        let options = IniOptions {
            remove_spaces,
            keep_dotted,
        };
        let Ok(schema) = parse_ini(Path::new("fuzz.ini"), text, options) else {
            continue;
        };
        let compiled = compile_rules(&schema.rules, remove_spaces);
        let json = compiled.to_python_json(Some(2));
        let _ = compiled.to_python_json(None);
        let back =
            match CategorySchema::from_json_bytes(Path::new("compiled.json"), json.as_bytes()) {
                Ok(back) => back,
                // `matches regex` patterns are checked by `categorize` after
                // parsing (it refuses the INI at the rule's line), not by
                // `parse_ini`: an invalid one legitimately fails here.
                Err(e) if e.to_string().contains("regex is invalid") => continue,
                Err(e) => panic!("compiled schema does not read back: {e}\n{json}"),
            };
        for rule in schema.rules.iter().take(32) {
            let _ = back.classify(&format!("{rule:?}"));
        }
        let _ = back.classify(text);
    }
}
