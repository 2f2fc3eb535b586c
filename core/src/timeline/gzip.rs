//! gzip inflated on the fly, one member after the other
//! (docs/formats.md#timeline-detection), so that what follows the gzip data
//! is named for what it is:
//!
//! * a member cut short (its writer was killed) ends the content where its
//!   data ends, as a cut plain file does, and the cut is recorded with
//!   where it fell: in a header (no content from that member), in the
//!   deflate data, or in the 8-byte trailer (the content is whole but its
//!   CRC was never checked);
//! * a member whose first bytes are gzip's magic is read as a further
//!   member (`cat a.gz b.gz` is one gzip stream);
//! * bytes after a complete member that start no member (zero padding, a
//!   log line appended by a script) are counted and recorded, whatever
//!   their number, and the content before them is kept: the member ended
//!   with a checked CRC, so nothing of it is missing
//!   (docs/robustness.md#gzip);
//! * a corrupt member (bad header, deflate data or CRC) is an error,
//!   `gzip: ...`, naming the member after the first.
//!
//! What was recorded is read from a [`GzipWatch`] once the stream ended;
//! it costs nothing per byte.

use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

use flate2::bufread::GzDecoder;

use crate::watched_file::ChangedWhileRead;

/// Compressed bytes buffered ahead of the inflater.
const BUFFER_BYTES: usize = 1 << 16;

/// Where in a gzip member its file ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GzipCut {
    /// In the member's header: nothing of that member was inflated.
    Header,
    /// In its deflate data: the content ends where the data ends.
    Data,
    /// In its 8-byte trailer: the content is whole, its CRC unchecked.
    Trailer,
}

/// What ended a gzip stream other than the end of a complete member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GzipDamage {
    /// The file ends inside a member.
    Cut(GzipCut),
    /// Bytes after the last complete member that start no member.
    Trailing {
        /// Offset of the first of them in the file.
        offset: u64,
        bytes: u64,
        /// Every one of them is a zero byte (padding).
        zeros: bool,
    },
}

impl GzipDamage {
    /// The one-line description of a warning or a report note.
    pub fn describe(&self) -> String {
        match self {
            GzipDamage::Cut(GzipCut::Header) => {
                "gzip stream cut short in a member's header (writer killed?)".to_string()
            }
            GzipDamage::Cut(GzipCut::Data) => "gzip stream cut short (writer killed?)".to_string(),
            GzipDamage::Cut(GzipCut::Trailer) => {
                "gzip stream cut short in its 8-byte trailer (writer killed?): \
                 the content is whole but its CRC was not checked"
                    .to_string()
            }
            GzipDamage::Trailing {
                offset,
                bytes,
                zeros,
            } => {
                let what = if *zeros {
                    "zero bytes"
                } else {
                    "no gzip member"
                };
                let s = if *bytes == 1 { "" } else { "s" };
                format!(
                    "{bytes} byte{s} after the end of the gzip data at byte {offset} ({what}); ignored"
                )
            }
        }
    }
}

/// What a [`GzipReader`] recorded, readable once its stream ended (also
/// after the reader was handed on and dropped).
#[derive(Debug, Clone, Default)]
pub struct GzipWatch(Arc<Mutex<Option<GzipDamage>>>);

impl GzipWatch {
    /// The damage found, if any.
    pub fn damage(&self) -> Option<GzipDamage> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, damage: GzipDamage) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(damage);
    }
}

/// The inflated content of a gzip stream, member after member (module
/// comment).
pub struct GzipReader {
    member: Option<GzDecoder<Compressed>>,
    /// 1-based number of the member being read, and its offset.
    number: u32,
    start: u64,
    watch: GzipWatch,
}

impl GzipReader {
    /// A reader of the gzip stream `src` (which starts with a member) and
    /// the watch of its end.
    pub fn new(src: Box<dyn Read + Send>) -> (GzipReader, GzipWatch) {
        let watch = GzipWatch::default();
        let reader = GzipReader {
            member: Some(GzDecoder::new(Compressed::new(src))),
            number: 1,
            start: 0,
            watch: watch.clone(),
        };
        (reader, watch)
    }

    /// After a complete member: the next one, or the end (recording bytes
    /// that start no member).
    fn next_member(&mut self, done: GzDecoder<Compressed>) -> io::Result<()> {
        let mut input = done.into_inner();
        let head = input.peek(2)?;
        if head.is_empty() {
            return Ok(());
        }
        if head == [0x1f, 0x8b] {
            self.number += 1;
            self.start = input.offset;
            self.member = Some(GzDecoder::new(input));
            return Ok(());
        }
        let offset = input.offset;
        let (bytes, zeros) = input.count_rest()?;
        self.watch.record(GzipDamage::Trailing {
            offset,
            bytes,
            zeros,
        });
        Ok(())
    }

    /// A gzip error in gzip's words, naming the member after the first.
    fn error(&self, e: io::Error) -> io::Error {
        let member = if self.number > 1 {
            format!(" (member {} at byte {})", self.number, self.start)
        } else {
            String::new()
        };
        io::Error::new(e.kind(), format!("gzip: {e}{member}"))
    }
}

/// Where a member whose read ended with `UnexpectedEof` was cut: flate2
/// has no header until it parsed one; an incomplete deflate stream is an
/// error with its own message, the trailer's short read a bare
/// `UnexpectedEof` (pinned by the tests below).
fn cut_at(member: &GzDecoder<Compressed>, e: &io::Error) -> GzipCut {
    if member.header().is_none() {
        GzipCut::Header
    } else if e.get_ref().is_some() {
        GzipCut::Data
    } else {
        GzipCut::Trailer
    }
}

impl Read for GzipReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            match member.read(buf) {
                Ok(0) => {
                    if let Some(done) = self.member.take() {
                        self.next_member(done)?;
                    }
                }
                Ok(n) => return Ok(n),
                // A file changed under the reader says so in its own words
                // (docs/robustness.md#changed-inputs).
                Err(e) if ChangedWhileRead::of(&e).is_some() => return Err(e),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    let at = cut_at(member, &e);
                    self.watch.record(GzipDamage::Cut(at));
                    self.member = None;
                    return Ok(0);
                }
                Err(e) => {
                    self.member = None;
                    return Err(self.error(e));
                }
            }
        }
    }
}

/// The compressed bytes, buffered, with the offset of the next one and a
/// look ahead of a few bytes across reads (a member's magic).
struct Compressed {
    inner: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Offset in the stream of `buf[pos]`.
    offset: u64,
}

impl Compressed {
    fn new(inner: Box<dyn Read + Send>) -> Compressed {
        Compressed {
            inner,
            buf: vec![0; BUFFER_BYTES].into_boxed_slice(),
            pos: 0,
            end: 0,
            offset: 0,
        }
    }

    fn read_inner(&mut self, at: usize) -> io::Result<usize> {
        loop {
            match self.inner.read(&mut self.buf[at..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }

    /// The next `n` bytes (fewer only at the end), not consumed.
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.end - self.pos < n {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            while self.end < n {
                let got = self.read_inner(self.end)?;
                if got == 0 {
                    break;
                }
                self.end += got;
            }
        }
        Ok(&self.buf[self.pos..self.end.min(self.pos + n)])
    }

    /// Reads the rest of the stream: how many bytes, and whether all are
    /// zero.
    fn count_rest(&mut self) -> io::Result<(u64, bool)> {
        let (mut bytes, mut zeros) = (0u64, true);
        loop {
            let chunk = self.fill_buf()?;
            if chunk.is_empty() {
                return Ok((bytes, zeros));
            }
            zeros &= chunk.iter().all(|&b| b == 0);
            let n = chunk.len();
            bytes += n as u64;
            self.consume(n);
        }
    }
}

impl Read for Compressed {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let chunk = self.fill_buf()?;
        let n = chunk.len().min(out.len());
        out[..n].copy_from_slice(&chunk[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Compressed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
            self.end = self.read_inner(0)?;
        }
        Ok(&self.buf[self.pos..self.end])
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.pos);
        self.pos += n;
        self.offset += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn inflate(bytes: &[u8]) -> (io::Result<Vec<u8>>, Option<GzipDamage>) {
        let (mut r, watch) = GzipReader::new(Box::new(io::Cursor::new(bytes.to_vec())));
        let mut out = Vec::new();
        let result = r.read_to_end(&mut out).map(|_| out);
        (result, watch.damage())
    }

    fn text() -> Vec<u8> {
        (0..2000u32)
            .flat_map(|i| format!("{{\"ph\": \"X\", \"ts\": {i}}},\n").into_bytes())
            .collect()
    }

    #[test]
    fn a_whole_stream_and_concatenated_members_read_clean() {
        let t = text();
        let (out, damage) = inflate(&gzip(&t));
        assert_eq!((out.unwrap(), damage), (t.clone(), None));
        let mut two = gzip(&t[..100]);
        two.extend(gzip(&t[100..]));
        let (out, damage) = inflate(&two);
        assert_eq!((out.unwrap(), damage), (t, None));
    }

    #[test]
    fn every_cut_is_recorded_where_it_falls() {
        let t = text();
        let gz = gzip(&t);
        for len in 1..gz.len() {
            let (out, damage) = inflate(&gz[..len]);
            let out = out.unwrap_or_else(|e| panic!("cut at {len}: {e}"));
            let want = if len < 10 {
                GzipCut::Header
            } else if len >= gz.len() - 8 {
                GzipCut::Trailer
            } else {
                GzipCut::Data
            };
            assert_eq!(damage, Some(GzipDamage::Cut(want)), "cut at {len}");
            assert!(t.starts_with(&out), "cut at {len}");
            if want == GzipCut::Trailer {
                assert_eq!(out, t, "a cut trailer leaves the content whole");
            }
        }
    }

    #[test]
    fn bytes_after_a_member_are_counted_whatever_their_number() {
        let t = text();
        let gz = gzip(&t);
        for (tail, zeros) in [
            (vec![0u8], true),
            (vec![0u8; 8], true),
            (vec![0u8; 100], true),
            (b"x".to_vec(), false),
            (b"not gzip at all\n".repeat(40), false),
        ] {
            let mut bytes = gz.clone();
            bytes.extend_from_slice(&tail);
            let (out, damage) = inflate(&bytes);
            assert_eq!(out.unwrap(), t);
            assert_eq!(
                damage,
                Some(GzipDamage::Trailing {
                    offset: gz.len() as u64,
                    bytes: tail.len() as u64,
                    zeros
                })
            );
        }
        let d = GzipDamage::Trailing {
            offset: 59979,
            bytes: 100,
            zeros: true,
        };
        assert_eq!(
            d.describe(),
            "100 bytes after the end of the gzip data at byte 59979 (zero bytes); ignored"
        );
    }

    #[test]
    fn a_corrupt_member_is_a_gzip_error_naming_it() {
        let t = text();
        let gz = gzip(&t);
        let mut bad_crc = gz.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 0xff;
        let e = inflate(&bad_crc).0.unwrap_err().to_string();
        assert!(e.starts_with("gzip: ") && !e.contains("member"), "{e}");
        // A second member whose magic is right and the rest is not.
        let mut second = gz.clone();
        second.extend_from_slice(b"\x1f\x8bjunk after the magic, no gzip header");
        let e = inflate(&second).0.unwrap_err().to_string();
        assert!(
            e.starts_with("gzip: ") && e.ends_with(&format!("(member 2 at byte {})", gz.len())),
            "{e}"
        );
    }
}
