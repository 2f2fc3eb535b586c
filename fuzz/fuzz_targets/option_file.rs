//! libFuzzer entry of `exercise/option_file.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/option_file.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
