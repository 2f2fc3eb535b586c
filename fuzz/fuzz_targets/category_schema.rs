//! libFuzzer entry of `exercise/category_schema.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/category_schema.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
