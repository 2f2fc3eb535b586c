//! Which reader a trace file needs: Chrome JSON ([`crate::ingest`]) or a
//! Perfetto `.pftrace` ([`crate::ingest_pftrace`]), told apart by the first
//! bytes, as every tool reads them (docs/formats.md#pftrace).

use std::path::Path;

use unitrace_core::trace::{self, TraceReader};
use unitrace_core::InputError;

use crate::ingest::RankTrace;

/// Reads one trace file (Chrome JSON, or a Perfetto `.pftrace`, told
/// apart by its first bytes) into one `RankTrace` per rank it holds.
pub fn read_trace_file(path: &Path, input_index: usize) -> Result<Vec<RankTrace>, InputError> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(InputError::io(path, &e)),
        }
    }
    let json = !unitrace_core::pftrace::sniff(&head[..n]);
    if json {
        // A JSON file is read in place when it can be mapped.
        match trace::rewound(file) {
            Ok(file) => {
                let reader = TraceReader::open_file(file, trace::DEFAULT_MAX_EVENT_BYTES);
                return crate::ingest::read_trace(reader, path, input_index);
            }
            Err(unseekable) => file = unseekable,
        }
    }
    let src = std::io::Cursor::new(head[..n].to_vec()).chain(file);
    if json {
        crate::ingest::read_trace(TraceReader::new(src), path, input_index)
    } else {
        crate::ingest_pftrace::read_pftrace(src, path, input_index)
    }
}
