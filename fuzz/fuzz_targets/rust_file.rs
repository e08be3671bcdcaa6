//! Bytes as one `.rs` file of a crate through the public audit entry: the audit must complete,
//! whatever the file holds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"f\"\nversion = \"0.1.0\"\n\n[dependencies]\naxum = \"0.7\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("src/main.rs"), data).unwrap();
    retrysafe::audit(dir.path(), ".").unwrap();
});
