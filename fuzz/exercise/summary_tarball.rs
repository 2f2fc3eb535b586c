//! The tarball reader of `summary` (docs/formats.md#summary-tarball,
//! `unitrace_core::summary_tarball`): any bytes (plain, gzip) give members
//! or an error, never a panic or a hang; members arrive in order and
//! their sizes add up to the reported byte count.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/summary_tarball/*`).

use std::path::PathBuf;
use std::sync::OnceLock;

use unitrace_core::summary_tarball::for_each_member;

/// One archive file per fuzzing process, rewritten for every input.
fn archive_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("unitrace-fuzz-tarball-{}.tar", std::process::id()))
    })
}

pub fn run(data: &[u8]) {
    // bzip2/xz/zstd go through external programs: not what is fuzzed here.
    if data.starts_with(b"BZh")
        || data.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0])
        || data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
    {
        return;
    }
    let path = archive_path();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let mut next_index = 0usize;
    let mut total = 0u64;
    let result = for_each_member(
        path,
        2,
        |m| (m.index, m.data.len() as u64),
        |_name, (index, len)| {
            assert_eq!(index, next_index, "members out of order");
            next_index += 1;
            total += len;
            Ok(())
        },
    );
    if let Ok(stats) = result {
        assert_eq!(stats.members, next_index);
        assert_eq!(stats.bytes, total);
    }
}
