//! Named columns: the tables the writers take, with owned names, built from the core's tables
//! or concatenated from chunks.

use flowshare_core::results::{Column, Table};

/// One column.
#[derive(Clone, Debug, PartialEq)]
pub enum Col {
    /// 64-bit floats (NaN where a value does not apply).
    F64(Vec<f64>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Text.
    Str(Vec<String>),
}

impl Col {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Col::F64(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::Str(v) => v.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` as a float (text is NaN).
    pub fn f64_at(&self, i: usize) -> f64 {
        match self {
            Col::F64(v) => v[i],
            Col::I64(v) => v[i] as f64,
            Col::Str(_) => f64::NAN,
        }
    }

    /// The column as floats (text as NaN).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Col::F64(v) => v.clone(),
            Col::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Col::Str(v) => vec![f64::NAN; v.len()],
        }
    }

    fn empty_like(&self) -> Col {
        match self {
            Col::F64(_) => Col::F64(Vec::new()),
            Col::I64(_) => Col::I64(Vec::new()),
            Col::Str(_) => Col::Str(Vec::new()),
        }
    }
}

/// Named columns of equal length, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Columns in order.
    pub columns: Vec<(String, Col)>,
}

impl Frame {
    /// A frame of `columns`, checking that they have one length.
    pub fn new(columns: Vec<(String, Col)>) -> crate::Result<Self> {
        if let Some((first, c)) = columns.first() {
            if let Some((name, other)) = columns.iter().find(|(_, o)| o.len() != c.len()) {
                return Err(crate::OutputError::Data(format!(
                    "columns differ in length: {first} has {}, {name} has {}",
                    c.len(),
                    other.len()
                )));
            }
        }
        Ok(Frame { columns })
    }

    /// A copy of a core table.
    pub fn from_table(t: &Table) -> Self {
        let columns = t
            .columns
            .iter()
            .map(|(n, c)| {
                let col = match c {
                    Column::F64(v) => Col::F64(v.clone()),
                    Column::I64(v) => Col::I64(v.clone()),
                    Column::Str(v) => Col::Str(v.clone()),
                };
                (n.to_string(), col)
            })
            .collect();
        Frame { columns }
    }

    /// Chunks of one table in order as one frame. A column first seen in a later chunk (an
    /// algorithm's metric a later flow reports) reads as NaN in earlier ones, as in the core's
    /// own table; a column whose type differs between chunks is read as floats.
    pub fn concat(chunks: Vec<Frame>) -> crate::Result<Self> {
        let mut names: Vec<String> = Vec::new();
        for c in &chunks {
            for (n, _) in &c.columns {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        let mut out: Vec<(String, Col)> = Vec::with_capacity(names.len());
        for name in &names {
            let kinds: Vec<&Col> = chunks.iter().filter_map(|c| c.get(name)).collect();
            let first = kinds[0];
            let uniform = kinds.iter().all(|k| std::mem::discriminant(*k) == std::mem::discriminant(first))
                && kinds.len() == chunks.len();
            let mut col = if uniform { first.empty_like() } else { Col::F64(Vec::new()) };
            for c in &chunks {
                let rows = c.rows();
                match (&mut col, c.get(name)) {
                    (Col::F64(v), Some(Col::F64(x))) => v.extend_from_slice(x),
                    (Col::I64(v), Some(Col::I64(x))) => v.extend_from_slice(x),
                    (Col::Str(v), Some(Col::Str(x))) => v.extend(x.iter().cloned()),
                    (Col::F64(v), Some(other)) => v.extend(other.to_f64()),
                    (Col::F64(v), None) => v.extend(std::iter::repeat_n(f64::NAN, rows)),
                    _ => return Err(crate::OutputError::Data(format!("column {name}: mixed types"))),
                }
            }
            out.push((name.clone(), col));
        }
        Frame::new(out)
    }

    /// The column called `name`.
    pub fn get(&self, name: &str) -> Option<&Col> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    /// Column names in order.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _)| n.as_str()).collect()
    }
}
