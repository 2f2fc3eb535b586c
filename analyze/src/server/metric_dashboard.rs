//! The metric dashboard's answers (docs/analyze.md#dashboard): `GET /`,
//! `GET /perfdashboard?gid=N[&kernel=K][&format=json]` (perfdashboard's
//! URL) and `GET /<kernel>/<gid>?format=html`, all from the [`FileIndex`]
//! built once at start-up (the instance's rows are re-read from its
//! block, as for the PDF).

use std::borrow::Cow;

use unitrace_core::metric_csv::{MetricRow, ReportValidity, ValidityColumns};

use super::index::FileIndex;
use super::request::percent_decode;
use super::Answer;
use crate::dashboard::data::{
    counters, default_selection, instance_json, InstanceColumns, InstanceLabel,
};
use crate::dashboard::index_page::{index_html, index_json, IndexKernel};
use crate::dashboard::page::{page_config, server_page, CompareSource, ServerPage};
use crate::page_links::{query_encode, PageLinks};
use crate::plan::ChartOptions;

/// perfdashboard's answer to an instance id that is not a number.
pub const INVALID_ID: &str = "Missing or invalid kernel instance id";

/// The index page of a file with metric sections; `None` without any.
/// `links`: the file's routing keys on a result-dir server
/// (docs/uniview.md#result-dir-links).
pub fn index_answer(
    index: &FileIndex,
    options: &ChartOptions,
    links: &PageLinks,
) -> Option<Answer> {
    let kernels: Vec<IndexKernel<'_>> = index
        .metric_kernels()
        .iter()
        .map(|(name, ids)| IndexKernel { name, ids })
        .collect();
    if kernels.is_empty() {
        return None;
    }
    let file = index.path().display().to_string();
    let mut data = index_json(&file, &kernels, index.stats(), options);
    // The instance links keep the file's keys (docs/uniview.md#result-dir-links).
    data["route"] = links.query().into();
    Some(html(index_html(&options.title, &data, links)))
}

/// `/perfdashboard?QUERY` of a metric file: the index without `gid`, the
/// instance page, or its JSON with `format=json` ("compare with").
pub fn query_answer(
    index: &FileIndex,
    options: &ChartOptions,
    query: &str,
    links: &PageLinks,
) -> Answer {
    let mut gid = None;
    let mut json = false;
    let mut compare = None;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match percent_decode(key).as_str() {
            "gid" => gid = Some(percent_decode(value)),
            "format" => json = percent_decode(value).eq_ignore_ascii_case("json"),
            "compare" => compare = percent_decode(value).trim().parse::<u64>().ok(),
            _ => {}
        }
    }
    let Some(gid) = gid else {
        return index_answer(index, options, links)
            .unwrap_or_else(|| Answer::BadRequest(INVALID_ID.into()));
    };
    let gid = gid.trim();
    if gid.is_empty() || !gid.bytes().all(|b| b.is_ascii_digit()) {
        return Answer::BadRequest(INVALID_ID.to_string());
    }
    let Ok(id) = gid.parse::<u64>() else {
        return not_found(gid, json);
    };
    // From /perfdashboard, the PDF is the original's URL of the instance
    // (of this file, on a result-dir server).
    let pdf = |kernel: &str| links.keep(&format!("/%22{}%22/{id}", query_encode(kernel)));
    let compare = compare.filter(|&c| c != id && !json);
    match instance_answer(index, options, id, json, &pdf, compare, links) {
        Ok(Some(answer)) => answer,
        Ok(None) => not_found(gid, json),
        Err(e) => Answer::Misconfigured(format!("{e:#}")),
    }
}

fn not_found(gid: &str, json: bool) -> Answer {
    if json {
        Answer::NotFound(format!("Kernel ID {gid} not found."))
    } else {
        Answer::NotFound(format!(
            "No instance with GlobalInstanceId {gid} in the file"
        ))
    }
}

/// The page (or JSON) of instance `id`; `None` when no metric section has
/// it. `pdf_link` makes the PDF link from the kernel name; `links` keep
/// the file's routing keys on a result-dir server.
pub fn instance_answer(
    index: &FileIndex,
    options: &ChartOptions,
    id: u64,
    json: bool,
    pdf_link: &dyn Fn(&str) -> String,
    compare: Option<u64>,
    links: &PageLinks,
) -> anyhow::Result<Option<Answer>> {
    let Some((header, mut rows)) = index.instance_rows(id)? else {
        return Ok(None);
    };
    // Flagged reports as everywhere (docs/analyze.md#report-validity):
    // left out by the policy, doubtful ones marked.
    let mut marks: Vec<ReportValidity> = Vec::new();
    let mut left_out = 0usize;
    if let Some(columns) = ValidityColumns::of(header) {
        let read = rows.len();
        rows.retain(|row| options.validity.keeps(columns.classify_row(row)));
        left_out = read - rows.len();
        marks = rows.iter().map(|row| columns.classify_row(row)).collect();
    }
    let kernel = rows
        .first()
        .map(|r| r.kernel.clone())
        .unwrap_or_else(|| kernel_of(index, id).unwrap_or_default());
    let (ordinal, of) = ordinal_of(index, &kernel, id);
    let label = InstanceLabel {
        kernel: &kernel,
        ordinal,
        of,
        global_id: Some(id),
    };
    let all = counters(header);
    let data = instance_json(&label, header, &all, &Rows(&rows), &marks);
    if json {
        return Ok(Some(Answer::Page {
            content_type: "application/json",
            body: data.to_string().into_bytes(),
        }));
    }
    let mut config = page_config(
        &all,
        &default_selection(options, &all),
        CompareSource::Server,
    );
    // "Compare with" asks the same file (docs/uniview.md#result-dir-links).
    config["route"] = links.query().into();
    let doubtful = marks.iter().filter(|m| !m.is_valid()).count();
    let mut notes = Vec::new();
    if left_out > 0 {
        notes.push(format!(
            "{left_out} flagged report{} left out (--keep-invalid keeps them).",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    if doubtful > 0 {
        notes.push(format!(
            "{doubtful} doubtful report{} kept and marked \u{25B2} on the X axis.",
            if doubtful == 1 { "" } else { "s" }
        ));
    }
    let file = index.path().display().to_string();
    let pdf = pdf_link(&kernel);
    let page = ServerPage {
        title: &options.title,
        file: &file,
        label,
        pdf_link: &pdf,
        links,
        note: (!notes.is_empty()).then(|| notes.join(" ")),
        compare: match compare {
            Some(other) => instance_data(index, options, other)?,
            None => None,
        },
    };
    Ok(Some(html(server_page(&page, &config, &data))))
}

/// The JSON of instance `id` alone (a compared instance), `None` when
/// unknown.
fn instance_data(
    index: &FileIndex,
    options: &ChartOptions,
    id: u64,
) -> anyhow::Result<Option<serde_json::Value>> {
    let answer = instance_answer(
        index,
        options,
        id,
        true,
        &|_| String::new(),
        None,
        &PageLinks::single_file(),
    )?;
    Ok(match answer {
        Some(Answer::Page { body, .. }) => serde_json::from_slice(&body).ok(),
        _ => None,
    })
}

/// The kernel of instance `id` from the index (when all its rows were
/// left out, the page still names it).
fn kernel_of(index: &FileIndex, id: u64) -> Option<String> {
    index
        .metric_kernels()
        .iter()
        .find(|(_, ids)| ids.contains(&Some(id)))
        .map(|(name, _)| name.clone())
}

/// 1-based position of `id` among `kernel`'s instances (all device
/// sections, file order), and their number.
fn ordinal_of(index: &FileIndex, kernel: &str, id: u64) -> (Option<u32>, Option<usize>) {
    match index
        .metric_kernels()
        .iter()
        .find(|(name, _)| name == kernel)
    {
        Some((_, ids)) => (
            ids.iter()
                .position(|&i| i == Some(id))
                .and_then(|p| u32::try_from(p + 1).ok()),
            Some(ids.len()),
        ),
        None => (None, None),
    }
}

fn html(body: String) -> Answer {
    Answer::Page {
        content_type: "text/html; charset=utf-8",
        body: body.into_bytes(),
    }
}

/// Parsed rows as the columns `instance_json` reads.
struct Rows<'a>(&'a [MetricRow]);

impl InstanceColumns for Rows<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }

    fn column(&self, column: usize) -> Cow<'_, [f64]> {
        Cow::Owned(self.0.iter().map(|row| row.value(column)).collect())
    }
}
