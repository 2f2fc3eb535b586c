//! `--data FILE`: the plotted series in long form, one row per point, so
//! charts can be re-drawn elsewhere (pandas, polars, DuckDB, a
//! spreadsheet). A name ending in `.parquet` writes the same rows as a
//! typed Parquet file, a CSV otherwise: the rows are formatted once as CSV
//! fields and [`TableWriter`] writes them in either format
//! (docs/analyze.md#data-file has the columns and their Parquet types).
//!
//! Columns, by [`DataLayout`]: `kernel,instance,sample,metric,value`;
//! stall charts name the X column `ip` (the instruction address, which
//! the caller writes as `0x…` hex, docs/compatibility.md#analyze-data-ip)
//! and leave `instance` empty; charts over time (analyze `--x time`) add
//! `time_us` after `sample`, which then holds the point's position in its
//! series; files with report validity columns end with `report`.
//! Values use Rust's shortest round-trip float format (`inf` for a
//! division by a zero `GpuTime[ns]`), so a Parquet `DOUBLE` read back from
//! them is the plotted value bit for bit.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

use crate::model::Chart;
use crate::number::shortest;
use crate::parquet::{Column, Schema};
use crate::table::{TableFormat, TableWriter};

/// What the X value of a point is, which names and types the X columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataX {
    /// The sample ordinal within the instance: `sample`, an integer.
    Sample,
    /// The tick label of a stall chart (the instruction address): `ip`, a
    /// string; stall charts have no instance, so `instance` may be empty
    /// (null in Parquet).
    Ip,
    /// Time in µs since the instance's first sample (analyze `--x time`):
    /// `sample`, the point's 0-based position in its series, then
    /// `time_us`, a float.
    Time,
}

/// The columns of one `--data` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataLayout {
    pub x: DataX,
    /// Rows end with a `report` column (the validity of the sample's query
    /// report: `valid`, `doubtful`, `invalid`): only files with validity
    /// columns, so that other `--data` files keep their five columns byte
    /// for byte.
    pub marked: bool,
}

impl DataLayout {
    /// The metric charts' default layout: `kernel,instance,sample,metric,value`.
    pub const SAMPLES: DataLayout = DataLayout {
        x: DataX::Sample,
        marked: false,
    };
    /// Stall charts: `kernel,instance,ip,metric,value`.
    pub const STALLS: DataLayout = DataLayout {
        x: DataX::Ip,
        marked: false,
    };

    /// The columns with their Parquet types (a CSV uses their names as its
    /// header): names dictionary-encoded strings, `instance` and `sample`
    /// `INT64`, `time_us` and `value` `DOUBLE` (`inf` and `NaN` allowed).
    pub fn schema(&self) -> Schema {
        let mut columns = vec![Column::utf8("kernel")];
        columns.push(match self.x {
            DataX::Ip => Column::int64("instance").nullable(),
            DataX::Sample | DataX::Time => Column::int64("instance"),
        });
        match self.x {
            DataX::Sample => columns.push(Column::int64("sample")),
            DataX::Ip => columns.push(Column::utf8("ip")),
            DataX::Time => {
                columns.push(Column::int64("sample"));
                columns.push(Column::float64("time_us"));
            }
        }
        columns.push(Column::utf8("metric"));
        columns.push(Column::float64("value"));
        if self.marked {
            // A point without a mark is written empty: null, not "".
            columns.push(Column::utf8("report").nullable());
        }
        Schema::new(columns)
    }
}

/// The table of plotted series, written into `W` (a file by default).
pub struct DataWriter<W: Write + Send = AtomicFile> {
    out: TableWriter<W>,
    layout: DataLayout,
    rows: u64,
}

impl DataWriter<AtomicFile> {
    /// Starts the file `path`, Parquet when its name ends in `.parquet`,
    /// CSV otherwise; nothing is visible there before
    /// [`DataWriter::finish`].
    pub fn create(path: &Path, layout: DataLayout) -> io::Result<DataWriter> {
        DataWriter::new(
            AtomicFile::create(path)?,
            TableFormat::of_path(path),
            layout,
        )
    }

    /// Ends the table and moves the file into place.
    pub fn finish(self) -> io::Result<()> {
        self.into_inner()?.commit()
    }

    /// Gives the file up (see `unitrace_core::AtomicFile::discard`).
    pub fn discard(self) {
        if let Ok(file) = self.into_inner() {
            file.discard();
        }
    }
}

impl<W: Write + Send> DataWriter<W> {
    /// Starts the table in `out` (a CSV's header row at once).
    pub fn new(out: W, format: TableFormat, layout: DataLayout) -> io::Result<DataWriter<W>> {
        Ok(DataWriter {
            out: TableWriter::new(out, format, &layout.schema())?,
            layout,
            rows: 0,
        })
    }

    /// Appends every point of every series of `chart`; the metric column is
    /// the series name followed by `metric_suffix` (throughput charts use
    /// `/GpuTime[ns]`, so they stay apart from the metric's own chart).
    pub fn write_chart(
        &mut self,
        kernel: &str,
        instance: Option<u64>,
        chart: &Chart,
        metric_suffix: &str,
    ) -> io::Result<()> {
        self.write_marked_chart(kernel, instance, chart, metric_suffix, &[])
    }

    /// [`DataWriter::write_chart`] with the mark of each point (by
    /// position in its series); a marked writer writes `marks[pos]` (empty
    /// when missing) in the `report` column, an unmarked one ignores them.
    pub fn write_marked_chart(
        &mut self,
        kernel: &str,
        instance: Option<u64>,
        chart: &Chart,
        metric_suffix: &str,
        marks: &[&str],
    ) -> io::Result<()> {
        let instance = instance.map(|i| i.to_string()).unwrap_or_default();
        for series in &chart.series {
            let metric = format!("{}{metric_suffix}", series.name);
            for (pos, &(x, y)) in series.points.iter().enumerate() {
                // The X as drawn: the tick label, or the number.
                let x_text: Cow<str> = match &chart.x_tick_labels {
                    Some(labels) => labels.get(pos).map_or(Cow::Borrowed(""), |l| l.into()),
                    None => shortest(x).into(),
                };
                let value = shortest(y);
                let position = (self.layout.x == DataX::Time).then(|| pos.to_string());
                let mark = self
                    .layout
                    .marked
                    .then(|| marks.get(pos).copied().unwrap_or_default());
                let fields = [
                    Some(kernel),
                    Some(instance.as_str()),
                    position.as_deref(),
                    Some(&*x_text),
                    Some(metric.as_str()),
                    Some(value.as_str()),
                    mark,
                ];
                self.out.write_record(fields.iter().flatten())?;
                self.rows += 1;
            }
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Ends the table (a Parquet file's footer) and hands back its
    /// destination.
    pub fn into_inner(self) -> io::Result<W> {
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChartKind, Series};
    use crate::table::{parquet_schema, same_as_csv};

    fn chart(points: Vec<(f64, f64)>, labels: Option<Vec<&str>>) -> Chart {
        Chart {
            title_lines: vec!["t".into()],
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "A[%]".into(),
                points,
            }],
            kind: ChartKind::Line,
            x_tick_labels: labels.map(|l| l.into_iter().map(String::from).collect()),
        }
    }

    fn csv_of(layout: DataLayout, write: impl Fn(&mut DataWriter<Vec<u8>>)) -> String {
        let mut w = DataWriter::new(Vec::new(), TableFormat::Csv, layout).unwrap();
        write(&mut w);
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    /// The same rows written as Parquet equal the CSV's, and the columns
    /// have `types` (`name:Type`, `?` for nullable).
    fn parquet_matches(
        layout: DataLayout,
        write: impl Fn(&mut DataWriter<Vec<u8>>),
        types: &[&str],
    ) {
        let csv = csv_of(layout, &write);
        let mut w = DataWriter::new(Vec::new(), TableFormat::Parquet, layout).unwrap();
        write(&mut w);
        let rows = w.rows();
        let pq = w.into_inner().unwrap();
        assert_eq!(rows as usize, csv.lines().count() - 1);
        same_as_csv(csv.as_bytes(), pq.clone()).unwrap();
        let schema = parquet_schema(pq).unwrap();
        let got: Vec<String> = schema
            .columns
            .iter()
            .map(|c| {
                let q = if c.nullable { "?" } else { "" };
                format!("{}:{:?}{q}", c.name, c.ty)
            })
            .collect();
        assert_eq!(got, types);
        assert_eq!(schema, layout.schema());
    }

    #[test]
    fn writes_long_form_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        let chart = chart(vec![(1.0, 2.5), (2.0, f64::INFINITY)], None);
        let mut w = DataWriter::create(&path, DataLayout::SAMPLES).unwrap();
        w.write_chart("k, \"q\"", Some(3), &chart, "").unwrap();
        assert!(!path.exists(), "nothing visible before finish");
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = "kernel,instance,sample,metric,value\n\"k, \"\"q\"\"\",3,1,A[%],2.5\n\"k, \"\"q\"\"\",3,2,A[%],inf\n";
        assert_eq!(text, expected);
        let mut w = DataWriter::new(Vec::new(), TableFormat::Csv, DataLayout::SAMPLES).unwrap();
        w.write_chart("k, \"q\"", Some(3), &chart, "").unwrap();
        assert_eq!(w.rows(), 2);
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            expected
        );
        let text = csv_of(DataLayout::STALLS, |_| {});
        assert_eq!(text, "kernel,instance,ip,metric,value\n");
    }

    #[test]
    fn timed_rows_carry_the_position_and_the_time() {
        let chart = chart(vec![(0.0, 2.5), (49.981, 3.0)], None);
        let timed = |marked| DataLayout {
            x: DataX::Time,
            marked,
        };
        assert_eq!(
            csv_of(timed(false), |w| w
                .write_chart("k", Some(1), &chart, "")
                .unwrap()),
            "kernel,instance,sample,time_us,metric,value\nk,1,0,0,A[%],2.5\nk,1,1,49.981,A[%],3\n"
        );
        assert_eq!(
            csv_of(timed(true), |w| w
                .write_marked_chart("k", Some(1), &chart, "", &["valid"])
                .unwrap()),
            "kernel,instance,sample,time_us,metric,value,report\nk,1,0,0,A[%],2.5,valid\nk,1,1,49.981,A[%],3,\n"
        );
    }

    #[test]
    fn parquet_holds_the_csv_rows_typed_in_every_layout() {
        let samples = chart(
            vec![(0.0, 2.5), (1.0, f64::INFINITY), (2.0, f64::NAN)],
            None,
        );
        let times = chart(vec![(0.0, 1.0), (0.125, -3.5), (f64::NAN, 7.0)], None);
        let ips = chart(vec![(0.0, 4.0), (1.0, 0.0)], Some(vec!["0x20", "0x1a0"]));
        parquet_matches(
            DataLayout::SAMPLES,
            |w| {
                w.write_chart("gemm", Some(1), &samples, "").unwrap();
                w.write_chart("gemm", Some(2), &samples, "/GpuTime[ns]")
                    .unwrap();
            },
            &[
                "kernel:Utf8",
                "instance:Int64",
                "sample:Int64",
                "metric:Utf8",
                "value:Float64",
            ],
        );
        parquet_matches(
            DataLayout {
                x: DataX::Sample,
                marked: true,
            },
            |w| {
                w.write_marked_chart("gemm", Some(1), &samples, "", &["valid", "doubtful"])
                    .unwrap()
            },
            &[
                "kernel:Utf8",
                "instance:Int64",
                "sample:Int64",
                "metric:Utf8",
                "value:Float64",
                "report:Utf8?",
            ],
        );
        for marked in [false, true] {
            let mut types = vec![
                "kernel:Utf8",
                "instance:Int64",
                "sample:Int64",
                "time_us:Float64",
                "metric:Utf8",
                "value:Float64",
            ];
            if marked {
                types.push("report:Utf8?");
            }
            parquet_matches(
                DataLayout {
                    x: DataX::Time,
                    marked,
                },
                |w| {
                    w.write_marked_chart("k", Some(7), &times, "", &["invalid"])
                        .unwrap()
                },
                &types,
            );
        }
        parquet_matches(
            DataLayout::STALLS,
            |w| w.write_chart("k", None, &ips, "").unwrap(),
            &[
                "kernel:Utf8",
                "instance:Int64?",
                "ip:Utf8",
                "metric:Utf8",
                "value:Float64",
            ],
        );
    }

    #[test]
    fn a_sample_that_is_not_a_number_is_an_error_in_parquet() {
        // Metric layouts type `sample` as an integer: a labelled chart
        // there is the caller's mistake, reported, never a panic.
        let labelled = chart(vec![(0.0, 1.0)], Some(vec!["0x20"]));
        let mut w = DataWriter::new(Vec::new(), TableFormat::Parquet, DataLayout::SAMPLES).unwrap();
        let e = w.write_chart("k", Some(1), &labelled, "").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("sample"), "{e}");
    }
}
