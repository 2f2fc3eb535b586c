//! The Parquet writer read back with the parquet crate's own reader:
//! types, nulls, dictionary encoding of names, zstd, bounded row groups.

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, LogicalType, Repetition, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use unitrace_render::parquet::{Column, Options, ParquetWriter, Schema, Value};

fn schema() -> Schema {
    Schema::new(vec![
        Column::utf8("kernel"),
        Column::int64("start_ns"),
        Column::float64("value").nullable(),
        Column::bool("valid"),
        Column::utf8("note").nullable(),
    ])
}

fn rows_of(bytes: Vec<u8>) -> (SerializedFileReader<Bytes>, Vec<Vec<Field>>) {
    let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect();
    (reader, rows)
}

#[test]
fn values_types_and_nulls_round_trip() {
    let mut w = ParquetWriter::new(Vec::new(), &schema()).unwrap();
    w.push_str(0, "gemm");
    w.push_i64(1, 1_733_400_001_586_424_000);
    w.push_f64(2, 4.5);
    w.push_bool(3, true);
    w.push_null(4);
    w.end_row().unwrap();
    w.write_row(&[
        Value::Str("copy"),
        Value::Int64(-3),
        Value::Null,
        Value::Bool(false),
        Value::Str("x"),
    ])
    .unwrap();
    w.write_text_row(&["gemm", "42", "inf", "False", ""])
        .unwrap();
    assert_eq!(w.rows(), 3);
    let (reader, rows) = rows_of(w.finish().unwrap());
    assert_eq!(
        rows,
        vec![
            vec![
                Field::Str("gemm".into()),
                Field::Long(1_733_400_001_586_424_000),
                Field::Double(4.5),
                Field::Bool(true),
                Field::Null
            ],
            vec![
                Field::Str("copy".into()),
                Field::Long(-3),
                Field::Null,
                Field::Bool(false),
                Field::Str("x".into())
            ],
            vec![
                Field::Str("gemm".into()),
                Field::Long(42),
                Field::Double(f64::INFINITY),
                Field::Bool(false),
                Field::Null
            ],
        ]
    );
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    let kinds: Vec<_> = (0..5).map(|i| schema.column(i).physical_type()).collect();
    assert_eq!(
        kinds,
        [
            PhysicalType::BYTE_ARRAY,
            PhysicalType::INT64,
            PhysicalType::DOUBLE,
            PhysicalType::BOOLEAN,
            PhysicalType::BYTE_ARRAY
        ]
    );
    assert_eq!(
        schema.column(0).logical_type_ref(),
        Some(&LogicalType::String)
    );
    assert_eq!(
        schema.column(1).self_type().get_basic_info().repetition(),
        Repetition::REQUIRED
    );
    assert_eq!(
        schema.column(2).self_type().get_basic_info().repetition(),
        Repetition::OPTIONAL
    );
    let group = meta.row_group(0);
    for c in group.columns() {
        assert!(
            matches!(c.compression(), Compression::ZSTD(_)),
            "{:?}",
            c.compression()
        );
    }
    // Names are dictionary-encoded, numbers are not.
    assert!(group.column(0).dictionary_page_offset().is_some());
    assert!(group.column(1).dictionary_page_offset().is_none());
    let encodings: Vec<Encoding> = group.column(0).encodings().collect();
    assert!(
        encodings.contains(&Encoding::RLE_DICTIONARY),
        "{encodings:?}"
    );
}

#[test]
fn row_groups_are_bounded_by_rows_and_bytes() {
    let schema = Schema::new(vec![Column::int64("i"), Column::utf8("name")]);
    let options = Options {
        row_group_rows: 1000,
        ..Options::default()
    };
    let mut w = ParquetWriter::with_options(Vec::new(), &schema, options).unwrap();
    for i in 0..2500 {
        w.push_i64(0, i);
        w.push_str(1, if i % 2 == 0 { "even" } else { "odd" });
        w.end_row().unwrap();
    }
    assert_eq!(w.row_groups(), 2);
    let (reader, rows) = rows_of(w.finish().unwrap());
    let sizes: Vec<i64> = reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(sizes, [1000, 1000, 500]);
    assert_eq!(rows.len(), 2500);
    assert_eq!(
        rows[2499],
        vec![Field::Long(2499), Field::Str("odd".into())]
    );

    // A byte budget cuts row groups of long strings earlier.
    let options = Options {
        row_group_rows: 1_000_000,
        row_group_bytes: 100_000,
        ..Options::default()
    };
    let mut w = ParquetWriter::with_options(Vec::new(), &schema, options).unwrap();
    let long = "k".repeat(1000);
    for i in 0..1000 {
        w.push_i64(0, i);
        w.push_str(1, &long);
        w.end_row().unwrap();
    }
    let (reader, _) = rows_of(w.finish().unwrap());
    assert!(
        reader.metadata().num_row_groups() >= 10,
        "{}",
        reader.metadata().num_row_groups()
    );
}

#[test]
fn empty_table_is_a_valid_file() {
    let (reader, rows) = rows_of(
        ParquetWriter::new(Vec::new(), &schema())
            .unwrap()
            .finish()
            .unwrap(),
    );
    assert!(rows.is_empty());
    assert_eq!(
        reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .num_columns(),
        5
    );
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let mut w = ParquetWriter::new(Vec::new(), &schema()).unwrap();
    w.push_i64(0, 1); // column 0 is a string
    assert_eq!(
        w.end_row().unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );

    let mut w = ParquetWriter::new(Vec::new(), &schema()).unwrap();
    let e = w
        .write_text_row(&["k", "12.5", "", "true", ""])
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("start_ns"), "{e}");

    let mut w = ParquetWriter::new(Vec::new(), &schema()).unwrap();
    w.push_str(0, "k");
    w.end_row().unwrap();
    assert!(w
        .finish()
        .unwrap_err()
        .to_string()
        .contains("values for 1 rows"));

    let mut w = ParquetWriter::new(Vec::new(), &schema()).unwrap();
    assert!(w.write_text_row(&["only one"]).is_err());
    w.push_null(1); // not nullable
    assert!(w.end_row().is_err());
}

#[test]
fn table_writer_writes_the_same_rows_as_csv_and_parquet() {
    use unitrace_render::table::{TableFormat, TableWriter};
    let schema = Schema::new(vec![
        Column::utf8("kernel"),
        Column::int64("time_ns"),
        Column::float64("pct").nullable(),
        Column::bool("plotted"),
    ]);
    let rows = [
        ["gemm", "1200", "60.5", "yes"],
        ["copy, \"x\"", "800", "", "no"],
    ];
    let mut csv = TableWriter::new(Vec::new(), TableFormat::Csv, &schema).unwrap();
    let mut pq = TableWriter::new(Vec::new(), TableFormat::Parquet, &schema).unwrap();
    for r in rows {
        csv.write_record(r).unwrap();
        pq.write_record(r).unwrap();
    }
    assert!(pq.write_record(["too", "few"]).is_err());
    let csv = String::from_utf8(csv.finish().unwrap()).unwrap();
    assert_eq!(
        csv,
        "kernel,time_ns,pct,plotted\ngemm,1200,60.5,yes\n\"copy, \"\"x\"\"\",800,,no\n"
    );
    // The failed row above left the Parquet writer in error; a fresh one.
    let mut pq = TableWriter::new(Vec::new(), TableFormat::Parquet, &schema).unwrap();
    for r in rows {
        pq.write_record(r).unwrap();
    }
    let (_, got) = rows_of(pq.finish().unwrap());
    assert_eq!(
        got,
        vec![
            vec![
                Field::Str("gemm".into()),
                Field::Long(1200),
                Field::Double(60.5),
                Field::Bool(true)
            ],
            vec![
                Field::Str("copy, \"x\"".into()),
                Field::Long(800),
                Field::Null,
                Field::Bool(false)
            ],
        ]
    );
    assert_eq!(
        TableFormat::of_path("a/b.PARQUET".as_ref()),
        TableFormat::Parquet
    );
    assert_eq!(TableFormat::of_path("a/b.csv".as_ref()), TableFormat::Csv);
}
