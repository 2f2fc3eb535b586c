//! libFuzzer entry of `exercise/metric_csv.rs` (what is checked is documented there).
#![no_main]

#[path = "../exercise/metric_csv.rs"]
mod exercise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| exercise::run(data));
