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

/// Values of a string column that exercise every cut of the RLE /
/// bit-packing hybrid: runs of 7, 8, 9 and 40 equal values at any
/// offset, long stretches without repeats (more than one bit-packed run
/// of 63 groups), nulls alone and in stretches, and a dictionary of a few
/// hundred names (9-bit indices) whose width grows from page to page.
fn dictionary_values(n: usize) -> Vec<Option<String>> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let r = next();
        // Names used later in the column are numbered higher: the
        // dictionary keeps growing across the pages of a row group.
        let names = 2 + out.len() / 150;
        let name = || Some(format!("kernel_{}<float, {}>", r % names as u64, r % 3));
        match r % 8 {
            0 => out.extend(std::iter::repeat_n(
                name(),
                [7, 8, 9, 40][(r >> 8) as usize % 4],
            )),
            1 => out.extend(std::iter::repeat_n(None, (r >> 8) as usize % 20)),
            2 => {
                for k in 0..600 {
                    out.push(Some(format!("call_{}", (r as usize + k) % 300)));
                }
            }
            _ => out.push(if r % 16 == 3 { None } else { name() }),
        }
    }
    out.truncate(n);
    out
}

/// The `parquet` crate's own writer with the properties ParquetWriter
/// uses, writing `rows` in row groups of `group` rows.
fn crate_written(schema: &Schema, rows: &[(i64, Option<String>, String)], group: usize) -> Vec<u8> {
    use parquet::basic::ZstdLevel;
    use parquet::column::writer::ColumnWriter;
    use parquet::data_type::ByteArray;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::ColumnPath;
    use std::sync::Arc;

    assert_eq!(schema.columns.len(), 3);
    let parquet_schema = parse_message_type(
        "message schema { REQUIRED INT64 start_ns; \
         OPTIONAL BYTE_ARRAY name (STRING); REQUIRED BYTE_ARRAY kind (STRING); }",
    )
    .unwrap();
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_created_by(format!("unitrace-tools {}", env!("CARGO_PKG_VERSION")));
    for c in ["name", "kind"] {
        props = props
            .set_column_dictionary_enabled(ColumnPath::from(c), true)
            .set_column_statistics_enabled(ColumnPath::from(c), EnabledStatistics::None);
    }
    let mut w = SerializedFileWriter::new(
        Vec::new(),
        Arc::new(parquet_schema),
        Arc::new(props.build()),
    )
    .unwrap();
    for chunk in rows.chunks(group) {
        let mut g = w.next_row_group().unwrap();
        let mut c = g.next_column().unwrap().unwrap();
        let ColumnWriter::Int64ColumnWriter(t) = c.untyped() else {
            panic!()
        };
        let starts: Vec<i64> = chunk.iter().map(|r| r.0).collect();
        t.write_batch(&starts, None, None).unwrap();
        c.close().unwrap();
        let mut c = g.next_column().unwrap().unwrap();
        let ColumnWriter::ByteArrayColumnWriter(t) = c.untyped() else {
            panic!()
        };
        let names: Vec<ByteArray> = chunk
            .iter()
            .filter_map(|r| r.1.as_deref().map(ByteArray::from))
            .collect();
        let defs: Vec<i16> = chunk.iter().map(|r| r.1.is_some() as i16).collect();
        t.write_batch(&names, Some(&defs), None).unwrap();
        c.close().unwrap();
        let mut c = g.next_column().unwrap().unwrap();
        let ColumnWriter::ByteArrayColumnWriter(t) = c.untyped() else {
            panic!()
        };
        let kinds: Vec<ByteArray> = chunk
            .iter()
            .map(|r| ByteArray::from(r.2.as_str()))
            .collect();
        t.write_batch(&kinds, None, None).unwrap();
        c.close().unwrap();
        g.close().unwrap();
    }
    w.into_inner().unwrap()
}

#[test]
fn dictionary_columns_are_the_bytes_the_parquet_crate_writes() {
    // String columns without statistics are dictionary-encoded by the
    // writer itself (keyed or by value); the file must be the one the
    // crate's own dictionary encoder makes, page for page and byte for
    // byte, and read back equal.
    let schema = Schema::new(vec![
        Column::int64("start_ns"),
        Column::utf8("name").nullable().without_statistics(),
        Column::utf8("kind").without_statistics(),
    ]);
    let kinds = ["kernel", "memory", "api_call", "host_range"];
    let names = dictionary_values(130_000);
    let rows: Vec<(i64, Option<String>, String)> = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            // Long runs of one kind, then alternations.
            let k = if (i / 1000) % 2 == 0 {
                0
            } else {
                (i * 7 / 3) % 4
            };
            (i as i64 * 1000, name, kinds[k].to_string())
        })
        .collect();
    // Row groups of 50,000 rows: three pages of at most 20,480 rows each,
    // and a last, shorter group.
    let group = 50_000;
    let options = Options {
        row_group_rows: group,
        ..Options::default()
    };
    let expected = crate_written(&schema, &rows, group);

    // By value, and keyed: the key of a name is its position among the
    // distinct names (several keys may stand for one string too).
    let mut by_value = ParquetWriter::with_options(Vec::new(), &schema, options).unwrap();
    let mut keyed = ParquetWriter::with_options(Vec::new(), &schema, options).unwrap();
    let mut keys = std::collections::HashMap::new();
    for (i, (start, name, kind)) in rows.iter().enumerate() {
        let k = kinds.iter().position(|k| k == kind).unwrap() as u32;
        for (n, w) in [&mut by_value, &mut keyed].into_iter().enumerate() {
            w.push_i64(0, *start);
            match name {
                Some(s) if n == 1 => {
                    let next = keys.len() as u32;
                    let key = *keys.entry(s.clone()).or_insert(next);
                    // Every 5th row the same string under a second key.
                    let key = if i % 5 == 0 { key + 1_000_000 } else { key };
                    w.push_key(1, key, s);
                }
                Some(s) => w.push_str(1, s),
                None => w.push_null(1),
            }
            if n == 1 {
                w.push_key(2, k, kind);
            } else {
                w.push_str(2, kind);
            }
            w.end_row().unwrap();
        }
    }
    let by_value = by_value.finish().unwrap();
    let keyed = keyed.finish().unwrap();
    assert!(by_value == expected, "by value: not the crate's bytes");
    assert!(keyed == expected, "keyed: not the crate's bytes");

    let (reader, back) = rows_of(keyed);
    assert_eq!(reader.metadata().num_row_groups(), 3);
    assert_eq!(back.len(), rows.len());
    for (got, (start, name, kind)) in back.iter().zip(&rows) {
        let name = match name {
            Some(s) => Field::Str(s.clone()),
            None => Field::Null,
        };
        assert_eq!(
            got,
            &vec![Field::Long(*start), name, Field::Str(kind.clone())]
        );
    }
}

#[test]
fn dictionary_column_edge_cases_read_back() {
    // One value (indices 0 bits wide), all nulls (an empty dictionary),
    // a key past the key table, and a string column with statistics given
    // keys (written by value).
    let schema = Schema::new(vec![
        Column::utf8("one").without_statistics(),
        Column::utf8("none").nullable().without_statistics(),
        Column::utf8("far").without_statistics(),
        Column::utf8("stats"),
    ]);
    let mut w = ParquetWriter::new(Vec::new(), &schema).unwrap();
    for i in 0..100u32 {
        w.push_key(0, 7, "same");
        w.push_null(1);
        w.push_key(2, u32::MAX - (i % 2), if i % 2 == 0 { "a" } else { "b" });
        w.push_key(3, i % 3, ["x", "y", "z"][(i % 3) as usize]);
        w.end_row().unwrap();
    }
    let (_, rows) = rows_of(w.finish().unwrap());
    assert_eq!(rows.len(), 100);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r,
            &vec![
                Field::Str("same".into()),
                Field::Null,
                Field::Str(if i % 2 == 0 { "a" } else { "b" }.into()),
                Field::Str(["x", "y", "z"][i % 3].into()),
            ]
        );
    }
    // A key on a non-string column is a misuse, reported as such.
    let mut w = ParquetWriter::new(Vec::new(), &Schema::new(vec![Column::int64("i")])).unwrap();
    w.push_key(0, 1, "x");
    assert_eq!(
        w.end_row().unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
}
