//! The persistent cache's codec: little-endian, length-prefixed fields. The
//! scan engine writes its entries with it and each accumulator its own state,
//! so it sits below both.

/// Little-endian, length-prefixed fields for the persistent cache file.
#[derive(Default)]
pub struct Encoder {
    pub out: Vec<u8>,
}

impl Encoder {
    pub fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.out.extend_from_slice(b);
    }

    pub fn opt_bytes(&mut self, b: Option<&[u8]>) {
        self.u64(b.is_some() as u64);
        if let Some(b) = b {
            self.bytes(b);
        }
    }

    pub fn opt_f64(&mut self, v: Option<f64>) {
        self.u64(v.is_some() as u64);
        if let Some(v) = v {
            self.u64(v.to_bits());
        }
    }

    pub fn strings(&mut self, v: &[String]) {
        self.u64(v.len() as u64);
        for s in v {
            self.bytes(s.as_bytes());
        }
    }
}

/// Reads what `Encoder` wrote; every read fails cleanly on a short or bad file.
pub struct Decoder<'a> {
    input: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub fn new(input: &'a [u8]) -> Decoder<'a> {
        Decoder { input }
    }

    pub fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.input.split_first_chunk::<8>()?;
        self.input = rest;
        Some(u64::from_le_bytes(*head))
    }

    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.input.len() {
            return None;
        }
        let (b, rest) = self.input.split_at(len);
        self.input = rest;
        Some(b)
    }

    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    pub fn opt_bytes(&mut self) -> Option<Option<&'a [u8]>> {
        match self.u64()? {
            0 => Some(None),
            1 => Some(Some(self.bytes()?)),
            _ => None,
        }
    }

    pub fn opt_string(&mut self) -> Option<Option<String>> {
        match self.opt_bytes()? {
            None => Some(None),
            Some(b) => Some(Some(String::from_utf8(b.to_vec()).ok()?)),
        }
    }

    pub fn opt_f64(&mut self) -> Option<Option<f64>> {
        match self.u64()? {
            0 => Some(None),
            1 => Some(Some(f64::from_bits(self.u64()?))),
            _ => None,
        }
    }

    pub fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.u64()?;
        if n > self.input.len() as u64 {
            return None;
        }
        (0..n).map(|_| self.string()).collect()
    }
}
