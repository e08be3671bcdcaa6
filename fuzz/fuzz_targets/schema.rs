//! Bytes as a Prisma schema or an SQL migration (picked by the first byte) through the schema
//! readers: they must return, whatever the file holds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use retrysafe::discover::{Lang, SourceFile};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let (lang, rel) = if pick % 2 == 0 {
        (Lang::Prisma, "prisma/schema.prisma")
    } else {
        (Lang::Sql, "migrations/001_init.sql")
    };
    let file = SourceFile {
        rel: rel.to_string(),
        lang,
        text: text.to_string(),
    };
    let _ = retrysafe::frontend::schema::analyze(&[file]);
});
