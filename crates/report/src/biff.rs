//! A writer of the smallest Excel-readable binary spreadsheet: BIFF2 (Excel 2.x), the format
//! IOzone's `-b FILE` writes through its libbif. A BIFF2 worksheet is a stream of records,
//! each a little-endian `u16` opcode, a `u16` body length and the body:
//!
//! | record | opcode | body |
//! |---|---|---|
//! | BOF | `0x0009` | version `0x0002`, file type `0x0010` (worksheet) |
//! | LABEL | `0x0004` | row `u16`, column `u16`, 3 attribute bytes (0), length `u8`, the bytes |
//! | NUMBER | `0x0003` | row `u16`, column `u16`, 3 attribute bytes (0), `f64` little-endian |
//! | EOF | `0x000a` | empty |
//!
//! IOzone writes every LABEL with a fixed 264-byte body (a 256-byte string area after the
//! length byte), whatever the string's length; readers take the length byte and skip the
//! rest by the record length. This writer does the same, so its files have IOzone's record
//! layout byte for byte, with the unused bytes zero (IOzone leaves stack garbage in some).
//! A string longer than 255 bytes is cut at 255 (the length is one byte). Text is written
//! as ASCII, any other character as `?`: a BIFF2 file without a CODEPAGE record (IOzone
//! writes none) is read as ASCII by readers such as xlrd, which fail on other bytes (a
//! UTF-8 file name on the command line did).
//!
//! Rows and columns are `u16`: a cell beyond 65535 is not written (no IOzone report comes
//! near; the caller's matrices have tens of rows).

/// BOF: beginning of file.
pub const BOF: u16 = 0x0009;
/// A text cell.
pub const LABEL: u16 = 0x0004;
/// A number cell (IEEE 754 double).
pub const NUMBER: u16 = 0x0003;
/// EOF: end of file.
pub const EOF: u16 = 0x000a;
/// BIFF version 2 (Excel 2.x).
pub const VERSION: u16 = 0x0002;
/// The BOF file type of a worksheet.
pub const WORKSHEET: u16 = 0x0010;
/// The body length of a LABEL record as IOzone writes them.
pub const LABEL_BODY: usize = 264;
/// The longest string a LABEL holds.
pub const MAX_LABEL: usize = 255;

/// A BIFF2 worksheet being written: BOF at [`Sheet::new`], cells, EOF at [`Sheet::finish`].
#[derive(Debug, Clone)]
pub struct Sheet {
    buf: Vec<u8>,
}

impl Default for Sheet {
    fn default() -> Self {
        Self::new()
    }
}

impl Sheet {
    /// A new worksheet: the BOF record.
    pub fn new() -> Self {
        let mut s = Sheet { buf: Vec::new() };
        s.record(
            BOF,
            &[VERSION.to_le_bytes(), WORKSHEET.to_le_bytes()].concat(),
        );
        s
    }

    fn record(&mut self, op: u16, body: &[u8]) {
        self.buf.extend_from_slice(&op.to_le_bytes());
        self.buf
            .extend_from_slice(&(body.len() as u16).to_le_bytes());
        self.buf.extend_from_slice(body);
    }

    fn cell(row: usize, col: usize) -> Option<Vec<u8>> {
        let row = u16::try_from(row).ok()?;
        let col = u16::try_from(col).ok()?;
        let mut b = Vec::with_capacity(LABEL_BODY);
        b.extend_from_slice(&row.to_le_bytes());
        b.extend_from_slice(&col.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0]);
        Some(b)
    }

    /// A text cell: ASCII (other characters as `?`), at most [`MAX_LABEL`] characters.
    pub fn label(&mut self, row: usize, col: usize, text: &str) {
        let Some(mut b) = Self::cell(row, col) else {
            return;
        };
        let bytes: Vec<u8> = text
            .chars()
            .take(MAX_LABEL)
            .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
            .collect();
        b.push(bytes.len() as u8);
        b.extend_from_slice(&bytes);
        b.resize(LABEL_BODY, 0);
        self.record(LABEL, &b);
    }

    /// A number cell.
    pub fn number(&mut self, row: usize, col: usize, value: f64) {
        let Some(mut b) = Self::cell(row, col) else {
            return;
        };
        b.extend_from_slice(&value.to_le_bytes());
        self.record(NUMBER, &b);
    }

    /// The file's bytes, EOF appended.
    pub fn finish(mut self) -> Vec<u8> {
        self.record(EOF, &[]);
        self.buf
    }
}

/// One cell read back from a BIFF2 stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A LABEL's text (bytes as Latin-1 would show them are kept as UTF-8 lossily).
    Label(String),
    /// A NUMBER.
    Number(f64),
}

/// Reads a BIFF2 worksheet back into `(row, column, cell)` in file order: BOF first, EOF
/// last, LABEL and NUMBER between (other records are skipped). `None` for a stream that is
/// not one. For tests and for checking what [`Sheet`] wrote; bounded by the input's length.
pub fn read(bytes: &[u8]) -> Option<Vec<(u16, u16, Cell)>> {
    let mut cells = Vec::new();
    let mut i = 0;
    let mut first = true;
    while i + 4 <= bytes.len() {
        let op = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let len = u16::from_le_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        let body = bytes.get(i + 4..i + 4 + len)?;
        i += 4 + len;
        if first {
            if op != BOF || body != [2, 0, 0x10, 0] {
                return None;
            }
            first = false;
            continue;
        }
        let rc = |b: &[u8]| -> Option<(u16, u16)> {
            Some((
                u16::from_le_bytes([*b.first()?, *b.get(1)?]),
                u16::from_le_bytes([*b.get(2)?, *b.get(3)?]),
            ))
        };
        match op {
            EOF => return (i == bytes.len()).then_some(cells),
            LABEL => {
                let (r, c) = rc(body)?;
                let n = *body.get(7)? as usize;
                let text = body.get(8..8 + n)?;
                cells.push((
                    r,
                    c,
                    Cell::Label(String::from_utf8_lossy(text).into_owned()),
                ));
            }
            NUMBER => {
                let (r, c) = rc(body)?;
                let v: [u8; 8] = body.get(7..15)?.try_into().ok()?;
                cells.push((r, c, Cell::Number(f64::from_le_bytes(v))));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_sheet_is_bof_then_eof() {
        assert_eq!(
            Sheet::new().finish(),
            [
                0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00, 0x0a, 0x00, 0x00, 0x00
            ]
        );
    }

    #[test]
    fn a_label_is_iozones_fixed_264_byte_record() {
        let mut s = Sheet::new();
        s.label(3, 0, "Writer Report");
        let b = s.finish();
        let rec = &b[8..8 + 4 + LABEL_BODY];
        // Opcode 4, length 0x108, row 3, column 0, three zero attribute bytes, length 13.
        assert_eq!(
            &rec[..12],
            [0x04, 0x00, 0x08, 0x01, 0x03, 0x00, 0x00, 0x00, 0, 0, 0, 13]
        );
        assert_eq!(&rec[12..25], b"Writer Report");
        assert!(rec[25..].iter().all(|&x| x == 0), "the rest is zero");
        assert_eq!(b.len(), 8 + 268 + 4);
    }

    #[test]
    fn a_number_is_a_15_byte_body_with_a_little_endian_double() {
        let mut s = Sheet::new();
        s.number(5, 1, 1232453.0);
        s.number(0x0102, 0x0304, -0.5);
        let b = s.finish();
        // Recorded from IOzone 3.489's file: row 5, column 1, 1232453.0.
        assert_eq!(
            &b[8..27],
            [
                0x03, 0x00, 0x0f, 0x00, 0x05, 0x00, 0x01, 0x00, 0, 0, 0, 0x00, 0x00, 0x00, 0x00,
                0x45, 0xce, 0x32, 0x41
            ]
        );
        assert_eq!(&b[31..35], [0x02, 0x01, 0x04, 0x03]);
        assert_eq!(&b[38..46], (-0.5f64).to_le_bytes());
    }

    #[test]
    fn long_labels_are_cut_at_255_bytes_and_far_cells_are_left_out() {
        let mut s = Sheet::new();
        s.label(0, 0, &"x".repeat(300));
        s.number(70000, 0, 1.0);
        s.label(0, 70000, "far");
        let b = s.finish();
        assert_eq!(b[8 + 11], 255);
        assert_eq!(b.len(), 8 + 268 + 4);
        let cells = read(&b).unwrap();
        assert_eq!(cells, [(0, 0, Cell::Label("x".repeat(255)))]);
    }

    #[test]
    fn labels_are_ascii() {
        let mut s = Sheet::new();
        s.label(0, 0, "hostbench iozone -b ü/x.xls");
        let cells = read(&s.finish()).unwrap();
        assert_eq!(
            cells,
            [(0, 0, Cell::Label("hostbench iozone -b ?/x.xls".into()))]
        );
    }

    #[test]
    fn read_gives_back_what_was_written_and_refuses_other_bytes() {
        let mut s = Sheet::new();
        s.label(0, 0, "iozone -a ");
        s.number(4, 1, 4.0);
        s.number(5, 2, 12.25);
        let cells = read(&s.finish()).unwrap();
        assert_eq!(
            cells,
            [
                (0, 0, Cell::Label("iozone -a ".into())),
                (4, 1, Cell::Number(4.0)),
                (5, 2, Cell::Number(12.25)),
            ]
        );
        assert_eq!(read(b"not a spreadsheet"), None);
        assert_eq!(read(&Sheet::new().finish()[..8]), None, "no EOF");
    }
}
