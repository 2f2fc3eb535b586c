//! The `.pftrace` decoder's fast paths (`Packet::decode`, tags matched by
//! their first bytes, events decoded in place; docs/benchmarks.md#the-pftrace-reader)
//! agree with the reference decoder (`Packet::decode_reference`, one
//! generic field at a time) on every packet of the repository's `.pftrace`
//! files (generated, legacy and unitrace's own) and on every packet made
//! from them by cutting it short or changing one byte: the same packet
//! (fields, categories, flow ids, annotations), or the same error at the
//! same offset.

use std::path::{Path, PathBuf};

use unitrace_core::pftrace::{Packet, PacketData, PacketReader};

fn pftrace_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).expect("testdata").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "pftrace") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Everything a decoded packet tells, in a comparable form.
fn describe(p: &Packet<'_>) -> String {
    let mut s = format!(
        "ts {:?} clock {:?} seq {:?} ",
        p.timestamp, p.timestamp_clock_id, p.sequence_id
    );
    match &p.data {
        PacketData::TrackEvent(e) => {
            let cats: Vec<&[u8]> = e.categories().collect();
            s += &format!(
                "event {:?} uuid {:?} name {:?} cats {:?} first {:?} gpu {} cpu {} flows {:?} term {:?} ann {:?}",
                e.kind,
                e.track_uuid,
                e.name,
                cats,
                e.first_category(),
                e.has_category(b"gpu_op"),
                e.has_category(b"cpu_op"),
                e.flow_ids().collect::<Vec<_>>(),
                e.terminating_flow_ids().collect::<Vec<_>>(),
                e.annotations().collect::<Vec<_>>(),
            );
            assert_eq!(e.first_category(), cats.first().copied());
        }
        other => s += &format!("{other:?}"),
    }
    s
}

/// Both decoders on `packet`: equal outcomes. Returns whether it decoded.
fn agree(packet: &[u8], what: &dyn Fn() -> String) -> bool {
    let fast = Packet::decode(packet);
    let reference = Packet::decode_reference(packet);
    // In place, over a packet that held another one.
    let mut reused = Packet::decode(b"\x40\x05\x5a\x04\x48\x01\x58\x07").expect("a small event");
    let in_place = Packet::decode_into(packet, &mut reused);
    match (&fast, &reference) {
        (Ok(a), Ok(b)) => {
            assert_eq!(describe(a), describe(b), "{}", what());
            assert!(in_place.is_ok(), "{}", what());
            assert_eq!(describe(&reused), describe(b), "in place: {}", what());
            true
        }
        (Err(a), Err(b)) => {
            assert_eq!(
                (a.offset, a.problem()),
                (b.offset, b.problem()),
                "{}",
                what()
            );
            let c = in_place.expect_err("in place fails too");
            assert_eq!((c.offset, c.problem()), (b.offset, b.problem()));
            false
        }
        (a, b) => panic!("{}: fast {a:?}, reference {b:?}", what()),
    }
}

#[test]
fn fast_decoder_agrees_with_the_reference_on_every_packet_and_mutation() {
    let files = pftrace_files();
    assert!(
        files.len() >= 8,
        "the repository's .pftrace files: {files:?}"
    );
    let (mut packets, mut mutants, mut decoded) = (0u64, 0u64, 0u64);
    let mut kinds = [0u64; 4];
    for path in &files {
        let bytes = std::fs::read(path).expect("read");
        let mut reader = PacketReader::new(&bytes[..]);
        let mut index = 0u64;
        while let Ok(Some(rec)) = reader.next_record() {
            let packet = rec.packet;
            let at = || format!("{}: record {index}", path.display());
            agree(packet, &at);
            packets += 1;
            if let Ok(p) = Packet::decode(packet) {
                kinds[match p.data {
                    PacketData::TrackEvent(_) => 0,
                    PacketData::TrackDescriptor(_) => 1,
                    PacketData::ClockSnapshot(_) => 2,
                    PacketData::Other => 3,
                }] += 1;
            }
            // Mutants of the first packets of each file (every kind of
            // packet comes early: clock snapshot, descriptors, events).
            if index < 16 {
                let mut m = packet.to_vec();
                for cut in 0..packet.len() {
                    let what = || format!("{}: record {index} cut at {cut}", path.display());
                    decoded += agree(&packet[..cut], &what) as u64;
                    mutants += 1;
                }
                for i in 0..packet.len() {
                    let old = m[i];
                    for new in [
                        0x00,
                        0x01,
                        0x02,
                        0x05,
                        0x7f,
                        0x80,
                        0xff,
                        old ^ 0x80,
                        old ^ 0x07,
                    ] {
                        if new == old {
                            continue;
                        }
                        m[i] = new;
                        let what = || {
                            format!(
                                "{}: record {index} byte {i} {old:#04x} -> {new:#04x}",
                                path.display()
                            )
                        };
                        decoded += agree(&m, &what) as u64;
                        mutants += 1;
                    }
                    m[i] = old;
                }
            }
            index += 1;
        }
    }
    // Every kind of packet was met, and mutants both decode and fail.
    assert!(kinds.iter().take(3).all(|&k| k > 0), "kinds {kinds:?}");
    assert!(packets > 1000, "{packets} packets");
    assert!(
        decoded > 1000 && decoded < mutants,
        "{decoded} of {mutants}"
    );
}
