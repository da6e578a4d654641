//! The parse_stamp fuzz seeds must stay valid STAMP packets, so the fuzzer
//! starts from real traffic. File names say the kind and mode.

use std::path::Path;

use misura_wire::stamp::{Mode, ReflectorRepr, SenderRepr, Tlvs};

#[test]
fn stamp_fuzz_seeds_parse() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    if !fuzz.join("Cargo.toml").is_file() {
        // Crate used outside the repository (e.g. packaged): no seeds here.
        // Inside it the seeds must be there.
        return;
    }
    let dir = fuzz.join("seeds/parse_stamp");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut seen = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let bytes = std::fs::read(&path).unwrap();
        let mode = if name.starts_with("auth_") {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        };
        if name.contains("_sender") {
            SenderRepr::parse(&bytes, mode).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else {
            ReflectorRepr::parse(&bytes, mode).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let tlvs = &bytes[mode.base_len()..];
        assert!(!tlvs.is_empty(), "{name}: seeds should carry TLVs");
        for t in Tlvs::new(tlvs) {
            t.unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        seen += 1;
    }
    assert!(seen >= 4, "expected STAMP seeds in {}", dir.display());
}
