//! What an input is, by its content (docs/formats.md#timeline-detection):
//! gzip is inflated on the fly (`.json.gz`, `.pftrace.gz`, Kineto's
//! `*.pt.trace.json.gz`) and the merge copies the inflated bytes; a
//! PyTorch profiler (Kineto) trace is told from unitrace's by its content
//! and gets its own pid namespace, rank label and clock alignment
//! (docs/mergetrace.md#kineto).

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use unitrace_core::timeline::detect::{JsonDialect, Sniffed};
use unitrace_core::timeline::gzip::GzipWatch;
use unitrace_core::timeline::{self, Ns};
use unitrace_core::watched_file::WatchedFile;
use unitrace_core::InputError;

/// What the merge needs to know of an input before reading it.
#[derive(Debug, Clone, Default)]
pub struct InputInfo {
    pub gzipped: bool,
    pub pftrace: bool,
    pub kineto: bool,
    /// Kineto's `baseTimeNanoseconds` (docs/formats.md#kineto-json-time).
    pub clock_base: Option<Ns>,
    /// Kineto's `distributedInfo.rank`.
    pub rank: Option<u32>,
    /// Kineto: a clock base or rank of the wrong form, ignored; one warning
    /// each, in tracestat's words (docs/formats.md#kineto-json-reading).
    pub warnings: Vec<String>,
}

/// Whether a file starts with gzip's magic bytes.
pub fn is_gzip_file(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == [0x1f, 0x8b])
}

/// What `path` holds. A gzip file must hold a trace (an error otherwise);
/// for a plain file whose head is no trace the merge itself reports what
/// is wrong (`None` fields).
pub fn inspect(path: &Path) -> Result<InputInfo, InputError> {
    let gzipped = is_gzip_file(path);
    let opened = match timeline::open(path) {
        Ok(o) => o,
        Err(e) if gzipped => return Err(e),
        Err(_) => return Ok(InputInfo::default()),
    };
    Ok(InputInfo {
        gzipped,
        pftrace: opened.sniffed == Sniffed::Pftrace,
        kineto: opened.sniffed == Sniffed::Json(JsonDialect::Kineto),
        clock_base: opened.clock_base,
        rank: opened.run_info.as_ref().and_then(|i| i.rank),
        warnings: opened.warnings,
    })
}

/// The bytes of an input: the file, or its inflated content when gzipped.
/// A plain file is streamed and watched: one that changes while it is read
/// fails the read with `changed while read` (docs/robustness.md#changed-inputs).
pub fn open_stream(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    open_input(path).map(|input| input.stream)
}

/// An input's bytes ([`open_stream`]) and what the merge says about them.
pub struct InputStream {
    pub stream: Box<dyn Read + Send>,
    /// The stream is the plain file itself (which can be read again, e.g.
    /// for a line number).
    pub plain: bool,
    /// A gzipped input: what ended its gzip stream, once it was read
    /// (docs/robustness.md#gzip).
    pub gzip: Option<GzipWatch>,
}

/// [`open_stream`], and what [`InputStream`] says besides.
pub fn open_input(path: &Path) -> io::Result<InputStream> {
    let mut file = WatchedFile::open(path)?;
    let mut magic = Vec::with_capacity(2);
    (&mut file).take(2).read_to_end(&mut magic)?;
    let gzipped = magic == [0x1f, 0x8b];
    let inflated = |opened: timeline::Opened| InputStream {
        gzip: opened.gzip.clone(),
        stream: opened.into_reader(),
        plain: false,
    };
    if !file.is_regular() {
        // A pipe: what was read, then the rest.
        let stream = Box::new(io::Cursor::new(magic).chain(file));
        if gzipped {
            let opened =
                timeline::open_stream(stream, path).map_err(|e| io::Error::other(e.problem))?;
            return Ok(inflated(opened));
        }
        return Ok(InputStream {
            stream,
            plain: false,
            gzip: None,
        });
    }
    if gzipped {
        let opened = timeline::open(path).map_err(|e| io::Error::other(e.problem))?;
        return Ok(inflated(opened));
    }
    file.rewind()?;
    Ok(InputStream {
        stream: Box::new(file),
        plain: true,
        gzip: None,
    })
}

/// The merged output: gzip (fast level) when its name ends in `.gz`
/// (docs/mergetrace.md#usage), else the file as it is.
pub enum Output<W: Write> {
    Plain(W),
    Gzip(Box<flate2::write::GzEncoder<W>>),
}

impl<W: Write> Output<W> {
    pub fn new(out: W, path: &Path) -> Self {
        if path.as_os_str().as_encoded_bytes().ends_with(b".gz") {
            Output::Gzip(Box::new(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::fast(),
            )))
        } else {
            Output::Plain(out)
        }
    }

    /// The underlying writer, the gzip member closed.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Output::Plain(w) => Ok(w),
            Output::Gzip(gz) => gz.finish(),
        }
    }
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::Gzip(gz) => gz.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.write_all(buf),
            Output::Gzip(gz) => gz.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::Gzip(gz) => gz.flush(),
        }
    }
}
