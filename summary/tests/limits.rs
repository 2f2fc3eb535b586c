//! Bounds on what one input may cost (docs/summary.md#inputs): a line
//! of a summary log is at most 1 MiB, whether its member is read whole or
//! streamed; a schema file at most 16 MiB.

use crate::{llama, summary, tgz_of};

fn fails_with(input: &std::path::Path, schema: &std::path::Path, want: String) {
    let o = summary(&[
        "--input",
        input.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&o.stderr), want);
}

#[test]
fn a_line_above_one_mib_is_refused_with_member_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // 2 MiB: read whole; 40 MiB: above the streaming threshold, parsed while
    // it is inflated.
    for (mib, name) in [(2, "whole.tgz"), (40, "streamed.tgz")] {
        let mut member = b"=== Device Timing Summary ===\n".to_vec();
        member.resize(member.len() + (mib << 20), b'x');
        member.push(b'\n');
        let tgz = dir.path().join(name);
        tgz_of(&tgz, &[("output.1.0.txt", &member)]);
        fails_with(
            &tgz,
            &llama(),
            format!(
                "summary: {}: output.1.0.txt:2: line longer than 1 MiB: not a unitrace summary\n",
                tgz.display()
            ),
        );
    }
}

#[test]
fn a_schema_above_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("t.tgz");
    tgz_of(
        &tgz,
        &[("output.1.0.txt", b"=== Device Timing Summary ===\n")],
    );
    let zero = std::path::Path::new("/dev/zero");
    fails_with(
        &tgz,
        zero,
        "summary: /dev/zero: larger than 16 MiB: not a compiled category schema\n".to_string(),
    );
}
