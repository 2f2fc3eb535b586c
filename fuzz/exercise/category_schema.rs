//! Compiled JSON category schemas of `categorize` (docs/formats.md#category-json,
//! `unitrace_core::category_schema`): any bytes give a schema or an error,
//! never a panic; a schema classifies any name; Python-style JSON output of
//! a parsed value is JSON again.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/category_schema/*`).

use std::path::Path;

use unitrace_core::category_schema::{CategorySchema, JsonValue};
use unitrace_core::pyfmt::float_repr;

pub fn run(data: &[u8]) {
    if data.len() >= 8 {
        let f = f64::from_le_bytes(data[..8].try_into().unwrap_or([0; 8]));
        let _ = float_repr(f);
    }
    if let Ok(value) = serde_json::from_slice::<JsonValue>(data) {
        let text = value.to_python_json(Some(2));
        // Python's json.dumps writes NaN/Infinity, which is not JSON.
        if !text.contains("NaN") && !text.contains("Infinity") {
            assert!(
                serde_json::from_str::<Box<serde_json::value::RawValue>>(&text).is_ok(),
                "python-style JSON does not parse: {text}"
            );
        }
    }
    let Ok(schema) = CategorySchema::from_json_bytes(Path::new("fuzz.json"), data) else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let _ = schema.classify(&text);
    for piece in text.split(['"', ',', ':']).take(64) {
        let _ = schema.classify(piece);
    }
}
