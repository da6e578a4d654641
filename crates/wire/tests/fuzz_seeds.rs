//! The fuzz seed corpus must stay valid: seeds that no longer parse would
//! silently make the fuzzer start from noise after a format change.

use std::path::Path;

use misura_wire::{parse_frame, ProbeFlags, ETHERTYPE_MISURA};

#[test]
fn fuzz_seeds_parse() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    if !fuzz.join("Cargo.toml").is_file() {
        // Crate used outside the repository (e.g. packaged): no seeds here.
        // Inside it the seeds must be there.
        return;
    }
    let dir = fuzz.join("seeds/parse_frame");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut seen = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let (eth, probe) = parse_frame(&bytes, ETHERTYPE_MISURA)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            bytes.len() >= 60,
            "{}: shorter than a minimum frame",
            path.display()
        );
        if path.ends_with("vlan_reply.bin") {
            assert_eq!(eth.vlan.map(|v| v.vid), Some(42));
            assert!(probe
                .flags
                .contains(ProbeFlags::REPLY | ProbeFlags::FOLLOW_UP));
        }
        seen += 1;
    }
    assert!(seen >= 2, "expected seed frames in {}", dir.display());
}
