//! What the metric dashboard's script reads (docs/analyze.md#dashboard):
//! which columns are counters, grouped by unit, and one kernel instance's
//! samples as JSON.
//!
//! Counters are the columns perfdashboard offers (docs/compatibility.md#analyze-dashboard):
//! a name ending in `[unit]` with a non-blank unit, except
//! `QueryBeginTime[ns]` and `CoreFrequencyMHz[MHz]`; unit-less columns
//! (`ReportReason`, `ContextId`, the report-validity flags) never are.
//! They are ordered by unit, then name, both case-insensitively.

use serde_json::{json, Map, Value};
use unitrace_core::csv_sections::Header;
use unitrace_core::metric_csv::{ReportValidity, GLOBAL_INSTANCE_ID};

use crate::plan::ChartOptions;

/// The values of one kernel instance by CSV column, row by row (what
/// `analyze -o` kept of the instance, or the rows the server re-read).
pub trait InstanceColumns {
    fn rows(&self) -> usize;
    /// The values of `column`, one per row (empty when not kept).
    fn column(&self, column: usize) -> std::borrow::Cow<'_, [f64]>;
}

/// Counters a kernel-instance page shows first when `-m`/`-b` name none
/// the file has (those the file has, in this order).
pub const DEFAULT_COUNTERS: [&str; 5] = [
    "XVE_ACTIVE[%]",
    "XVE_STALL[%]",
    "XVE_THREADS_OCCUPANCY_ALL[%]",
    "GPU_MEMORY_BYTE_READ[bytes]",
    "GPU_MEMORY_BYTE_WRITE[bytes]",
];

/// Columns never offered although they have a unit (perfdashboard's
/// exclusions), compared case-insensitively.
const NOT_COUNTERS: [&str; 2] = ["QueryBeginTime[ns]", "CoreFrequencyMHz[MHz]"];

/// The time stamp of a sample, the X axis of sampling files when present.
pub const QUERY_BEGIN_TIME: &str = "QueryBeginTime[ns]";

/// One counter column of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub column: usize,
    pub name: String,
    /// The text between the last `[` and the closing `]`, trimmed.
    pub unit: String,
}

/// The unit of a column name `NAME[unit]`, when it has a non-blank one.
pub fn unit_of(name: &str) -> Option<&str> {
    let body = name.trim().strip_suffix(']')?;
    let (_, unit) = body.rsplit_once('[')?;
    let unit = unit.trim();
    (!unit.is_empty()).then_some(unit)
}

/// The counters of `header`, ordered by (unit, name) case-insensitively.
pub fn counters(header: &Header) -> Vec<Counter> {
    let mut counters: Vec<Counter> = header
        .columns()
        .iter()
        .enumerate()
        .filter(|&(i, name)| {
            i != header.kernel_index()
                && name != GLOBAL_INSTANCE_ID
                && !NOT_COUNTERS.iter().any(|n| n.eq_ignore_ascii_case(name))
        })
        .filter_map(|(column, name)| {
            Some(Counter {
                column,
                name: name.clone(),
                unit: unit_of(name)?.to_string(),
            })
        })
        .collect();
    counters.sort_by_cached_key(|c| (c.unit.to_lowercase(), c.name.to_lowercase()));
    counters
}

/// The counters a page selects first: the `-m`/`-b` metrics the file has,
/// else [`DEFAULT_COUNTERS`] it has, else its first four counters.
pub fn default_selection(options: &ChartOptions, counters: &[Counter]) -> Vec<String> {
    let has = |name: &str| counters.iter().any(|c| c.name == name);
    let mut chosen: Vec<String> = Vec::new();
    for name in options
        .metrics
        .iter()
        .chain(&options.throughput)
        .flat_map(|set| set.split(','))
        .map(str::trim)
    {
        if has(name) && !chosen.iter().any(|c| c == name) {
            chosen.push(name.to_string());
        }
    }
    if chosen.is_empty() {
        chosen = DEFAULT_COUNTERS
            .iter()
            .filter(|n| has(n))
            .map(|n| n.to_string())
            .collect();
    }
    if chosen.is_empty() {
        chosen = counters.iter().take(4).map(|c| c.name.clone()).collect();
    }
    chosen
}

/// Whether rows are query reports (perfdashboard's test: `QuerySplitOccurred`,
/// `ReportId` and `ReportsCount` all present, case- and space-insensitive):
/// drawn as grouped bars over `ReportId`.
pub fn is_query_file(header: &Header) -> bool {
    let has = |wanted: &str| {
        header.columns().iter().any(|c| {
            c.chars()
                .filter(|ch| !ch.is_whitespace())
                .collect::<String>()
                .eq_ignore_ascii_case(wanted)
        })
    };
    has("QuerySplitOccurred") && has("ReportId") && has("ReportsCount")
}

/// Counters grouped by unit, for the chooser: `[{unit, counters: [..]}]`.
pub fn unit_groups(counters: &[Counter]) -> Value {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for c in counters {
        match groups.last_mut() {
            Some((unit, names)) if unit.eq_ignore_ascii_case(&c.unit) => names.push(c.name.clone()),
            _ => groups.push((c.unit.clone(), vec![c.name.clone()])),
        }
    }
    Value::Array(
        groups
            .into_iter()
            .map(|(unit, names)| json!({ "unit": unit, "counters": names }))
            .collect(),
    )
}

/// Which instance of which kernel a page shows.
#[derive(Debug, Clone)]
pub struct InstanceLabel<'a> {
    pub kernel: &'a str,
    /// 1-based among the kernel's instances.
    pub ordinal: Option<u32>,
    /// Of how many.
    pub of: Option<usize>,
    pub global_id: Option<u64>,
}

/// One instance's samples as the page's script reads them:
/// `{kernel, ordinal, of, gid, samples, query, x: {label, values}, counters:
/// {name: [values]}, doubtful: [row], doubtNote: {row: flags}}`. Values
/// that are not finite are `null`. `marks` holds the validity of each row
/// (empty for files without validity columns); rows left out by the
/// validity policy must already be gone.
pub fn instance_json(
    label: &InstanceLabel<'_>,
    header: &Header,
    counters: &[Counter],
    columns: &impl InstanceColumns,
    marks: &[ReportValidity],
) -> Value {
    let rows = columns.rows();
    let query = is_query_file(header);
    let report_id = header
        .columns()
        .iter()
        .position(|c| c.trim().eq_ignore_ascii_case("ReportId"));
    let time = header.index_of(QUERY_BEGIN_TIME);
    // perfdashboard's X: query files by ReportId; sampling files by time
    // (here in µs from the instance's first sample, so that two instances
    // compare), else ReportId, else the sample number.
    let (x_label, x_values): (&str, Vec<f64>) = match (query, time, report_id) {
        (true, _, Some(c)) => ("Query report", columns.column(c).into_owned()),
        (false, Some(c), _) => {
            let t = columns.column(c);
            let first = t.iter().copied().find(|v| v.is_finite()).unwrap_or(0.0);
            (
                "Time since first sample (µs)",
                t.iter().map(|v| (v - first) / 1000.0).collect(),
            )
        }
        (false, None, Some(c)) => ("ReportId", columns.column(c).into_owned()),
        _ => ("Sample number", (1..=rows).map(|i| i as f64).collect()),
    };
    let mut values = Map::new();
    for c in counters {
        let column = columns.column(c.column);
        values.insert(
            c.name.clone(),
            Value::Array(column.iter().map(|&v| number(v)).collect()),
        );
    }
    let mut doubtful = Vec::new();
    let mut notes = Map::new();
    for (row, mark) in marks.iter().enumerate() {
        if !mark.is_valid() {
            doubtful.push(row);
            notes.insert(
                row.to_string(),
                Value::from(mark.names().collect::<Vec<_>>().join(", ")),
            );
        }
    }
    json!({
        "kernel": label.kernel,
        "ordinal": label.ordinal,
        "of": label.of,
        "gid": label.global_id,
        "samples": rows,
        "query": query,
        "x": { "label": x_label, "values": x_values.into_iter().map(number).collect::<Vec<_>>() },
        "counters": values,
        "doubtful": doubtful,
        "doubtNote": notes,
    })
}

/// A JSON number, or `null` for NaN and infinities.
pub fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn header(line: &str) -> Header {
        Header::parse(line.as_bytes(), 1, std::path::Path::new("t.csv")).unwrap()
    }

    struct Cols(Vec<Vec<f64>>);
    impl InstanceColumns for Cols {
        fn rows(&self) -> usize {
            self.0.first().map_or(0, Vec::len)
        }
        fn column(&self, column: usize) -> Cow<'_, [f64]> {
            Cow::Borrowed(&self.0[column])
        }
    }

    #[test]
    fn counters_have_units_and_are_sorted_by_unit_then_name() {
        let h = header("Kernel,GlobalInstanceId,ReportReason,QueryBeginTime[ns],b[%],GpuTime[ns],A[%],CoreFrequencyMHz[MHz],X[ ],Y[events]");
        let names: Vec<String> = counters(&h).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["A[%]", "b[%]", "Y[events]", "GpuTime[ns]"]);
    }

    #[test]
    fn defaults_follow_the_options_then_the_known_counters() {
        let h = header("Kernel,GlobalInstanceId,XVE_STALL[%],XVE_ACTIVE[%],Z[events]");
        let c = counters(&h);
        let mut options = ChartOptions::default();
        assert_eq!(
            default_selection(&options, &c),
            ["XVE_ACTIVE[%]", "XVE_STALL[%]"]
        );
        options.metrics = vec!["Z[events], nope[%]".into()];
        assert_eq!(default_selection(&options, &c), ["Z[events]"]);
    }

    #[test]
    fn instance_json_has_the_values_and_marks() {
        let h = header("Kernel,GlobalInstanceId,QueryBeginTime[ns],A[%]");
        let c = counters(&h);
        let cols = Cols(vec![
            vec![],
            vec![5.0, 5.0],
            vec![1000.0, 3000.0],
            vec![1.5, f64::NAN],
        ]);
        let label = InstanceLabel {
            kernel: "k",
            ordinal: Some(2),
            of: Some(3),
            global_id: Some(5),
        };
        let v = instance_json(&label, &h, &c, &cols, &[]);
        assert_eq!(v["counters"]["A[%]"], json!([1.5, null]));
        assert_eq!(v["x"]["values"], json!([0.0, 2.0]));
        assert_eq!(v["gid"], json!(5));
        assert_eq!(v["query"], json!(false));
    }
}
