//! noisetop's compiled BPF object, read from its ELF sections: the maps it
//! defines (from its BTF, as `__uint`/`__type` encode them), its programs
//! with the map each `ld_imm64` names, their CO-RE relocations (from
//! `.BTF.ext`, handed to the kernel, which applies them against its own
//! BTF), the license, and its type data made loadable.

use std::collections::HashMap;

use object::{Object as _, ObjectSection as _, ObjectSymbol as _, RelocationTarget, SymbolKind};

use super::btf::{self, Btf, kind};

/// `R_BPF_64_64`: a 64-bit immediate load that names a symbol (a map).
const R_BPF_64_64: u32 = 1;
/// `R_BPF_64_32`: a call that names a function (a subprogram in `.text`).
const R_BPF_64_32: u32 = 10;
/// The section of the functions programs call.
const SUBPROGRAMS: &str = ".text";

/// A map the object defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapDef {
    /// Its variable's name.
    pub name: String,
    /// `BPF_MAP_TYPE_*`.
    pub map_type: u32,
    /// Key size, bytes.
    pub key_size: u32,
    /// Value size, bytes.
    pub value_size: u32,
    /// Entries as compiled (the loader may set another).
    pub max_entries: u32,
    /// `BPF_F_*`.
    pub flags: u32,
    /// The key's and the value's type ids in the object's BTF.
    pub key_type: u32,
    /// See `key_type`.
    pub value_type: u32,
}

/// A CO-RE relocation (`struct bpf_core_relo`), relative to its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct CoreRelo {
    /// Byte offset of the instruction in the program.
    pub insn_off: u32,
    /// Local root type id.
    pub type_id: u32,
    /// Access string offset in the object's BTF strings.
    pub access_str_off: u32,
    /// `enum bpf_core_relo_kind`.
    pub kind: u32,
}

/// One program of the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgDef {
    /// Its function's name.
    pub name: String,
    /// Its ELF section (`tp_btf/sched_switch`, `raw_tp`).
    pub section: String,
    /// Its instructions, 8 bytes each.
    pub insns: Vec<u8>,
    /// Instruction index of each `ld_imm64` of a map, and which map.
    pub map_refs: Vec<(usize, String)>,
    /// Its CO-RE relocations.
    pub core_relos: Vec<CoreRelo>,
    /// Each function in `insns`: its first instruction and its type id in
    /// the object's BTF. The program's own comes first; the subprograms it
    /// calls follow, appended to its instructions as the kernel wants
    /// them. The kernel applies CO-RE relocations only to a program that
    /// comes with its function info, and checks a global subprogram
    /// against its type.
    pub funcs: Vec<(u32, u32)>,
}

/// One function as the object holds it, before the subprograms it calls
/// are appended to it.
#[derive(Debug, Clone)]
struct Func {
    name: String,
    section: String,
    /// Its first byte in its section.
    start: usize,
    insns: Vec<u8>,
    map_refs: Vec<(usize, String)>,
    core_relos: Vec<CoreRelo>,
    /// Its calls: the instruction, and the callee's first byte in
    /// `SUBPROGRAMS`.
    calls: Vec<(usize, usize)>,
    type_id: u32,
}

/// What the object holds.
#[derive(Debug, Clone)]
pub struct BpfObject {
    /// The object's BTF, with its data sections filled in.
    pub btf: Vec<u8>,
    /// Its maps.
    pub maps: Vec<MapDef>,
    /// Its programs.
    pub programs: Vec<ProgDef>,
    /// Its license, NUL-terminated.
    pub license: Vec<u8>,
}

/// Why the object cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The ELF file is malformed.
    #[error("the BPF object is not a valid ELF file: {0}")]
    Elf(String),
    /// Its BTF is malformed or lacks something.
    #[error("the BPF object's type data: {0}")]
    Btf(#[from] btf::BtfError),
    /// Something the reader needs is not there.
    #[error("the BPF object has no {0}")]
    Missing(String),
}

fn elf(e: object::Error) -> ObjectError {
    ObjectError::Elf(e.to_string())
}

/// A `__uint(name, value)` member: a pointer to an array of `value`
/// elements.
fn uint_member(b: &Btf<'_>, type_id: u32) -> Result<u32, btf::BtfError> {
    let ptr = b.resolve(type_id)?;
    let arr = b.resolve(b.size_or_type(ptr)?)?;
    if b.kind(arr)? != kind::ARRAY {
        return Err(btf::BtfError::Missing(
            "an array behind a __uint member".into(),
        ));
    }
    Ok(b.array(arr)?.1)
}

fn map_defs(b: &Btf<'_>) -> Result<Vec<MapDef>, ObjectError> {
    let found = b.find(&[(kind::DATASEC, ".maps")]);
    let Some(&sec) = found.get(&(kind::DATASEC, ".maps".to_string())) else {
        return Ok(Vec::new());
    };
    let mut maps = Vec::new();
    for var in b.members(sec)? {
        let name = b.name(var.type_id)?.to_string();
        let def = b.resolve(b.size_or_type(var.type_id)?)?;
        let mut m = MapDef {
            name,
            map_type: 0,
            key_size: 0,
            value_size: 0,
            max_entries: 0,
            flags: 0,
            key_type: 0,
            value_type: 0,
        };
        for f in b.members(def)? {
            match b.string(f.name_off) {
                "type" => m.map_type = uint_member(b, f.type_id)?,
                "max_entries" => m.max_entries = uint_member(b, f.type_id)?,
                "map_flags" => m.flags = uint_member(b, f.type_id)?,
                "key" => {
                    m.key_type = b.size_or_type(b.resolve(f.type_id)?)?;
                    m.key_size = b.size(m.key_type)?;
                }
                "value" => {
                    m.value_type = b.size_or_type(b.resolve(f.type_id)?)?;
                    m.value_size = b.size(m.value_type)?;
                }
                _ => {}
            }
        }
        maps.push(m);
    }
    Ok(maps)
}

/// The CO-RE records of `.BTF.ext`, by section name.
fn core_relos(ext: &[u8], b: &Btf<'_>) -> Result<HashMap<String, Vec<CoreRelo>>, ObjectError> {
    let word = |o: usize| -> Result<u32, ObjectError> {
        ext.get(o..o + 4)
            .and_then(|s| s.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| ObjectError::Missing("whole .BTF.ext".into()))
    };
    let mut out: HashMap<String, Vec<CoreRelo>> = HashMap::new();
    let hdr = word(4)? as usize;
    // the CO-RE part of the header is there only past 24 bytes
    if hdr < 32 {
        return Ok(out);
    }
    let start = hdr + word(24)? as usize;
    let end = start + word(28)? as usize;
    if end == start {
        return Ok(out);
    }
    let rec = word(start)? as usize;
    let mut o = start + 4;
    while o < end {
        let sec = b.string(word(o)?).to_string();
        let n = word(o + 4)? as usize;
        o += 8;
        let v = out.entry(sec).or_default();
        for _ in 0..n {
            v.push(CoreRelo {
                insn_off: word(o)?,
                type_id: word(o + 4)?,
                access_str_off: word(o + 8)?,
                kind: word(o + 12)?,
            });
            o += rec;
        }
    }
    Ok(out)
}

/// The functions of one code section, with their map references, calls
/// and CO-RE relocations.
fn functions(
    file: &object::File<'_>,
    s: &object::Section<'_, '_>,
    sec_name: &str,
    maps: &[MapDef],
    relos: &HashMap<String, Vec<CoreRelo>>,
    b: &Btf<'_>,
) -> Result<Vec<Func>, ObjectError> {
    let code = s.data().map_err(elf)?;
    let mut map_at: Vec<(u64, String)> = Vec::new();
    let mut call_at: Vec<(u64, usize)> = Vec::new();
    for (at, r) in s.relocations() {
        let object::RelocationFlags::Elf { r_type } = r.flags() else {
            continue;
        };
        let RelocationTarget::Symbol(si) = r.target() else {
            continue;
        };
        let sym = file.symbol_by_index(si).map_err(elf)?;
        let name = sym.name().map_err(elf)?.to_string();
        let in_subprograms = sym
            .section_index()
            .and_then(|i| file.section_by_index(i).ok())
            .is_some_and(|t| t.name() == Ok(SUBPROGRAMS));
        if r_type == R_BPF_64_64 && maps.iter().any(|m| m.name == name) {
            map_at.push((at, name));
        } else if r_type == R_BPF_64_32 && in_subprograms {
            // a call names its callee, or (a static one) the section with
            // the callee's offset less one instruction in the immediate
            let mut target = sym.address() as usize;
            if sym.kind() == SymbolKind::Section {
                let imm = code
                    .get(at as usize + 4..at as usize + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(i32::from_le_bytes)
                    .ok_or_else(|| {
                        ObjectError::Elf(format!("{sec_name}: a call past its section"))
                    })?;
                target = (target as i64 + (i64::from(imm) + 1) * 8) as usize;
            }
            call_at.push((at, target));
        } else {
            return Err(ObjectError::Elf(format!(
                "{sec_name}: a relocation to {name} (type {r_type}) is neither a map reference \
                 nor a call of a subprogram"
            )));
        }
    }
    let mut out = Vec::new();
    for sym in file.symbols() {
        if sym.kind() != SymbolKind::Text || sym.section_index() != Some(s.index()) {
            continue;
        }
        let start = sym.address() as usize;
        let len = sym.size() as usize;
        let Some(insns) = code.get(start..start + len) else {
            return Err(ObjectError::Elf(format!(
                "{sec_name}: a function past its section"
            )));
        };
        let within = |off: u64| (start as u64..(start + len) as u64).contains(&off);
        let name = sym.name().map_err(elf)?.to_string();
        let func_type = b
            .find(&[(kind::FUNC, name.as_str())])
            .into_values()
            .next()
            .ok_or_else(|| ObjectError::Missing(format!("type of function {name}")))?;
        out.push(Func {
            type_id: func_type,
            name,
            section: sec_name.to_string(),
            start,
            insns: insns.to_vec(),
            map_refs: map_at
                .iter()
                .filter(|(at, _)| within(*at))
                .map(|(at, n)| ((*at as usize - start) / 8, n.clone()))
                .collect(),
            calls: call_at
                .iter()
                .filter(|(at, _)| within(*at))
                .map(|(at, t)| ((*at as usize - start) / 8, *t))
                .collect(),
            core_relos: relos
                .get(sec_name)
                .into_iter()
                .flatten()
                .filter(|r| within(u64::from(r.insn_off)))
                .map(|r| CoreRelo {
                    insn_off: r.insn_off - start as u32,
                    ..*r
                })
                .collect(),
        });
    }
    Ok(out)
}

/// A program with the subprograms it calls (and they call) appended, each
/// once, and each call pointed at its callee, as libbpf links them.
fn link(f: &Func, subprograms: &[&Func]) -> Result<ProgDef, ObjectError> {
    let mut p = ProgDef {
        name: f.name.clone(),
        section: f.section.clone(),
        insns: f.insns.clone(),
        map_refs: f.map_refs.clone(),
        core_relos: f.core_relos.clone(),
        funcs: vec![(0, f.type_id)],
    };
    // (callee's byte in SUBPROGRAMS, its first instruction here)
    let mut placed: Vec<(usize, usize)> = Vec::new();
    let mut calls: Vec<(usize, usize)> = f.calls.clone();
    while let Some((at, target)) = calls.pop() {
        let here = if let Some(&(_, here)) = placed.iter().find(|(t, _)| *t == target) {
            here
        } else {
            let callee = subprograms
                .iter()
                .find(|s| s.start == target)
                .ok_or_else(|| {
                    ObjectError::Missing(format!(
                        "function at byte {target} of {SUBPROGRAMS}, which {} calls",
                        f.name
                    ))
                })?;
            let here = p.insns.len() / 8;
            p.insns.extend_from_slice(&callee.insns);
            p.map_refs
                .extend(callee.map_refs.iter().map(|(i, n)| (i + here, n.clone())));
            p.core_relos
                .extend(callee.core_relos.iter().map(|r| CoreRelo {
                    insn_off: r.insn_off + (here * 8) as u32,
                    ..*r
                }));
            p.funcs.push((here as u32, callee.type_id));
            calls.extend(callee.calls.iter().map(|(i, t)| (i + here, *t)));
            placed.push((target, here));
            here
        };
        let i = at * 8;
        // a call of a BPF function: src_reg BPF_PSEUDO_CALL (1), the
        // immediate the callee's distance from the next instruction
        p.insns[i + 1] = (p.insns[i + 1] & 0x0f) | (1 << 4);
        let rel = here as i64 - at as i64 - 1;
        p.insns[i + 4..i + 8].copy_from_slice(&(rel as i32).to_le_bytes());
    }
    Ok(p)
}

impl BpfObject {
    /// Reads an object.
    pub fn parse(data: &[u8]) -> Result<BpfObject, ObjectError> {
        let file = object::File::parse(data).map_err(elf)?;
        let section = |name: &str| file.section_by_name(name);
        let raw_btf = section(".BTF")
            .ok_or_else(|| ObjectError::Missing(".BTF section".into()))?
            .data()
            .map_err(elf)?;
        let license = section("license")
            .ok_or_else(|| ObjectError::Missing("license section".into()))?
            .data()
            .map_err(elf)?
            .to_vec();

        // sizes of sections and offsets of symbols, which the BTF lacks
        let mut sizes = HashMap::new();
        for s in file.sections() {
            if let Ok(n) = s.name() {
                sizes.insert(n.to_string(), s.size() as u32);
            }
        }
        let mut offsets = HashMap::new();
        for sym in file.symbols() {
            if let Ok(n) = sym.name()
                && !n.is_empty()
            {
                offsets.insert(n.to_string(), sym.address() as u32);
            }
        }
        let mut btf_blob = raw_btf.to_vec();
        btf::fix_datasecs(&mut btf_blob, &sizes, &offsets)?;
        let b = Btf::parse(&btf_blob)?;
        let maps = map_defs(&b)?;
        let relos = match section(".BTF.ext") {
            Some(ext) => core_relos(ext.data().map_err(elf)?, &b)?,
            None => HashMap::new(),
        };

        let mut funcs = Vec::new();
        for s in file.sections() {
            let Ok(sec_name) = s.name() else { continue };
            if !(sec_name.starts_with("tp_btf/")
                || sec_name.starts_with("raw_tp")
                || sec_name == SUBPROGRAMS)
            {
                continue;
            }
            funcs.extend(functions(&file, &s, sec_name, &maps, &relos, &b)?);
        }
        let subprograms: Vec<&Func> = funcs.iter().filter(|f| f.section == SUBPROGRAMS).collect();
        let programs = funcs
            .iter()
            .filter(|f| f.section != SUBPROGRAMS)
            .map(|f| link(f, &subprograms))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BpfObject {
            btf: btf_blob,
            maps,
            programs,
            license,
        })
    }

    /// A program by name.
    #[cfg(test)]
    pub fn program(&self, name: &str) -> Option<&ProgDef> {
        self.programs.iter().find(|p| p.name == name)
    }
}
