//! The rows both writers are given: a table of typed columns in memory,
//! strings of a column back to back (no allocation per value), and its
//! own small binary dump, so that the polars build, which holds no
//! Parquet reader of ours, starts from exactly the same columns as the
//! `parquet` build (docs/benchmarks.md#parquet-writer-polars-vs-parquet).
//! Only `std`: both builds compile this file.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// The values of one column; `valid[i]` is false for a null (whose value
/// slot holds 0 or an empty string).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Int64(Vec<i64>),
    /// The i-th string is `bytes[ends[i-1]..ends[i]]` (from 0 for i = 0).
    Utf8 {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// `OPTIONAL` in the source file (else `REQUIRED`).
    pub nullable: bool,
    pub valid: Vec<bool>,
    pub values: Values,
}

impl Column {
    pub fn int64(name: &str, nullable: bool) -> Column {
        Column {
            name: name.to_owned(),
            nullable,
            valid: Vec::new(),
            values: Values::Int64(Vec::new()),
        }
    }

    pub fn utf8(name: &str, nullable: bool) -> Column {
        Column {
            name: name.to_owned(),
            nullable,
            valid: Vec::new(),
            values: Values::Utf8 {
                bytes: Vec::new(),
                ends: Vec::new(),
            },
        }
    }

    pub fn len(&self) -> usize {
        self.valid.len()
    }

    /// The `i`-th string of a string column.
    #[inline]
    pub fn str_at<'a>(bytes: &'a [u8], ends: &[usize], i: usize) -> &'a str {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        // Checked once when the column was filled (see `push_str`/`load`).
        std::str::from_utf8(&bytes[start..ends[i]]).unwrap_or("")
    }

    pub fn push_i64(&mut self, v: Option<i64>) {
        if let Values::Int64(vs) = &mut self.values {
            vs.push(v.unwrap_or(0));
            self.valid.push(v.is_some());
        }
    }

    pub fn push_str(&mut self, v: Option<&[u8]>) -> io::Result<()> {
        if let Values::Utf8 { bytes, ends } = &mut self.values {
            if let Some(v) = v {
                std::str::from_utf8(v).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("column {}: {e}", self.name),
                    )
                })?;
                bytes.extend_from_slice(v);
            }
            ends.push(bytes.len());
            self.valid.push(v.is_some());
        }
        Ok(())
    }

    /// A checksum of the column's values in row order (FNV-1a over a tag
    /// per value, the value, and a string's length): equal for two
    /// columns exactly when their values and nulls are, up to hash
    /// collisions. Independent of how a file declares nullability.
    pub fn checksum(&self) -> u64 {
        let mut h = Fnv::new();
        match &self.values {
            Values::Int64(vs) => {
                for (v, ok) in vs.iter().zip(&self.valid) {
                    if *ok {
                        h.byte(1);
                        h.bytes(&v.to_le_bytes());
                    } else {
                        h.byte(0);
                    }
                }
            }
            Values::Utf8 { bytes, ends } => {
                for (i, ok) in self.valid.iter().enumerate() {
                    if *ok {
                        let s = Column::str_at(bytes, ends, i);
                        h.byte(1);
                        h.bytes(&(s.len() as u64).to_le_bytes());
                        h.bytes(s.as_bytes());
                    } else {
                        h.byte(0);
                    }
                }
            }
        }
        h.0
    }
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    #[inline]
    fn byte(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    #[inline]
    fn bytes(&mut self, bs: &[u8]) {
        for &b in bs {
            self.byte(b);
        }
    }
}

/// Columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// Bytes of the values in memory (strings, 8 per integer).
    pub fn value_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(|c| match &c.values {
                Values::Int64(vs) => vs.len() * 8,
                Values::Utf8 { bytes, .. } => bytes.len(),
            })
            .sum()
    }

    /// Appends `other`'s rows (same columns in the same order).
    pub fn append(&mut self, other: Table) -> io::Result<()> {
        if self.columns.is_empty() {
            *self = other;
            return Ok(());
        }
        let names = |t: &Table| t.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        if names(self) != names(&other) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("columns {:?} != {:?}", names(&other), names(self)),
            ));
        }
        for (a, b) in self.columns.iter_mut().zip(other.columns) {
            a.valid.extend(b.valid);
            match (&mut a.values, b.values) {
                (Values::Int64(x), Values::Int64(y)) => x.extend(y),
                (
                    Values::Utf8 { bytes, ends },
                    Values::Utf8 {
                        bytes: b2,
                        ends: e2,
                    },
                ) => {
                    let base = bytes.len();
                    bytes.extend(b2);
                    ends.extend(e2.into_iter().map(|e| e + base));
                }
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("column {} changes type between files", a.name),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Writes the dump (see [`Table::load`]).
    pub fn dump(&self, path: &Path) -> io::Result<()> {
        let mut w = BufWriter::new(File::create(path)?);
        w.write_all(MAGIC)?;
        w.write_all(&(self.rows() as u64).to_le_bytes())?;
        w.write_all(&(self.columns.len() as u32).to_le_bytes())?;
        for c in &self.columns {
            w.write_all(&(c.name.len() as u32).to_le_bytes())?;
            w.write_all(c.name.as_bytes())?;
            let ty = match c.values {
                Values::Int64(_) => 0u8,
                Values::Utf8 { .. } => 1,
            };
            w.write_all(&[ty, u8::from(c.nullable)])?;
            let valid: Vec<u8> = c.valid.iter().map(|&v| u8::from(v)).collect();
            w.write_all(&valid)?;
            match &c.values {
                Values::Int64(vs) => {
                    for v in vs {
                        w.write_all(&v.to_le_bytes())?;
                    }
                }
                Values::Utf8 { bytes, ends } => {
                    for e in ends {
                        w.write_all(&(*e as u64).to_le_bytes())?;
                    }
                    w.write_all(bytes)?;
                }
            }
        }
        w.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    }

    /// Reads a dump: magic, rows (u64), columns (u32), then per column its
    /// name (u32 length, UTF-8), type (0 int64, 1 string), nullable, one
    /// validity byte per row, and the values (i64 per row; or u64 end per
    /// row and the string bytes), integers little-endian.
    pub fn load(path: &Path) -> io::Result<Table> {
        let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
        let mut magic = [0u8; MAGIC.len()];
        r.read_exact(&mut magic)?;
        if magic != *MAGIC {
            return Err(bad(format!("{}: not a column dump", path.display())));
        }
        let rows = read_u64(&mut r)? as usize;
        let ncols = read_u32(&mut r)? as usize;
        let mut columns = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let n = read_u32(&mut r)? as usize;
            let mut name = vec![0u8; n];
            r.read_exact(&mut name)?;
            let name = String::from_utf8(name).map_err(|e| bad(e.to_string()))?;
            let mut head = [0u8; 2];
            r.read_exact(&mut head)?;
            let mut valid = vec![0u8; rows];
            r.read_exact(&mut valid)?;
            let valid: Vec<bool> = valid.into_iter().map(|v| v != 0).collect();
            let values = match head[0] {
                0 => {
                    let mut raw = vec![0u8; rows * 8];
                    r.read_exact(&mut raw)?;
                    Values::Int64(
                        raw.chunks_exact(8)
                            .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                            .collect(),
                    )
                }
                1 => {
                    let mut raw = vec![0u8; rows * 8];
                    r.read_exact(&mut raw)?;
                    let ends: Vec<usize> = raw
                        .chunks_exact(8)
                        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize)
                        .collect();
                    drop(raw);
                    let total = ends.last().copied().unwrap_or(0);
                    if ends.windows(2).any(|w| w[0] > w[1]) {
                        return Err(bad(format!("column {name}: string ends go backwards")));
                    }
                    let mut bytes = vec![0u8; total];
                    r.read_exact(&mut bytes)?;
                    std::str::from_utf8(&bytes).map_err(|e| bad(format!("column {name}: {e}")))?;
                    Values::Utf8 { bytes, ends }
                }
                t => return Err(bad(format!("column {name}: unknown type {t}"))),
            };
            columns.push(Column {
                name,
                nullable: head[1] != 0,
                valid,
                values,
            });
        }
        Ok(Table { columns })
    }
}

const MAGIC: &[u8; 10] = b"PQCHOICE1\n";

fn bad(problem: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, problem)
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut a = Column::int64("start_ns", false);
        let mut b = Column::utf8("name", true);
        let mut c = Column::int64("bytes", true);
        for i in 0..5i64 {
            a.push_i64(Some(i * 1000));
            b.push_str((i % 2 == 0).then_some(format!("k{i}").as_bytes()))
                .unwrap();
            c.push_i64((i != 3).then_some(i));
        }
        Table {
            columns: vec![a, b, c],
        }
    }

    #[test]
    fn a_dump_loads_back_equal() {
        let t = sample();
        let dir = std::env::temp_dir().join(format!("pqchoice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.bin");
        t.dump(&p).unwrap();
        let back = Table::load(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.rows(), 5);
    }

    #[test]
    fn checksums_see_values_and_nulls_but_not_declared_nullability() {
        let t = sample();
        let mut u = t.clone();
        u.columns[0].nullable = true;
        assert_eq!(t.columns[0].checksum(), u.columns[0].checksum());
        // A null and an empty string differ; so do two values swapped.
        let mut e = Column::utf8("name", true);
        e.push_str(None).unwrap();
        let mut f = Column::utf8("name", true);
        f.push_str(Some(b"")).unwrap();
        assert_ne!(e.checksum(), f.checksum());
        let mut g = Column::int64("x", false);
        g.push_i64(Some(1));
        g.push_i64(Some(2));
        let mut h = Column::int64("x", false);
        h.push_i64(Some(2));
        h.push_i64(Some(1));
        assert_ne!(g.checksum(), h.checksum());
    }

    #[test]
    fn append_offsets_the_strings_of_the_second_table() {
        let mut t = sample();
        t.append(sample()).unwrap();
        assert_eq!(t.rows(), 10);
        let Values::Utf8 { bytes, ends } = &t.columns[1].values else {
            panic!("not a string column")
        };
        assert_eq!(Column::str_at(bytes, ends, 5), "k0");
        assert_eq!(Column::str_at(bytes, ends, 9), "k4");
    }
}
