//! Parser of tracefs `events/<sys>/<event>/format` files: the layout of a
//! tracepoint's raw payload as this kernel writes it.
//!
//! Each field line reads `field:TYPE NAME; offset:N; size:M; signed:S;`.
//! `NAME` may carry an array length (`char prev_comm[16]`), and a
//! `__data_loc` field (`__data_loc char[] name`) holds a u32 whose low 16
//! bits are the offset of the data and whose high 16 bits are its length,
//! both relative to the start of the payload. Offsets differ between kernel
//! versions (older kernels had `common_lock_depth` and `common_padding`), so
//! the decoder looks every offset up here and never assumes one.

use std::fmt;

/// One field of a tracepoint payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// C type as written, without the array suffix (`char`, `pid_t`, `__data_loc char[]`).
    pub ty: String,
    /// Field name without the array suffix.
    pub name: String,
    /// Byte offset in the payload.
    pub offset: usize,
    /// Size in bytes (of the whole array for arrays).
    pub size: usize,
    /// Whether the integer is signed.
    pub signed: bool,
    /// A fixed array (`[16]`, or `[TASK_COMM_LEN]` on older kernels).
    pub array: bool,
    /// Element count when written as a number.
    pub array_len: Option<usize>,
    /// A `__data_loc` field: the payload holds `len << 16 | offset`.
    pub data_loc: bool,
}

/// The parsed `format` file of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The event name (`name:` line).
    pub name: String,
    /// The event id (`ID:` line), which is also the payload's `common_type`.
    pub id: u32,
    /// All fields, common ones first, in file order.
    pub fields: Vec<Field>,
}

/// Why a format file could not be parsed or lacks what the decoder needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// A required header line (`name:` or `ID:`) is missing or bad.
    Header(&'static str),
    /// A `field:` line did not parse.
    BadField { line: usize, text: String },
    /// The event has no field of this name.
    MissingField { event: String, field: String },
    /// The field has a size or kind the decoder cannot read as asked.
    Unsupported {
        event: String,
        field: String,
        why: &'static str,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Header(what) => write!(f, "format file: missing or bad `{what}` line"),
            FormatError::BadField { line, text } => {
                write!(f, "format file line {line}: cannot parse field `{text}`")
            }
            FormatError::MissingField { event, field } => {
                write!(f, "event {event} has no field `{field}`")
            }
            FormatError::Unsupported { event, field, why } => {
                write!(f, "event {event} field `{field}`: {why}")
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Parses the text of one `format` file.
pub fn parse(text: &str) -> Result<Format, FormatError> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("name:") {
            name = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.strip_prefix("ID:") {
            id = Some(
                rest.trim()
                    .parse()
                    .map_err(|_| FormatError::Header("ID:"))?,
            );
        } else if line.starts_with("field:") || line.starts_with("field special:") {
            fields.push(parse_field(line).ok_or_else(|| FormatError::BadField {
                line: i + 1,
                text: line.to_owned(),
            })?);
        }
    }
    Ok(Format {
        name: name.ok_or(FormatError::Header("name:"))?,
        id: id.ok_or(FormatError::Header("ID:"))?,
        fields,
    })
}

fn parse_field(line: &str) -> Option<Field> {
    let mut decl = None;
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for part in line.split(';') {
        let part = part.trim();
        if let Some(d) = part.strip_prefix("field special:") {
            decl = Some(d.trim());
        } else if let Some(d) = part.strip_prefix("field:") {
            decl = Some(d.trim());
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl?;
    // The name is the last token; a `[N]` suffix (or `[]` after the type of
    // a __data_loc) belongs to the declaration, not the name.
    let split = decl.rfind(|c: char| c.is_whitespace())?;
    let (ty, last) = (decl[..split].trim(), decl[split..].trim());
    let (name, array, array_len) = match last.split_once('[') {
        Some((n, rest)) => (n, true, rest.strip_suffix(']')?.parse().ok()),
        None => (last, false, None),
    };
    if name.is_empty() || ty.is_empty() {
        return None;
    }
    Some(Field {
        ty: ty.to_owned(),
        name: name.to_owned(),
        offset: offset?,
        size: size?,
        signed,
        array,
        array_len,
        data_loc: ty.starts_with("__data_loc"),
    })
}

impl Format {
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    fn require(&self, name: &str) -> Result<&Field, FormatError> {
        self.field(name).ok_or_else(|| FormatError::MissingField {
            event: self.name.clone(),
            field: name.to_owned(),
        })
    }

    /// An integer field (1, 2, 4 or 8 bytes) to read with [`IntAt::read`].
    pub fn int(&self, name: &str) -> Result<IntAt, FormatError> {
        let f = self.require(name)?;
        if f.data_loc || f.array || !matches!(f.size, 1 | 2 | 4 | 8) {
            return Err(FormatError::Unsupported {
                event: self.name.clone(),
                field: name.to_owned(),
                why: "not an integer of 1, 2, 4 or 8 bytes",
            });
        }
        Ok(IntAt {
            offset: f.offset,
            size: f.size as u8,
            signed: f.signed,
        })
    }

    /// A string field: a fixed `char NAME[N]` array or a `__data_loc char[]`.
    #[cfg(test)]
    pub fn string(&self, name: &str) -> Result<StrAt, FormatError> {
        let f = self.require(name)?;
        if f.data_loc {
            if f.size != 4 {
                return Err(FormatError::Unsupported {
                    event: self.name.clone(),
                    field: name.to_owned(),
                    why: "__data_loc of a size other than 4",
                });
            }
            Ok(StrAt::DataLoc { offset: f.offset })
        } else if f.array && f.ty.ends_with("char") {
            Ok(StrAt::Fixed {
                offset: f.offset,
                len: f.size,
            })
        } else {
            Err(FormatError::Unsupported {
                event: self.name.clone(),
                field: name.to_owned(),
                why: "not a char array or __data_loc string",
            })
        }
    }
}

/// Where an integer lies in a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntAt {
    /// Byte offset in the payload.
    pub offset: usize,
    /// 1, 2, 4 or 8.
    pub size: u8,
    /// Sign-extend when reading.
    pub signed: bool,
}

impl IntAt {
    /// Reads the value (native byte order, as the kernel wrote it), or
    /// `None` when the payload is too short.
    #[inline]
    pub fn read(self, raw: &[u8]) -> Option<i64> {
        let b = raw.get(self.offset..self.offset + usize::from(self.size))?;
        Some(match (self.size, self.signed) {
            (1, true) => i64::from(b[0] as i8),
            (1, false) => i64::from(b[0]),
            (2, true) => i64::from(i16::from_ne_bytes([b[0], b[1]])),
            (2, false) => i64::from(u16::from_ne_bytes([b[0], b[1]])),
            (4, true) => i64::from(i32::from_ne_bytes(b.try_into().ok()?)),
            (4, false) => i64::from(u32::from_ne_bytes(b.try_into().ok()?)),
            _ => i64::from_ne_bytes(b.try_into().ok()?),
        })
    }
}

/// Where a string lies in a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg(test)]
pub enum StrAt {
    /// `char NAME[len]` at `offset`, NUL-padded.
    Fixed { offset: usize, len: usize },
    /// A u32 at `offset`: low 16 bits the data offset, high 16 its length.
    DataLoc { offset: usize },
}

#[cfg(test)]
impl StrAt {
    /// The bytes of the string up to its first NUL, or `None` when the
    /// payload is too short for the field or the data it points at.
    #[inline]
    #[cfg(test)]
    pub fn read(self, raw: &[u8]) -> Option<&[u8]> {
        let bytes = match self {
            StrAt::Fixed { offset, len } => raw.get(offset..offset + len)?,
            StrAt::DataLoc { offset } => {
                let loc = u32::from_ne_bytes(raw.get(offset..offset + 4)?.try_into().ok()?);
                let start = (loc & 0xffff) as usize;
                let len = (loc >> 16) as usize;
                raw.get(start..start + len)?
            }
        };
        let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
        Some(&bytes[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = include_str!(
        "../../tests/fixtures/tracefs/sys/kernel/tracing/events/sched/sched_switch/format"
    );
    const IRQ_ENTRY: &str = include_str!(
        "../../tests/fixtures/tracefs/sys/kernel/tracing/events/irq/irq_handler_entry/format"
    );
    const OLD_SWITCH: &str = include_str!("../../tests/fixtures/tracefs/old-2.6.32/sched_switch");
    const OLD_IRQ_ENTRY: &str =
        include_str!("../../tests/fixtures/tracefs/old-2.6.32/irq_handler_entry");

    #[test]
    fn sched_switch_of_this_machine() {
        let f = parse(SWITCH).unwrap();
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.id, 372);
        assert_eq!(f.fields.len(), 11);
        assert_eq!(
            f.field("prev_comm").unwrap(),
            &Field {
                ty: "char".into(),
                name: "prev_comm".into(),
                offset: 8,
                size: 16,
                signed: false,
                array: true,
                array_len: Some(16),
                data_loc: false,
            }
        );
        assert_eq!(
            f.int("prev_state").unwrap(),
            IntAt {
                offset: 32,
                size: 8,
                signed: true
            }
        );
        assert_eq!(
            f.int("next_pid").unwrap(),
            IntAt {
                offset: 56,
                size: 4,
                signed: true
            }
        );
        assert_eq!(
            f.int("common_type").unwrap(),
            IntAt {
                offset: 0,
                size: 2,
                signed: false
            }
        );
        assert_eq!(
            f.string("next_comm").unwrap(),
            StrAt::Fixed {
                offset: 40,
                len: 16
            }
        );
    }

    #[test]
    fn irq_name_is_data_loc() {
        let f = parse(IRQ_ENTRY).unwrap();
        assert_eq!(f.id, 225);
        let name = f.field("name").unwrap();
        assert_eq!(name.ty, "__data_loc char[]");
        assert!(name.data_loc);
        assert_eq!(f.string("name").unwrap(), StrAt::DataLoc { offset: 12 });
        assert_eq!(f.int("irq").unwrap().offset, 8);
    }

    #[test]
    fn older_kernel_layout_moves_every_offset() {
        let f = parse(OLD_SWITCH).unwrap();
        assert_eq!(f.id, 29);
        assert_eq!(f.int("common_lock_depth").unwrap().offset, 8);
        assert_eq!(f.field("prev_comm").unwrap().array_len, None);
        assert_eq!(
            f.string("prev_comm").unwrap(),
            StrAt::Fixed {
                offset: 12,
                len: 16
            }
        );
        assert_eq!(f.int("prev_pid").unwrap().offset, 28);
        assert_eq!(
            f.int("prev_state").unwrap(),
            IntAt {
                offset: 40,
                size: 8,
                signed: true
            }
        );
        assert_eq!(f.int("next_pid").unwrap().offset, 64);
        let irq = parse(OLD_IRQ_ENTRY).unwrap();
        assert_eq!(irq.string("name").unwrap(), StrAt::DataLoc { offset: 16 });
        assert_eq!(irq.int("irq").unwrap().offset, 12);
    }

    #[test]
    fn reads_values_at_the_parsed_places() {
        let mut raw = vec![0u8; 24];
        raw[8..12].copy_from_slice(&(-7i32).to_ne_bytes());
        raw[12..16].copy_from_slice(&((5u32 << 16) | 16).to_ne_bytes());
        raw[16..21].copy_from_slice(b"eth0\0");
        let f = parse(IRQ_ENTRY).unwrap();
        assert_eq!(f.int("irq").unwrap().read(&raw), Some(-7));
        assert_eq!(f.string("name").unwrap().read(&raw), Some(&b"eth0"[..]));
        // A location pointing past the payload is refused, not a panic.
        raw[12..16].copy_from_slice(&((40u32 << 16) | 16).to_ne_bytes());
        assert_eq!(f.string("name").unwrap().read(&raw), None);
        assert_eq!(f.int("irq").unwrap().read(&raw[..10]), None);
    }

    #[test]
    fn bad_input_is_an_error_with_its_line() {
        assert_eq!(
            parse("name: x\nID: 3\nformat:\n\tfield:int; offset:8; size:4; signed:1;\n"),
            Err(FormatError::BadField {
                line: 4,
                text: "field:int; offset:8; size:4; signed:1;".into()
            })
        );
        assert_eq!(parse("ID: 3\n"), Err(FormatError::Header("name:")));
        assert_eq!(parse("name: x\nID: q\n"), Err(FormatError::Header("ID:")));
        let f = parse(IRQ_ENTRY).unwrap();
        assert_eq!(
            f.int("name").unwrap_err().to_string(),
            "event irq_handler_entry field `name`: not an integer of 1, 2, 4 or 8 bytes"
        );
        assert_eq!(
            f.int("vec").unwrap_err().to_string(),
            "event irq_handler_entry has no field `vec`"
        );
    }
}
