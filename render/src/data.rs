//! `--data FILE.csv`: the plotted series in long form, one row per point,
//! columns `kernel,instance,sample,metric,value`, so charts can be re-drawn
//! elsewhere (pandas, polars, a spreadsheet). `sample` is the X value of the
//! point (the sample ordinal within its instance), or the tick label (the
//! `IP[Address]`) for stall charts, whose writer names that column `ip`
//! ([`DataWriter::create_with_x_column`]; the caller writes the address as
//! `0x…` hex, docs/compatibility.md#analyze-data-ip); `instance` is empty
//! for stall charts. Charts over time (analyze `--x time`,
//! [`DataWriter::create_timed`]) add a `time_us` column after `sample`,
//! which then holds the point's position in its series.
//! Values use Rust's shortest round-trip float format (`inf` for a division
//! by a zero `GpuTime[ns]`).

use std::io::{self, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

use crate::model::Chart;
use crate::number::shortest;

/// The CSV of plotted series, written into `W` (a file by default).
pub struct DataWriter<W: Write = AtomicFile> {
    out: csv::Writer<W>,
    rows: u64,
    /// Whether rows end with a `report` column (the validity of the
    /// sample's query report: `valid`, `doubtful`, `invalid`).
    marked: bool,
    /// Whether X values are times (analyze `--x time`): a `time_us`
    /// column after `sample`, which then holds the point's position.
    timed: bool,
}

impl DataWriter<AtomicFile> {
    /// Starts the file `path`; nothing is visible there before
    /// [`DataWriter::finish`].
    pub fn create(path: &Path) -> io::Result<DataWriter> {
        DataWriter::new(AtomicFile::create(path)?)
    }

    /// Like [`DataWriter::create`], with the X column named `x_column`
    /// instead of `sample`.
    pub fn create_with_x_column(path: &Path, x_column: &str) -> io::Result<DataWriter> {
        DataWriter::with_x_column(AtomicFile::create(path)?, x_column)
    }

    /// Like [`DataWriter::create`] with a trailing `report` column
    /// (rows written with [`DataWriter::write_marked_chart`]).
    pub fn create_marked(path: &Path) -> io::Result<DataWriter> {
        DataWriter::new_marked(AtomicFile::create(path)?)
    }

    /// The CSV of charts whose X values are times in µs (analyze `--x
    /// time`): columns `kernel,instance,sample,time_us,metric,value`
    /// (then `report` when `marked`), `sample` being the 0-based position
    /// of the point in its series.
    pub fn create_timed(path: &Path, marked: bool) -> io::Result<DataWriter> {
        DataWriter::new_timed(AtomicFile::create(path)?, marked)
    }

    /// Flushes and moves the file into place.
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

impl<W: Write> DataWriter<W> {
    /// Starts the CSV (its header row) in `out`.
    pub fn new(out: W) -> io::Result<DataWriter<W>> {
        DataWriter::with_x_column(out, "sample")
    }

    /// Starts the CSV with the X column named `x_column`.
    pub fn with_x_column(out: W, x_column: &str) -> io::Result<DataWriter<W>> {
        let mut out = csv::Writer::from_writer(out);
        out.write_record(["kernel", "instance", x_column, "metric", "value"])?;
        Ok(DataWriter {
            out,
            rows: 0,
            marked: false,
            timed: false,
        })
    }

    /// See [`DataWriter::create_timed`].
    pub fn new_timed(out: W, marked: bool) -> io::Result<DataWriter<W>> {
        let mut out = csv::Writer::from_writer(out);
        let columns = ["kernel", "instance", "sample", "time_us", "metric", "value"];
        if marked {
            out.write_record(columns.iter().chain(&["report"]))?;
        } else {
            out.write_record(columns)?;
        }
        Ok(DataWriter {
            out,
            rows: 0,
            marked,
            timed: true,
        })
    }

    /// A writer whose rows end with a `report` column: files with
    /// validity columns only, so that other `--data` files keep their
    /// five columns byte for byte.
    pub fn new_marked(out: W) -> io::Result<DataWriter<W>> {
        let mut out = csv::Writer::from_writer(out);
        out.write_record(["kernel", "instance", "sample", "metric", "value", "report"])?;
        Ok(DataWriter {
            out,
            rows: 0,
            marked: true,
            timed: false,
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
            for (pos, &(x, y)) in series.points.iter().enumerate() {
                let sample = match &chart.x_tick_labels {
                    Some(labels) => labels.get(pos).cloned().unwrap_or_default(),
                    None => shortest(x),
                };
                let metric = format!("{}{metric_suffix}", series.name);
                let value = shortest(y);
                if self.timed {
                    let position = pos.to_string();
                    let mut record = vec![kernel, &instance, &position, &sample, &metric, &value];
                    if self.marked {
                        record.push(marks.get(pos).copied().unwrap_or_default());
                    }
                    self.out.write_record(record)?;
                } else if self.marked {
                    let mark = marks.get(pos).copied().unwrap_or_default();
                    self.out
                        .write_record([kernel, &instance, &sample, &metric, &value, mark])?;
                } else {
                    self.out
                        .write_record([kernel, &instance, &sample, &metric, &value])?;
                }
                self.rows += 1;
            }
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes the CSV and hands back its destination.
    pub fn into_inner(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChartKind, Series};

    #[test]
    fn writes_long_form_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        let chart = Chart {
            title_lines: vec!["t".into()],
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "A[%]".into(),
                points: vec![(1.0, 2.5), (2.0, f64::INFINITY)],
            }],
            kind: ChartKind::Line,
            x_tick_labels: None,
        };
        let mut w = DataWriter::create(&path).unwrap();
        w.write_chart("k, \"q\"", Some(3), &chart, "").unwrap();
        assert!(!path.exists(), "nothing visible before finish");
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = "kernel,instance,sample,metric,value\n\"k, \"\"q\"\"\",3,1,A[%],2.5\n\"k, \"\"q\"\"\",3,2,A[%],inf\n";
        assert_eq!(text, expected);
        let mut w = DataWriter::new(Vec::new()).unwrap();
        w.write_chart("k, \"q\"", Some(3), &chart, "").unwrap();
        assert_eq!(w.rows(), 2);
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            expected
        );
        let w = DataWriter::with_x_column(Vec::new(), "ip").unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "kernel,instance,ip,metric,value\n");
    }

    #[test]
    fn timed_rows_carry_the_position_and_the_time() {
        let chart = Chart {
            title_lines: vec!["t".into()],
            x_label: "Time (µs)".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "A[%]".into(),
                points: vec![(0.0, 2.5), (49.981, 3.0)],
            }],
            kind: ChartKind::Line,
            x_tick_labels: None,
        };
        let mut w = DataWriter::new_timed(Vec::new(), false).unwrap();
        w.write_chart("k", Some(1), &chart, "").unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            "kernel,instance,sample,time_us,metric,value\nk,1,0,0,A[%],2.5\nk,1,1,49.981,A[%],3\n"
        );
        let mut w = DataWriter::new_timed(Vec::new(), true).unwrap();
        w.write_marked_chart("k", Some(1), &chart, "", &["valid"])
            .unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            "kernel,instance,sample,time_us,metric,value,report\nk,1,0,0,A[%],2.5,valid\nk,1,1,49.981,A[%],3,\n"
        );
    }
}
