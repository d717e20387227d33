//! Native syntax (issue #13): finds, over random encodings of every form,
//! the instructions whose applegpu text does not determine them (assembling
//! the text gives a different instruction), and checks native syntax has none.

use agx_isa::asm::assemble_at;
use agx_isa::forms::FORMS;
use agx_isa::{decode, format_asm, Instruction, Syntax};
use std::collections::BTreeMap;

/// Everything about an instruction that later stages read: form, mnemonic,
/// operands (role, register file, width, count, hints), implicit operands,
/// the raised flag, and the semantic accessors the analysis calls.
fn signature(i: &Instruction) -> String {
    format!(
        "{} {} {:?} {:?} raised={} adj={:?} flow={:?} exec={:?}/{:?} mem={:?} cat={:?}",
        i.form,
        i.mnemonic,
        i.operands,
        i.implicit,
        i.raised,
        i.stack_adjust(),
        i.flow(),
        i.exec_op(),
        i.exec_count(),
        i.mem_space(),
        i.category(),
    )
}

fn strict_raised() -> bool {
    std::env::var("SURVEY_RAISED").is_ok()
}

/// xorshift64*, deterministic.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn word(&mut self) -> u128 {
        (self.next() as u128) | ((self.next() as u128) << 64)
    }
}

/// Random words of form `f` (fixed bits set, both sizes), decoded as `f`.
fn samples(f: &agx_isa::forms::Form, n: usize, rng: &mut Rng) -> Vec<Instruction> {
    let mut out = Vec::new();
    for k in 0..n * 4 {
        if out.len() >= n {
            break;
        }
        let mut w = (rng.word() & !f.mask) | f.bits;
        if f.sizes.0 != f.sizes.1 {
            if k % 2 == 0 {
                w |= 1u128 << f.length_bit;
            } else {
                w &= !(1u128 << f.length_bit);
            }
        }
        let bytes = w.to_le_bytes();
        if let Ok(i) = decode(&bytes[..12], 0x100) {
            if i.form == f.idx {
                out.push(i);
            }
        }
    }
    out
}

/// Per form: (cases, mismatches, an example).
fn collisions(syntax: Syntax, per_form: usize) -> BTreeMap<String, (usize, usize, String)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = BTreeMap::new();
    for f in FORMS.iter() {
        for i in samples(f, per_form, &mut rng) {
            let text = format_asm(&i, syntax);
            let e = out
                .entry(format!("{:3} {}", f.idx, f.name))
                .or_insert((0, 0, String::new()));
            e.0 += 1;
            let back = assemble_at(&text, i.addr)
                .map_err(|e| e.to_string())
                .and_then(|b| decode(&b, i.addr).map_err(|e| e.to_string()));
            let ok = match &back {
                Ok(b) => {
                    signature(b) == signature(&i)
                        || (!strict_raised()
                            && signature(b).replace("raised=true", "raised=false")
                                == signature(&i).replace("raised=true", "raised=false"))
                }
                Err(_) => false,
            };
            if !ok {
                e.1 += 1;
                if e.2.is_empty() {
                    let hex: String = i.bytes()[..i.len as usize]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    e.2 = match back {
                        Ok(b) => format!(
                            "{hex} `{}` -> `{}`\n      {}\n      {}",
                            text.trim_end(),
                            format_asm(&b, syntax).trim_end(),
                            signature(&i),
                            signature(&b)
                        ),
                        Err(m) => format!("{hex} `{}`: {m}", text.trim_end()),
                    };
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "survey: prints which forms applegpu's text does not determine"]
fn survey_default_syntax_collisions() {
    let n: usize = std::env::var("SURVEY_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let t = collisions(Syntax::Default, n);

    for (k, (cases, bad, ex)) in &t {
        if *bad > 0 {
            eprintln!("{k}: {bad}/{cases} e.g. {ex}");
        }
    }
}
