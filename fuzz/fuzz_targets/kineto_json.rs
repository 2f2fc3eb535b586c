//! libFuzzer entry of `exercise/kineto_json.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/kineto_json.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
