//! A small reader of BTF, the kernel's type format: enough to read the map
//! definitions of noisetop's own object, to make its type data loadable
//! (the section sizes and variable offsets the compiler leaves at zero),
//! and to find in the running kernel's BTF the ids of the tracepoints the
//! BTF programs attach to.
//!
//! Layout (`Documentation/bpf/btf.rst`): a header, then the type section,
//! each type a 12-byte `btf_type` (name offset, info: kind and vlen, size
//! or type) followed by data whose length its kind and vlen say, then the
//! string section. Type ids count from 1 in the order of the types.

use std::collections::HashMap;

/// Kinds, as `BTF_KIND_*`.
pub mod kind {
    pub const INT: u32 = 1;
    pub const PTR: u32 = 2;
    pub const ARRAY: u32 = 3;
    pub const STRUCT: u32 = 4;
    pub const UNION: u32 = 5;
    pub const ENUM: u32 = 6;
    pub const TYPEDEF: u32 = 8;
    pub const VOLATILE: u32 = 9;
    pub const CONST: u32 = 10;
    pub const RESTRICT: u32 = 11;
    pub const FUNC: u32 = 12;
    pub const FUNC_PROTO: u32 = 13;
    pub const VAR: u32 = 14;
    pub const DATASEC: u32 = 15;
    pub const DECL_TAG: u32 = 17;
    pub const TYPE_TAG: u32 = 18;
    pub const ENUM64: u32 = 19;
}

/// What is wrong with a BTF blob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BtfError {
    /// Not BTF, or cut short.
    #[error("not BTF data: {0}")]
    Malformed(&'static str),
    /// A type the reader needs is not there.
    #[error("BTF has no {0}")]
    Missing(String),
}

fn u32_at(b: &[u8], o: usize) -> Result<u32, BtfError> {
    b.get(o..o + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or(BtfError::Malformed("cut short"))
}

/// A parsed blob: where each type starts, and the strings.
#[derive(Debug)]
pub struct Btf<'a> {
    data: &'a [u8],
    /// Byte offset of type id `i` at `offsets[i]` (id 0 is void).
    offsets: Vec<u32>,
    strings: usize,
    strings_len: usize,
}

/// One member of a struct, union or data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// Name offset in the string section (0: anonymous).
    pub name_off: u32,
    /// Type id.
    pub type_id: u32,
    /// Bit offset (struct, union) or byte offset (data section).
    pub offset: u32,
    /// Byte size (data section only).
    pub size: u32,
}

impl<'a> Btf<'a> {
    /// Indexes a blob.
    pub fn parse(data: &'a [u8]) -> Result<Btf<'a>, BtfError> {
        if data.len() < 24 || data[0..2] != [0x9f, 0xeb] {
            return Err(BtfError::Malformed(
                "bad magic (only little-endian BTF is read)",
            ));
        }
        let hdr = u32_at(data, 4)? as usize;
        let types = hdr + u32_at(data, 8)? as usize;
        let types_end = types + u32_at(data, 12)? as usize;
        let strings = hdr + u32_at(data, 16)? as usize;
        let strings_len = u32_at(data, 20)? as usize;
        if types_end > data.len() || strings + strings_len > data.len() {
            return Err(BtfError::Malformed("sections past the end"));
        }
        let mut offsets = vec![0];
        let mut o = types;
        while o < types_end {
            offsets.push(o as u32);
            let info = u32_at(data, o + 4)?;
            let vlen = (info & 0xffff) as usize;
            o += 12
                + match (info >> 24) & 0x1f {
                    kind::INT | kind::VAR | kind::DECL_TAG => 4,
                    kind::ARRAY => 12,
                    kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 12 * vlen,
                    kind::ENUM | kind::FUNC_PROTO => 8 * vlen,
                    _ => 0,
                };
        }
        if o != types_end {
            return Err(BtfError::Malformed("a type runs past the type section"));
        }
        Ok(Btf {
            data,
            offsets,
            strings,
            strings_len,
        })
    }

    /// How many types (the largest id).
    pub fn len(&self) -> u32 {
        self.offsets.len() as u32 - 1
    }

    fn at(&self, id: u32) -> Result<usize, BtfError> {
        self.offsets
            .get(id as usize)
            .filter(|_| id != 0)
            .map(|&o| o as usize)
            .ok_or(BtfError::Malformed("type id out of range"))
    }

    /// A string of the string section.
    pub fn string(&self, off: u32) -> &'a str {
        let start = self.strings + off as usize;
        let end = self.strings + self.strings_len;
        let Some(s) = self.data.get(start..end) else {
            return "";
        };
        let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..n]).unwrap_or("")
    }

    /// The kind of a type.
    pub fn kind(&self, id: u32) -> Result<u32, BtfError> {
        Ok((u32_at(self.data, self.at(id)? + 4)? >> 24) & 0x1f)
    }

    /// The name of a type.
    pub fn name(&self, id: u32) -> Result<&'a str, BtfError> {
        Ok(self.string(u32_at(self.data, self.at(id)?)?))
    }

    fn vlen(&self, id: u32) -> Result<usize, BtfError> {
        Ok((u32_at(self.data, self.at(id)? + 4)? & 0xffff) as usize)
    }

    /// The `size` or `type` word of a type.
    pub fn size_or_type(&self, id: u32) -> Result<u32, BtfError> {
        u32_at(self.data, self.at(id)? + 8)
    }

    /// The members of a struct, union or data section.
    pub fn members(&self, id: u32) -> Result<Vec<Member>, BtfError> {
        let o = self.at(id)? + 12;
        let k = self.kind(id)?;
        (0..self.vlen(id)?)
            .map(|i| {
                let m = o + 12 * i;
                Ok(match k {
                    kind::DATASEC => Member {
                        name_off: 0,
                        type_id: u32_at(self.data, m)?,
                        offset: u32_at(self.data, m + 4)?,
                        size: u32_at(self.data, m + 8)?,
                    },
                    _ => Member {
                        name_off: u32_at(self.data, m)?,
                        type_id: u32_at(self.data, m + 4)?,
                        offset: u32_at(self.data, m + 8)?,
                        size: 0,
                    },
                })
            })
            .collect()
    }

    /// Element type and count of an array.
    pub fn array(&self, id: u32) -> Result<(u32, u32), BtfError> {
        let o = self.at(id)? + 12;
        Ok((u32_at(self.data, o)?, u32_at(self.data, o + 8)?))
    }

    /// Follows typedefs and qualifiers to the type they name.
    pub fn resolve(&self, mut id: u32) -> Result<u32, BtfError> {
        for _ in 0..32 {
            match self.kind(id)? {
                kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG => {
                    id = self.size_or_type(id)?;
                }
                _ => return Ok(id),
            }
        }
        Err(BtfError::Malformed("a chain of typedefs loops"))
    }

    /// The size in bytes of a type.
    pub fn size(&self, id: u32) -> Result<u32, BtfError> {
        let id = self.resolve(id)?;
        match self.kind(id)? {
            kind::INT | kind::ENUM | kind::ENUM64 | kind::STRUCT | kind::UNION | kind::DATASEC => {
                self.size_or_type(id)
            }
            kind::PTR => Ok(8),
            kind::ARRAY => {
                let (elem, n) = self.array(id)?;
                Ok(self.size(elem)? * n)
            }
            _ => Err(BtfError::Malformed("a type without a size")),
        }
    }

    /// Finds the ids of types by kind and name, in one pass over the type
    /// section (the kernel's holds over 100 000 types).
    pub fn find(&self, wanted: &[(u32, &str)]) -> HashMap<(u32, String), u32> {
        let mut found = HashMap::new();
        for id in 1..=self.len() {
            let Ok(k) = self.kind(id) else { continue };
            if !wanted.iter().any(|(wk, _)| *wk == k) {
                continue;
            }
            let Ok(name) = self.name(id) else { continue };
            if let Some((wk, wn)) = wanted.iter().find(|(wk, wn)| *wk == k && *wn == name) {
                found.entry((*wk, (*wn).to_string())).or_insert(id);
            }
        }
        found
    }
}

/// Finds the ids of types by kind and name in one pass over a blob, without
/// indexing it first: the kernel's BTF holds over 100 000 types and only a
/// few are wanted. It stops at the last one found (the scheduler's
/// tracepoint types sit about a tenth of the way in on Linux 6.18), so a
/// blob malformed past them is not noticed.
pub fn scan(data: &[u8], wanted: &[(u32, &str)]) -> Result<HashMap<(u32, String), u32>, BtfError> {
    if data.len() < 24 || data[0..2] != [0x9f, 0xeb] {
        return Err(BtfError::Malformed(
            "bad magic (only little-endian BTF is read)",
        ));
    }
    let hdr = u32_at(data, 4)? as usize;
    let types = hdr + u32_at(data, 8)? as usize;
    let types_end = types + u32_at(data, 12)? as usize;
    let strings = hdr + u32_at(data, 16)? as usize;
    let strings_end = strings + u32_at(data, 20)? as usize;
    if types_end > data.len() || strings_end > data.len() {
        return Err(BtfError::Malformed("sections past the end"));
    }
    let table = &data[types..types_end];
    let names = &data[strings..strings_end];
    let mut found = HashMap::new();
    let (mut o, mut id) = (0usize, 1u32);
    while o + 12 <= table.len() {
        let word = |at: usize| {
            u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
        };
        let info = word(o + 4);
        let k = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        if wanted.iter().any(|(wk, _)| *wk == k) {
            let name = names.get(word(o) as usize..).unwrap_or(&[]);
            for (wk, wn) in wanted {
                if *wk == k && name.starts_with(wn.as_bytes()) && name.get(wn.len()) == Some(&0) {
                    found.entry((k, (*wn).to_string())).or_insert(id);
                }
            }
            if found.len() == wanted.len() {
                return Ok(found);
            }
        }
        o += 12
            + match k {
                kind::INT | kind::VAR | kind::DECL_TAG => 4,
                kind::ARRAY => 12,
                kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 12 * vlen,
                kind::ENUM | kind::FUNC_PROTO => 8 * vlen,
                _ => 0,
            };
        id += 1;
    }
    if o != table.len() {
        return Err(BtfError::Malformed("a type runs past the type section"));
    }
    Ok(found)
}

/// Fills in what the compiler leaves at zero in a data section of an
/// object's BTF (its size, each variable's offset), as the kernel wants
/// it: `sizes` gives each section's size, `offsets` each variable's.
pub fn fix_datasecs<S: std::hash::BuildHasher>(
    blob: &mut [u8],
    sizes: &HashMap<String, u32, S>,
    offsets: &HashMap<String, u32, S>,
) -> Result<(), BtfError> {
    let mut patches = Vec::new();
    {
        let btf = Btf::parse(blob)?;
        for id in 1..=btf.len() {
            if btf.kind(id)? != kind::DATASEC {
                continue;
            }
            let at = btf.at(id)?;
            let name = btf.name(id)?;
            let size = sizes
                .get(name)
                .copied()
                .ok_or_else(|| BtfError::Missing(format!("section {name}")))?;
            patches.push((at + 8, size));
            for (i, m) in btf.members(id)?.iter().enumerate() {
                let var = btf.name(m.type_id)?;
                let off = offsets
                    .get(var)
                    .copied()
                    .ok_or_else(|| BtfError::Missing(format!("symbol {var}")))?;
                patches.push((at + 12 + 12 * i + 4, off));
            }
        }
    }
    for (at, v) in patches {
        blob[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob of the given types (raw words) and strings.
    fn blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&[0x9f, 0xeb, 1, 0]);
        b.extend_from_slice(&24u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(types.len() as u32 * 4).to_le_bytes());
        b.extend_from_slice(&(types.len() as u32 * 4).to_le_bytes());
        b.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        for w in types {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(strings);
        b
    }

    const fn info(k: u32, vlen: u32) -> u32 {
        (k << 24) | vlen
    }

    #[test]
    fn types_are_indexed_and_sized_through_typedefs() {
        // 1: int (4 bytes), 2: typedef u32 -> 1, 3: struct s { u32 a; int b[3]; }
        // 4: array of 3 x 1
        let strings = b"\0int\0u32\0s\0a\0b\0";
        let t = blob(
            &[
                1,
                info(kind::INT, 0),
                4,
                32,
                5,
                info(kind::TYPEDEF, 0),
                1,
                9,
                info(kind::STRUCT, 2),
                16,
                11,
                2,
                0,
                13,
                4,
                32,
                0,
                info(kind::ARRAY, 0),
                0,
                1,
                1,
                3,
            ],
            strings,
        );
        let b = Btf::parse(&t).unwrap();
        assert_eq!(b.len(), 4);
        assert_eq!(b.name(3).unwrap(), "s");
        assert_eq!(b.size(2).unwrap(), 4);
        assert_eq!(b.size(4).unwrap(), 12);
        let m = b.members(3).unwrap();
        assert_eq!((b.string(m[1].name_off), m[1].offset), ("b", 32));
        let found = b.find(&[
            (kind::STRUCT, "s"),
            (kind::TYPEDEF, "u32"),
            (kind::STRUCT, "t"),
        ]);
        assert_eq!(found.get(&(kind::STRUCT, "s".into())), Some(&3));
        assert_eq!(found.get(&(kind::TYPEDEF, "u32".into())), Some(&2));
        assert_eq!(found.len(), 2);
    }

    /// The scan finds what the index finds, and stops at the last wanted
    /// type: what follows it is not read, and a blob cut before it is an
    /// error.
    #[test]
    fn the_scan_stops_at_the_last_type_wanted() {
        // 1: int, 2: typedef u32 -> 1, 3: typedef v -> 1, then a struct
        // whose members run past the section
        let strings = b"\0int\0u32\0v\0";
        let t = blob(
            &[
                1,
                info(kind::INT, 0),
                4,
                32,
                5,
                info(kind::TYPEDEF, 0),
                1,
                9,
                info(kind::TYPEDEF, 0),
                1,
                0,
                info(kind::STRUCT, 9),
                4,
            ],
            strings,
        );
        let wanted = [(kind::TYPEDEF, "u32")];
        let found = scan(&t, &wanted).unwrap();
        assert_eq!(found, HashMap::from([((kind::TYPEDEF, "u32".into()), 2)]));
        let both = scan(&t, &[(kind::TYPEDEF, "u32"), (kind::TYPEDEF, "v")]).unwrap();
        assert_eq!(both.get(&(kind::TYPEDEF, "v".into())), Some(&3));
        // a name that is not there makes it read on into the cut struct
        assert!(matches!(
            scan(&t, &[(kind::TYPEDEF, "absent")]),
            Err(BtfError::Malformed(_))
        ));
    }

    /// On the live kernel's BTF, the scan and the full index agree on the
    /// scheduler's tracepoint types.
    #[test]
    fn the_scan_agrees_with_the_index_on_the_live_kernel() {
        let Ok(data) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            eprintln!("no /sys/kernel/btf/vmlinux: skipped");
            return;
        };
        let wanted = [
            (kind::TYPEDEF, "btf_trace_sched_switch"),
            (kind::TYPEDEF, "btf_trace_sched_wakeup"),
            (kind::TYPEDEF, "btf_trace_sched_wakeup_new"),
        ];
        let scanned = scan(&data, &wanted).unwrap();
        assert_eq!(scanned.len(), 3);
        assert_eq!(scanned, Btf::parse(&data).unwrap().find(&wanted));
    }

    #[test]
    fn a_cut_blob_is_an_error_not_a_panic() {
        let t = blob(&[1, info(kind::STRUCT, 5), 4], b"\0");
        assert!(Btf::parse(&t).is_err());
        assert!(Btf::parse(&t[..10]).is_err());
        assert!(Btf::parse(b"not btf at all, long enough").is_err());
    }

    #[test]
    fn data_sections_get_their_size_and_offsets() {
        // 1: int, 2: var x, 3: var y, 4: datasec .maps { x, y }
        let strings = b"\0int\0x\0y\0.maps\0";
        let mut t = blob(
            &[
                1,
                info(kind::INT, 0),
                4,
                32,
                5,
                info(kind::VAR, 0),
                1,
                1,
                7,
                info(kind::VAR, 0),
                1,
                1,
                9,
                info(kind::DATASEC, 2),
                0,
                2,
                0,
                4,
                3,
                0,
                4,
            ],
            strings,
        );
        let sizes = HashMap::from([(".maps".to_string(), 8)]);
        let offsets = HashMap::from([("x".to_string(), 0), ("y".to_string(), 4)]);
        fix_datasecs(&mut t, &sizes, &offsets).unwrap();
        let b = Btf::parse(&t).unwrap();
        assert_eq!(b.size_or_type(4).unwrap(), 8);
        let m = b.members(4).unwrap();
        assert_eq!((m[0].offset, m[1].offset), (0, 4));
        let none = HashMap::new();
        assert!(matches!(
            fix_datasecs(&mut t, &none, &offsets),
            Err(BtfError::Missing(_))
        ));
    }
}
