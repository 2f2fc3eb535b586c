//! libFuzzer entry of `exercise/ini_schema.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/ini_schema.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
