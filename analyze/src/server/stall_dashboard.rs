//! The chart server's stall dashboard (docs/analyze.md#stall-dashboard,
//! docs/compatibility.md#analyze-stall-dashboard): perfdashboard's
//! `--eustall` views for a stall file, drawn by `crate::stall_page`.
//!
//! * `GET /`: per-kernel stall totals and the hottest addresses;
//! * `GET /perfdashboard?kernel=K[&top=N][&q=FILTER]`: kernel K's page;
//!   without `kernel`, the dashboard of `/`;
//! * `GET /<kernel>/<instance>?format=html`: the kernel page of the link's
//!   kernel (the PDF answer of that URL is the original's, unchanged).
//!
//! The file is summed up once at start-up (every stall section, all
//! devices together, as perfdashboard reads it); a kernel page reads only
//! that summary and, with `-s`, the kernel's `.asm` through the shared
//! [`ReportBuilder`].

use std::path::Path;
use std::sync::Mutex;

use unitrace_core::InputError;

use super::request::{percent_decode, strip_shape};
use super::Answer;
use crate::kernel_match::{ambiguous_message, closest_names, resolve_kernel, KernelMatch};
use crate::page_links::PageLinks;
use crate::plan::{ReportView, StallOptions};
use crate::stall::ReportBuilder;
use crate::stall_page::{
    dashboard_page, kernel_detail, kernel_page, PageInfo, Source, DEFAULT_TOP, MAX_TOP,
};
use crate::stall_summary::StallSummary;

const HTML: &str = "text/html; charset=utf-8";

/// The parameters of `/perfdashboard`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DashboardQuery {
    pub kernel: Option<String>,
    /// `top` as given, checked by [`top_of`].
    pub top: Option<String>,
}

/// Decodes a query string as a browser's form sends it (`+` is a space).
pub fn parse_query(query: &str) -> DashboardQuery {
    let mut out = DashboardQuery::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(&value.replace('+', " "));
        match percent_decode(key).as_str() {
            "kernel" if !value.trim().is_empty() => out.kernel = Some(value),
            "top" => out.top = Some(value),
            _ => {}
        }
    }
    out
}

/// `?top=N`: a whole number from 1 to [`MAX_TOP`]; absent = 20.
pub fn top_of(query: &DashboardQuery) -> Result<usize, String> {
    let Some(text) = &query.top else {
        return Ok(DEFAULT_TOP);
    };
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_TOP).contains(&n) => Ok(n),
        _ => Err(format!(
            "Invalid top {text}: use a whole number from 1 to {MAX_TOP}"
        )),
    }
}

/// The stall views of one file.
pub struct StallDashboard {
    summary: StallSummary,
    file: String,
}

impl StallDashboard {
    pub fn build(path: &Path) -> Result<StallDashboard, InputError> {
        Ok(StallDashboard {
            summary: StallSummary::read(path)?,
            file: path.display().to_string(),
        })
    }

    pub fn summary(&self) -> &StallSummary {
        &self.summary
    }

    fn info(&self, top: usize, stall: &StallOptions, links: &PageLinks) -> PageInfo {
        PageInfo {
            file: self.file.clone(),
            served: true,
            top,
            dump: stall.shaderdump.is_some(),
            links: links.clone(),
        }
    }

    /// `GET /` (on a result-dir server, `/perfdashboard?rank=R&device=D`).
    pub fn index(&self, stall: &StallOptions, links: &PageLinks) -> Answer {
        page(dashboard_page(
            &self.info(DEFAULT_TOP, stall, links),
            &self.summary,
        ))
    }

    /// Whether `/perfdashboard?QUERY` is for this dashboard in a file that
    /// also has metric sections: a `kernel` it has, and no `gid`.
    pub fn claims(&self, query: &str) -> bool {
        let has_gid = query
            .split('&')
            .any(|pair| percent_decode(pair.split('=').next().unwrap_or("")) == "gid");
        let Some(kernel) = parse_query(query).kernel else {
            return false;
        };
        !has_gid
            && (self.summary.kernel(&kernel).is_some()
                || self.summary.kernel(strip_shape(&kernel)).is_some())
    }

    /// `GET /perfdashboard?…`.
    pub fn query(
        &self,
        query: &str,
        stall: &StallOptions,
        reports: &Mutex<Option<ReportBuilder>>,
        links: &PageLinks,
    ) -> Answer {
        let query = parse_query(query);
        let top = match top_of(&query) {
            Ok(top) => top,
            Err(message) => return Answer::BadRequest(message),
        };
        match &query.kernel {
            None => page(dashboard_page(&self.info(top, stall, links), &self.summary)),
            Some(kernel) => self.kernel(kernel, top, stall, reports, None, links),
        }
    }

    /// The page of the kernel `wanted` names: its exact name, the name
    /// without a shape (metric links), or a unique part or `/regex/`.
    pub fn kernel(
        &self,
        wanted: &str,
        top: usize,
        stall: &StallOptions,
        reports: &Mutex<Option<ReportBuilder>>,
        pdf_link: Option<&str>,
        links: &PageLinks,
    ) -> Answer {
        let names = self.summary.kernel_names();
        let name = if self.summary.kernel(wanted).is_some() {
            wanted.to_string()
        } else if self.summary.kernel(strip_shape(wanted)).is_some() {
            strip_shape(wanted).to_string()
        } else {
            match resolve_kernel(wanted, &names) {
                Ok(KernelMatch::Unique(name)) => name.to_string(),
                Ok(KernelMatch::Ambiguous(candidates)) => {
                    return Answer::NotFound(ambiguous_message(wanted, &candidates))
                }
                Ok(KernelMatch::NoMatch) | Err(_) => {
                    let close: Vec<String> = closest_names(wanted, &names, 3)
                        .iter()
                        .map(|k| format!("\"{k}\""))
                        .collect();
                    let hint = if close.is_empty() {
                        String::new()
                    } else {
                        format!("; closest names: {}", close.join(", "))
                    };
                    // perfdashboard's message, plus the closest names.
                    return Answer::NotFound(format!(
                        "No EU stall samples found for kernel {wanted}{hint}"
                    ));
                }
            }
        };
        let Some(kernel) = self.summary.kernel(&name) else {
            return Answer::NotFound(format!("No EU stall samples found for kernel {wanted}"));
        };
        let info = self.info(top, stall, links);
        let source = match self.source(kernel, top, stall, reports) {
            Ok(source) => source,
            Err(e) => return Answer::Misconfigured(format!("{e:#}")),
        };
        page(kernel_page(&info, &self.summary, kernel, &source, pdf_link))
    }

    fn source(
        &self,
        kernel: &crate::stall_summary::KernelStalls,
        top: usize,
        stall: &StallOptions,
        reports: &Mutex<Option<ReportBuilder>>,
    ) -> anyhow::Result<Source> {
        let Some(dump) = &stall.shaderdump else {
            return Ok(Source::NoDump);
        };
        if !dump.is_dir() {
            // The original server's text for its own misconfiguration
            // (docs/compatibility.md#analyze-server).
            anyhow::bail!("Shader dump folder {} does not exist", dump.display());
        }
        // A panic in another request must not disable reports for good.
        let mut builder = reports
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if builder.is_none() {
            *builder = Some(ReportBuilder::new(
                dump,
                stall.demangler.as_deref(),
                stall.numtopstalls,
                ReportView::Standard,
                false,
            )?);
        }
        let Some(builder) = builder.as_mut() else {
            return Ok(Source::NoDump);
        };
        let report_top = builder.top();
        Ok(match builder.listing_of(&kernel.name)? {
            Some(listing) => Source::Listing(kernel_detail(
                listing,
                kernel,
                &kernel.top_ips(top),
                report_top,
            )),
            None => Source::NoAsm {
                dump: dump.display().to_string(),
            },
        })
    }
}

fn page(html: String) -> Answer {
    Answer::Page {
        content_type: HTML,
        body: html.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_is_decoded_like_a_form() {
        let q = parse_query("kernel=gemm%28float*%2C+int%29&top=5&x=1");
        assert_eq!(q.kernel.as_deref(), Some("gemm(float*, int)"));
        assert_eq!(top_of(&q), Ok(5));
        assert_eq!(parse_query("kernel=a%2Bb").kernel.as_deref(), Some("a+b"));
        assert_eq!(parse_query("kernel=&top=").kernel, None);
        assert_eq!(top_of(&parse_query("")), Ok(DEFAULT_TOP));
        for bad in ["top=0", "top=x", "top=501", "top=-1"] {
            assert!(top_of(&parse_query(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn claims_only_stall_kernels_without_gid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/server/stalls.csv");
        let dashboard = StallDashboard::build(&path).unwrap();
        assert!(dashboard.claims("kernel=main%3A%3A%7Blambda(auto%3A1)%234%7D"));
        // With its shape, as trace links carry it.
        assert!(dashboard.claims(
            "kernel=main%3A%3A%7Blambda(auto%3A1)%234%7D%5BSIMD32%20%7B1%3B%201%3B%201%7D%20%7B16%3B%201%3B%201%7D%5D"
        ));
        assert!(!dashboard.claims("gid=7&kernel=main%3A%3A%7Blambda(auto%3A1)%234%7D"));
        assert!(!dashboard.claims("kernel=nosuch"));
        assert!(!dashboard.claims(""));
    }
}
