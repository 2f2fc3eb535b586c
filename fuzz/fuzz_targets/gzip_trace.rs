//! libFuzzer entry of `exercise/gzip_trace.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/gzip_trace.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
