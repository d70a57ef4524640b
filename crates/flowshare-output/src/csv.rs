//! Tables as CSV, as pandas' `to_csv(index=False, lineterminator="\n")` writes them: a header
//! of the column names, integers as they are, floats as Python's `repr` (NaN as an empty
//! field), text quoted only when it holds a comma, a quote or a line break.

use crate::frame::{Col, Frame};
use crate::pyfmt::float_repr;
use std::io::Write;
use std::path::Path;

/// Write `frame` to `path` as CSV.
pub fn write(frame: &Frame, path: &Path) -> crate::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
    write_to(frame, &mut w)?;
    w.into_inner().map_err(|e| e.into_error())?;
    Ok(())
}

/// Write `frame` as CSV into `w`.
pub fn write_to(frame: &Frame, w: &mut impl Write) -> std::io::Result<()> {
    let mut line = String::with_capacity(256);
    for (i, (name, _)) in frame.columns.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        push_text(&mut line, name);
    }
    line.push('\n');
    w.write_all(line.as_bytes())?;
    for r in 0..frame.rows() {
        line.clear();
        for (i, (_, col)) in frame.columns.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            match col {
                Col::F64(v) => {
                    if !v[r].is_nan() {
                        line.push_str(&float_repr(v[r]));
                    }
                }
                Col::I64(v) => line.push_str(&v[r].to_string()),
                Col::Str(v) => push_text(&mut line, &v[r]),
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

fn push_text(line: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&s.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_as_pandas_does() {
        let f = Frame::new(vec![
            ("flow".into(), Col::I64(vec![0, 1])),
            ("name".into(), Col::Str(vec!["a,b".into(), "say \"x\"".into()])),
            ("goodput_bps".into(), Col::F64(vec![3e6, f64::NAN])),
        ])
        .unwrap();
        let mut out = Vec::new();
        write_to(&f, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "flow,name,goodput_bps\n0,\"a,b\",3000000.0\n1,\"say \"\"x\"\"\",\n"
        );
    }
}
