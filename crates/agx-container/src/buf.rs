//! A bounds-checked view of part of the input that knows its absolute offset,
//! so that every error can name the byte offset in the file.

use crate::error::ContainerError;

#[derive(Clone, Copy)]
pub(crate) struct Buf<'a> {
    pub data: &'a [u8],
    /// Absolute offset of `data[0]` in the input file.
    pub base: u64,
    /// What this view is, for messages: "the file", "the __compute section".
    pub what: &'a str,
}

pub(crate) type Result<T> = std::result::Result<T, ContainerError>;

impl<'a> Buf<'a> {
    pub fn new(data: &'a [u8], base: u64, what: &'a str) -> Self {
        Buf { data, base, what }
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Absolute offset of `off`.
    pub fn abs(&self, off: u64) -> u64 {
        self.base.saturating_add(off)
    }

    /// The bytes `off..off+len`, or an error naming `item`.
    pub fn bytes(&self, off: u64, len: u64, item: &str) -> Result<&'a [u8]> {
        let end = off.checked_add(len);
        match end {
            Some(end) if end <= self.len() => Ok(&self.data[off as usize..end as usize]),
            _ => Err(ContainerError::at(
                self.abs(off.min(self.len())),
                format!(
                    "{item} runs past the end of {} ({len} bytes needed from offset {:#x}, {} bytes left)",
                    self.what,
                    self.abs(off),
                    self.len().saturating_sub(off)
                ),
            )),
        }
    }

    /// A sub-view `off..off+len` with a new description.
    pub fn sub(&self, off: u64, len: u64, item: &str, what: &'a str) -> Result<Buf<'a>> {
        let data = self.bytes(off, len, item)?;
        Ok(Buf {
            data,
            base: self.abs(off),
            what,
        })
    }

    pub fn u32le(&self, off: u64, item: &str) -> Result<u32> {
        let b = self.bytes(off, 4, item)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u32be(&self, off: u64, item: &str) -> Result<u32> {
        let b = self.bytes(off, 4, item)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u32e(&self, off: u64, big: bool, item: &str) -> Result<u32> {
        if big {
            self.u32be(off, item)
        } else {
            self.u32le(off, item)
        }
    }

    pub fn u64le(&self, off: u64, item: &str) -> Result<u64> {
        let b = self.bytes(off, 8, item)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A fixed 16-byte Mach-O name field, up to its first NUL.
    pub fn name16(&self, off: u64, item: &str) -> Result<String> {
        let b = self.bytes(off, 16, item)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(16);
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }
}
