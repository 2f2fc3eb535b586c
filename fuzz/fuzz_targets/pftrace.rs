//! libFuzzer entry of `exercise/pftrace.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/pftrace.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
