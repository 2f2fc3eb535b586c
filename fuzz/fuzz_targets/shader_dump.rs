//! libFuzzer entry of `exercise/shader_dump.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/shader_dump.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
