//! libFuzzer entry of `exercise/summary_text.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/summary_text.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
