//! Bytes as one `.ts`, `.tsx` or `.js` file (picked by the first byte) through the public audit
//! entry: the audit must complete, whatever the file holds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let name = ["app.ts", "app.tsx", "app.js"][pick as usize % 3];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), body).unwrap();
    retrysafe::audit(dir.path(), ".").unwrap();
});
