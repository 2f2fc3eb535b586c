//! Self-contained HTML output: one inline SVG per page, inline CSS, no
//! scripts and no network resources, so it works offline. Streamed: each
//! page is written as it is added.

use std::io::{self, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

use super::svg::{escape_xml, page_svg};
use super::{Page, PageSink};

pub struct HtmlWriter {
    out: AtomicFile,
    pages: usize,
}

impl HtmlWriter {
    pub fn create(path: &Path) -> io::Result<HtmlWriter> {
        let mut out = AtomicFile::create(path)?;
        let title = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>\n\
             body {{ background: #eeeeee; margin: 0; padding: 1em; }}\n\
             figure {{ background: #ffffff; margin: 0 auto 1em auto; max-width: 960px; \
             box-shadow: 0 1px 3px rgba(0,0,0,0.3); }}\n\
             figure svg {{ display: block; width: 100%; height: auto; }}\n\
             </style>\n</head>\n<body>\n",
            escape_xml(&title)
        )?;
        Ok(HtmlWriter { out, pages: 0 })
    }
}

impl PageSink for HtmlWriter {
    fn add_page(&mut self, page: &Page) -> io::Result<()> {
        self.pages += 1;
        writeln!(self.out, "<figure id=\"page-{}\">", self.pages)?;
        self.out.write_all(page_svg(page, 0.0, true).as_bytes())?;
        self.out.write_all(b"</figure>\n")
    }

    fn pages(&self) -> usize {
        self.pages
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.out.write_all(b"</body>\n</html>\n")?;
        self.out.commit()
    }
}
