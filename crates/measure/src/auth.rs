//! STAMP authentication (RFC 8762 §4.2.2, §4.3.2; RFC 8972 §4.8):
//! HMAC-SHA-256 truncated to its first 128 bits, and the shared key.
//!
//! RFC 8762 leaves key management to configuration; misura reads the key
//! from a file (see [`StampKey::from_file_contents`]). The HMAC is compared
//! in constant time (the `hmac` crate's `verify_truncated_left`), so an
//! attacker probing the reflector learns nothing from reply timing.

use core::fmt;

use hmac::{Hmac, Mac};
use misura_wire::stamp;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// A STAMP HMAC: HMAC-SHA-256 truncated to 16 octets.
pub const HMAC_LEN: usize = 16;

/// Why a key file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the key is empty: put the shared secret in the file, as hex on the first line (e.g. `openssl rand -hex 32 > stamp.key`) or as raw bytes")]
    Empty,
}

/// The shared HMAC key of an authenticated STAMP session. Its `Debug`
/// output never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct StampKey(Vec<u8>);

impl fmt::Debug for StampKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StampKey({} bytes)", self.0.len())
    }
}

impl StampKey {
    /// A key from its bytes; refuses an empty key.
    pub fn new(bytes: &[u8]) -> Result<StampKey, AuthError> {
        if bytes.is_empty() {
            return Err(AuthError::Empty);
        }
        Ok(StampKey(bytes.to_vec()))
    }

    /// A key from the contents of a key file:
    ///
    /// * if the first line, whitespace trimmed, is a non-empty even number
    ///   of hex digits, the key is what they encode (`openssl rand -hex 32`
    ///   writes such a file; the trailing newline does not count);
    /// * otherwise the key is the file's bytes exactly as they are.
    ///
    /// A file that is empty or only whitespace is refused: such a key is
    /// almost certainly a mistake, and HMAC with it authenticates nothing.
    pub fn from_file_contents(contents: &[u8]) -> Result<StampKey, AuthError> {
        if contents.iter().all(u8::is_ascii_whitespace) {
            return Err(AuthError::Empty);
        }
        let first = contents.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let first = first.trim_ascii();
        if !first.is_empty() && first.len() % 2 == 0 && first.iter().all(u8::is_ascii_hexdigit) {
            let key = first
                .chunks_exact(2)
                .map(|p| (hex_val(p[0]) << 4) | hex_val(p[1]))
                .collect::<Vec<u8>>();
            return StampKey::new(&key);
        }
        StampKey::new(contents)
    }

    /// Key length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: an empty key cannot be built.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes keys of any length (longer ones are hashed first).
        HmacSha256::new_from_slice(&self.0).expect("HMAC accepts keys of any length")
    }
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// HMAC-SHA-256 over the concatenation of `parts`, truncated to 16 octets
/// (RFC 8762 §4.4; RFC 8972 §4.8 covers discontiguous ranges, hence parts).
pub fn hmac16(key: &StampKey, parts: &[&[u8]]) -> [u8; HMAC_LEN] {
    let mut m = key.mac();
    for p in parts {
        m.update(p);
    }
    let full = m.finalize().into_bytes();
    let mut out = [0u8; HMAC_LEN];
    out.copy_from_slice(&full[..HMAC_LEN]);
    out
}

/// True when `tag` is the truncated HMAC of `parts` under `key`; compared
/// in constant time. A tag of the wrong length never verifies.
pub fn verify16(key: &StampKey, parts: &[&[u8]], tag: &[u8]) -> bool {
    if tag.len() != HMAC_LEN {
        return false;
    }
    let mut m = key.mac();
    for p in parts {
        m.update(p);
    }
    m.verify_truncated_left(tag).is_ok()
}

/// Writes an authenticated reply's HMACs: the HMAC TLV's (RFC 8972 §4.8),
/// if it has one, then the base packet's.
pub(crate) fn sign_reply(key: &StampKey, mode: stamp::Mode, reply: &mut [u8]) {
    if let Some(c) = stamp::tlv_hmac_covered(reply, mode) {
        let tag = hmac16(key, &[&reply[c.seq.clone()], &reply[c.tlvs.clone()]]);
        reply[c.hmac].copy_from_slice(&tag);
    }
    let covered = stamp::hmac_covered(mode).expect("authenticated mode has an HMAC field");
    let tag = hmac16(key, &[&reply[covered]]);
    reply[stamp::HMAC_FIELD].copy_from_slice(&tag);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4231_case_2_truncated() {
        // RFC 4231 test case 2 (key "Jefe"); HMAC-SHA-256 begins 5bdcc146bf60754e6a042426089575c7.
        let key = StampKey::new(b"Jefe").unwrap();
        let tag = hmac16(&key, &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            tag,
            [
                0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95,
                0x75, 0xc7
            ]
        );
        assert!(verify16(&key, &[b"what do ya want for nothing?"], &tag));
        let mut bad = tag;
        bad[15] ^= 1;
        assert!(!verify16(&key, &[b"what do ya want for nothing?"], &bad));
        assert!(!verify16(&key, &[b"what do ya want for nothing!"], &tag));
        assert!(!verify16(
            &key,
            &[b"what do ya want for nothing?"],
            &tag[..15]
        ));
        let other = StampKey::new(b"Jeff").unwrap();
        assert!(!verify16(&other, &[b"what do ya want for nothing?"], &tag));
    }

    #[test]
    fn key_parsing() {
        let k = StampKey::from_file_contents(b"  00112233aaBBccdd \n").unwrap();
        assert_eq!(
            k,
            StampKey::new(&[0x00, 0x11, 0x22, 0x33, 0xaa, 0xbb, 0xcc, 0xdd]).unwrap()
        );
        // Only the first line is the key when it is hex.
        let k = StampKey::from_file_contents(b"abcd\nignored comment\n").unwrap();
        assert_eq!(k.len(), 2);
        // Not hex (odd length, or other characters): raw bytes, newline included.
        let k = StampKey::from_file_contents(b"abc\n").unwrap();
        assert_eq!(k, StampKey::new(b"abc\n").unwrap());
        let k = StampKey::from_file_contents(b"correct horse battery staple").unwrap();
        assert_eq!(k.len(), 28);
        let raw = [0u8, 0xff, 0x10, 0x0a, 0x80];
        assert_eq!(
            StampKey::from_file_contents(&raw).unwrap(),
            StampKey::new(&raw).unwrap()
        );
        // Empty keys are refused.
        assert_eq!(StampKey::from_file_contents(b""), Err(AuthError::Empty));
        assert_eq!(
            StampKey::from_file_contents(b"  \n\t\n"),
            Err(AuthError::Empty)
        );
        assert_eq!(StampKey::new(b""), Err(AuthError::Empty));
        // The key never shows in Debug output.
        assert_eq!(
            format!("{:?}", StampKey::new(b"secret").unwrap()),
            "StampKey(6 bytes)"
        );
    }
}
