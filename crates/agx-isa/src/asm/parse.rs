//! Line lexing: comments, listing columns, labels, directives, mnemonic and
//! operand tokens (with their 1-based columns), and operand-token parsing
//! (registers, integers) shared by the encoders.

use crate::model::{flags, RegFile};

/// An operand token and the 1-based column where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    pub text: String,
    pub col: usize,
}

/// What one source line holds (besides labels).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    Empty,
    /// `.org ADDR`
    Org(u32),
    /// Raw bytes: `.hex 0800...` or a `<disassembly failed>` listing line.
    Raw(Vec<u8>),
    Insn {
        mnemonic: String,
        col: usize,
        ops: Vec<Tok>,
    },
}

/// One parsed source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub no: usize,
    /// Address from a pasted listing's address column.
    pub addr: Option<u32>,
    /// Byte count of the listing's hex column (the printed length).
    pub hexlen: Option<u8>,
    /// Labels defined on this line (name, column).
    pub labels: Vec<(String, usize)>,
    pub body: Body,
}

/// A parse error: (column, message).
pub(crate) type PErr = (usize, String);

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_ident(s: &str) -> bool {
    let mut it = s.chars();
    match it.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '.' => {}
        _ => return false,
    }
    it.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Splits off the first whitespace-delimited word of `s[pos..]`:
/// (word start, word end) as byte offsets, or None at end of line.
fn next_word(s: &str, pos: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut i = pos;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    if i >= b.len() {
        return None;
    }
    let st = i;
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    Some((st, i))
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    if s.len() & 1 != 0 || !is_hex(s) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Parses an unsigned/signed integer: decimal, `0x` hex, `0b` binary, with
/// an optional leading `-`.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if h.is_empty() {
            return None;
        }
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        if b.is_empty() {
            return None;
        }
        i64::from_str_radix(b, 2).ok()?
    } else {
        if body.is_empty() || !body.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Converts a cryptic-syntax register (`$r0`, `$r0_r1.sx`) to the default
/// spelling (`r0.cache`, `r0_r1.cache.sx`).
fn decrypt(tok: &str) -> String {
    match tok.strip_prefix('$') {
        Some(rest) => match rest.find('.') {
            Some(p) => format!("{}.cache{}", &rest[..p], &rest[p..]),
            None => format!("{rest}.cache"),
        },
        None => tok.to_string(),
    }
}

/// Parses one source line (1-based number `no`).
pub(crate) fn parse_line(no: usize, raw: &str) -> Result<Line, PErr> {
    let mut line = Line {
        no,
        addr: None,
        hexlen: None,
        labels: Vec::new(),
        body: Body::Empty,
    };
    // Comments.
    let end = raw.find([';', '#']).unwrap_or(raw.len());
    let s = raw[..end].trim_end();
    let Some((w0s, w0e)) = next_word(s, 0) else {
        return Ok(line);
    };
    // applegpu's debug output pasted with a listing ("TODO: 1100").
    if &s[w0s..w0e] == "TODO:" {
        return Ok(line);
    }
    let mut pos = w0s;
    // Listing columns: `ADDR: HEXBYTES  text`.
    let mut hexcol: Option<Vec<u8>> = None;
    let w0 = &s[w0s..w0e];
    if let Some(a) = w0.strip_suffix(':') {
        if is_hex(a) {
            if let Some((h1, h2)) = next_word(s, w0e) {
                if let Some(bytes) = hex_bytes(&s[h1..h2]) {
                    if bytes.len() >= 2 {
                        let addr = u32::from_str_radix(a, 16)
                            .map_err(|_| (w0s + 1, format!("address `{a}` is too large")))?;
                        line.addr = Some(addr);
                        line.hexlen = u8::try_from(bytes.len()).ok();
                        hexcol = Some(bytes);
                        pos = h2;
                    }
                }
            }
        }
    }
    // Labels.
    loop {
        let Some((a, b)) = next_word(s, pos) else {
            return Ok(line);
        };
        let w = &s[a..b];
        match w.strip_suffix(':') {
            Some(name) if is_ident(name) => {
                line.labels.push((name.to_string(), a + 1));
                pos = b;
            }
            _ => break,
        }
    }
    let rest = &s[pos..];
    let lead = rest.len() - rest.trim_start().len();
    let start = pos + lead;
    let text = s[start..].trim_end();
    if text.is_empty() {
        return Ok(line);
    }
    if text.starts_with("<disassembly failed>") {
        return match hexcol {
            Some(b) => {
                line.body = Body::Raw(b);
                Ok(line)
            }
            None => Err((
                start + 1,
                "`<disassembly failed>` needs the listing's hex column".into(),
            )),
        };
    }
    if let Some(b) = parse_unknown(text).map_err(|m| (start + 1, m))? {
        line.body = Body::Raw(b);
        return Ok(line);
    }
    let (m_end, _) = next_word(s, start)
        .map(|(_, e)| (e, ()))
        .unwrap_or((s.len(), ()));
    let mnemonic = &s[start..m_end];
    let args = &s[m_end..];
    match mnemonic {
        ".org" => {
            let t = args.trim();
            let v = parse_int(t)
                .filter(|v| (0..=u32::MAX as i64).contains(v))
                .ok_or_else(|| {
                    (
                        m_end + 2,
                        format!("`.org` needs an address (0..=0xFFFFFFFF), found `{t}`"),
                    )
                })?;
            line.body = Body::Org(v as u32);
            return Ok(line);
        }
        ".hex" => {
            let t: String = args.split_whitespace().collect();
            let b = hex_bytes(&t).ok_or_else(|| {
                (
                    m_end + 2,
                    "`.hex` needs an even number of hex digits".to_string(),
                )
            })?;
            line.body = Body::Raw(b);
            return Ok(line);
        }
        _ => {}
    }
    // Operands: split on commas, tracking columns.
    let mut ops = Vec::new();
    if !args.trim().is_empty() {
        let mut off = m_end;
        for piece in args.split(',') {
            let lead = piece.len() - piece.trim_start().len();
            let t = piece.trim();
            if t.is_empty() {
                return Err((off + lead + 1, "empty operand".into()));
            }
            // Normalise internal whitespace ("lsl  2" -> "lsl 2").
            let norm: Vec<&str> = t.split_whitespace().collect();
            ops.push(Tok {
                text: decrypt(&norm.join(" ")),
                col: off + lead + 1,
            });
            off += piece.len() + 1;
        }
    }
    line.body = Body::Insn {
        mnemonic: mnemonic.to_string(),
        col: start + 1,
        ops,
    };
    Ok(line)
}

/// A parsed register operand: `count` consecutive elements starting at
/// `first` (a half index for 16-bit names, a register number otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RegTok {
    pub file: RegFile,
    pub w16: bool,
    pub first: u32,
    pub count: u32,
    pub flags: u8,
}

fn parse_name(n: &str) -> Option<(RegFile, u32, Option<bool>)> {
    let file = match n.as_bytes().first()? {
        b'r' => RegFile::Gpr,
        b'u' => RegFile::Uniform,
        _ => return None,
    };
    let body = &n[1..];
    let (digits, half) = match body.as_bytes().last()? {
        b'l' => (&body[..body.len() - 1], Some(false)),
        b'h' => (&body[..body.len() - 1], Some(true)),
        _ => (body, None),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) || digits.len() > 6 {
        return None;
    }
    Some((file, digits.parse().ok()?, half))
}

/// Parses a register token (`r3`, `r0h.cache`, `u4_u5`, `r0_r1_r2.discard`).
pub(crate) fn parse_reg(t: &str) -> Option<RegTok> {
    let (base, sfx) = match t.find('.') {
        Some(p) => (&t[..p], &t[p..]),
        None => (t, ""),
    };
    let mut fl = 0u8;
    for f in sfx.split('.').skip(1) {
        fl |= match f {
            "cache" => flags::CACHE,
            "discard" => flags::DISCARD,
            "sx" => flags::SX,
            "abs" => flags::ABS,
            "neg" => flags::NEG,
            _ => return None,
        };
    }
    let mut file = None;
    let mut w16 = None;
    let mut first = 0u32;
    let mut count = 0u32;
    for name in base.split('_') {
        let (f, n, h) = parse_name(name)?;
        let idx = match h {
            Some(hi) => n * 2 + hi as u32,
            None => n,
        };
        if count == 0 {
            file = Some(f);
            w16 = Some(h.is_some());
            first = idx;
        } else if file != Some(f) || w16 != Some(h.is_some()) || idx != first + count {
            return None;
        }
        count += 1;
    }
    Some(RegTok {
        file: file?,
        w16: w16?,
        first,
        count,
        flags: fl,
    })
}

/// Range check for the first register of a token; the message says what
/// is allowed.
pub(crate) fn reg_range_error(r: &RegTok, text: &str) -> Option<String> {
    let (limit, what) = match (r.file, r.w16) {
        (RegFile::Gpr, false) => (128, "general-purpose registers are r0..r127"),
        (RegFile::Gpr, true) => (256, "16-bit halves are r0l..r127h"),
        (RegFile::Uniform, false) => (256, "uniform registers are u0..u255"),
        (RegFile::Uniform, true) => (512, "16-bit uniform halves are u0l..u255h"),
    };
    if r.first >= limit {
        let base = text.split('.').next().unwrap_or(text);
        Some(format!("register `{base}` out of range: {what}"))
    } else {
        None
    }
}

/// All integers written in `t` (decimal digit runs, `0x` hex), with sign.
pub(crate) fn numbers_in(t: &str) -> Vec<i64> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let neg = i > 0 && b[i - 1] == b'-';
            if b[i] == b'0' && i + 1 < b.len() && (b[i + 1] == b'x' || b[i + 1] == b'X') {
                let mut j = i + 2;
                let neg = neg || (j < b.len() && b[j] == b'-');
                if j < b.len() && b[j] == b'-' {
                    j += 1;
                }
                let st = j;
                while j < b.len() && b[j].is_ascii_hexdigit() {
                    j += 1;
                }
                if let Ok(v) = i64::from_str_radix(&t[st..j], 16) {
                    out.push(if neg { -v } else { v });
                }
                i = j.max(i + 1);
                continue;
            }
            let st = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if let Ok(v) = t[st..i].parse::<i64>() {
                out.push(if neg { -v } else { v });
            }
            continue;
        }
        i += 1;
    }
    out
}

/// Native syntax's undecodable bytes (`stream::unknown_text`):
/// `unknown.<group> (N bytes) 0x<hex>` or `unknown (length unknown) 0x<hex>`,
/// `<hex>` the bytes in memory order. `Ok(None)`: not such a line.
fn parse_unknown(text: &str) -> Result<Option<Vec<u8>>, String> {
    let Some(rest) = text.strip_prefix("unknown") else {
        return Ok(None);
    };
    // `unknown` alone or `unknown.<group>`, then the parenthesised length
    let rest = match rest.strip_prefix('.') {
        Some(r) => {
            let end = r.find(char::is_whitespace).unwrap_or(r.len());
            if end == 0 {
                return Ok(None);
            }
            &r[end..]
        }
        None if rest.starts_with(char::is_whitespace) => rest,
        None => return Ok(None),
    };
    let rest = rest.trim_start();
    let Some(r) = rest.strip_prefix('(') else {
        return Err(
            "`unknown` needs `(N bytes)` or `(length unknown)`, then `0x` and the bytes".into(),
        );
    };
    let Some(close) = r.find(')') else {
        return Err("`unknown`: missing `)` after the length".into());
    };
    let want = match r[..close].trim() {
        "length unknown" => 2,
        l => match l.strip_suffix("bytes").map(str::trim).and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if (2..=12).contains(&n) && n % 2 == 0 => n,
            _ => {
                return Err(format!(
                    "`unknown`: the length must be `N bytes` (N even, 2..=12) or `length unknown`, found `{l}`"
                ))
            }
        },
    };
    let hex = r[close + 1..].trim();
    let Some(b) = hex.strip_prefix("0x").and_then(hex_bytes) else {
        return Err(format!(
            "`unknown`: expected `0x` and {want} bytes in hex after the length, found `{hex}`"
        ));
    };
    if b.len() != want {
        return Err(format!(
            "`unknown`: the length says {want} bytes but `{hex}` holds {}",
            b.len()
        ));
    }
    Ok(Some(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_line() {
        let l = parse_line(3, "  4c: 0a0511223344          fadd32  r1, $r2, r3 ; hi").unwrap();
        assert_eq!(l.addr, Some(0x4c));
        match l.body {
            Body::Insn { mnemonic, ops, .. } => {
                assert_eq!(mnemonic, "fadd32");
                let t: Vec<_> = ops.iter().map(|o| o.text.as_str()).collect();
                assert_eq!(t, ["r1", "r2.cache", "r3"]);
            }
            b => panic!("{b:?}"),
        }
    }

    #[test]
    fn labels_and_regs() {
        let l = parse_line(1, "loop: top: stop").unwrap();
        assert_eq!(l.labels.len(), 2);
        let r = parse_reg("r0h_r1l.cache").unwrap();
        assert_eq!(
            (r.w16, r.first, r.count, r.flags),
            (true, 1, 2, flags::CACHE)
        );
        assert!(parse_reg("r0_r2").is_none());
        assert_eq!(numbers_in("sr80 (x), 0x-1F"), vec![80, -31]);
    }
}
