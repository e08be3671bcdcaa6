//! A cheap scan of a `.rs` file for nesting that would make `syn` (or a walk of what it builds)
//! recurse too deep. `syn` recurses on every construct that holds another of its kind, and not all
//! of them are brackets: closures (`|a| |b| ..`, `move || ..`), generic arguments
//! (`Option<Option<..>>`), function types (`fn() -> fn() -> ..`, `impl Fn() -> impl Fn() -> ..`),
//! references and pointers (`&mut &mut ..`, `*const *const ..`) and prefix operators (`!!..`).
//!
//! The scan is linear and allocation-free. It tokenises enough of Rust to skip strings, chars,
//! lifetimes and comments, and keeps three counts whose sum bounds the parser's depth: brackets
//! open, generic angles open in the current statement, and nesting tokens in the current
//! segment (since the last `,`, `;` or `=>` at this bracket depth): `move`, `return`, `fn`,
//! `impl`, `dyn`, `mut`, `->`, a closure's parameter list, a prefix `!`, `-`, `*` or `&`.
//! Ordinary code stays far below the limit; a flat chain (`a.b().c()..`, `1 + 1 + ..`) adds
//! nothing.

/// Where the sum of the counts first passes `max`: its 1-based line and what nests there.
pub fn too_deep(text: &str, max: usize) -> Option<(u32, String)> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut line = 1u32;
    let mut depth = 0usize;
    let mut angle = 0usize;
    // nesting tokens in the current segment, per bracket depth (deeper than `max` is reported
    // before it is indexed)
    let mut seg = [0usize; 64];
    let mut deep_seg = 0usize;
    // prefix operators in a row (`!!x`, `&mut &mut x`, `*const *const T`): an operand or a binary
    // operator ends the row
    let mut pre = 0usize;
    // the previous token ends an operand (`x`, `1`, `)`, `?`): a following `|`, `&`, `*`, `-`
    // or `<` is a binary operator or a comparison, not a prefix
    let mut operand = false;
    // inside a closure's parameter list opened at this depth
    let mut params: Option<usize> = None;
    macro_rules! seg_at {
        ($d:expr) => {
            *(if $d < seg.len() {
                &mut seg[$d]
            } else {
                &mut deep_seg
            })
        };
    }
    macro_rules! check {
        ($what:expr) => {
            if depth + angle + pre + seg_at!(depth) > max {
                return Some((line, format!("{} nest more than {max} deep", $what)));
            }
        };
    }
    while i < b.len() {
        let c = b[i];
        // whitespace, comments, lifetimes, keywords and prefix operators keep a row of prefix
        // operators going; any other token ends it
        let mut keep_pre = false;
        match c {
            b'\n' => {
                line += 1;
                i += 1;
                keep_pre = true;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                keep_pre = true;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                keep_pre = true;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
                keep_pre = true;
            }
            b'"' => {
                i = skip_string(b, i + 1, &mut line);
                operand = true;
            }
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    // an escaped char literal: '\n', '\'', '\u{..}'
                    let mut j = i + 3;
                    while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
                        j += 1;
                    }
                    i = j + 1;
                    operand = true;
                } else {
                    // a char literal ('x', 'é') or a lifetime ('a, 'static)
                    let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + ch_len) == Some(&b'\'') {
                        i += 2 + ch_len;
                        operand = true;
                    } else {
                        i += 1;
                        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                            i += 1;
                        }
                        // a lifetime neither nests nor ends an operand
                        keep_pre = true;
                    }
                }
            }
            b'0'..=b'9' => {
                i += 1;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
                {
                    i += 1;
                }
                operand = true;
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &b[start..i];
                // raw and byte strings: r"..", r#".."#, b"..", br#".."#, c".."
                if matches!(word, b"r" | b"br" | b"cr") && matches!(b.get(i), Some(b'"' | b'#')) {
                    let mut j = i;
                    let mut hashes = 0;
                    while j < b.len() && b[j] == b'#' {
                        hashes += 1;
                        j += 1;
                    }
                    if b.get(j) == Some(&b'"') {
                        j += 1;
                        while j < b.len() {
                            if b[j] == b'\n' {
                                line += 1;
                            }
                            if b[j] == b'"' && b[j + 1..].iter().take(hashes).all(|&h| h == b'#') {
                                j += 1 + hashes;
                                break;
                            }
                            j += 1;
                        }
                        i = j;
                        operand = true;
                        pre = 0;
                        continue;
                    }
                    // `r#ident`: a raw identifier
                    i = j;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    operand = true;
                    pre = 0;
                    continue;
                }
                if matches!(word, b"b" | b"c") && b.get(i) == Some(&b'"') {
                    i = skip_string(b, i + 1, &mut line);
                    operand = true;
                    pre = 0;
                    continue;
                }
                if params.is_some() {
                    continue;
                }
                if matches!(
                    word,
                    b"move"
                        | b"return"
                        | b"break"
                        | b"yield"
                        | b"become"
                        | b"fn"
                        | b"impl"
                        | b"dyn"
                        | b"mut"
                        | b"const"
                        | b"async"
                        | b"static"
                        | b"box"
                ) {
                    seg_at!(depth) += 1;
                    check!("closures, function types, references or returns");
                    operand = false;
                    keep_pre = true;
                } else {
                    operand = true;
                }
            }
            b'(' | b'[' | b'{' => {
                if c == b'{' {
                    angle = 0;
                }
                depth += 1;
                seg_at!(depth) = 0;
                check!("brackets");
                operand = false;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if c == b'}' {
                    angle = 0;
                    seg_at!(depth) = 0;
                }
                if params.is_some_and(|p| p > depth) {
                    params = None;
                }
                operand = true;
                i += 1;
            }
            b';' => {
                angle = 0;
                seg_at!(depth) = 0;
                operand = false;
                i += 1;
            }
            b',' => {
                if params.is_none() {
                    seg_at!(depth) = 0;
                }
                operand = false;
                i += 1;
            }
            b'|' => {
                let double = b.get(i + 1) == Some(&b'|');
                if params == Some(depth) {
                    // the end of a parameter list: one closure deeper
                    params = None;
                    seg_at!(depth) += 1;
                    check!("closures");
                    operand = false;
                    i += 1;
                } else if params.is_some() || operand {
                    // a binary `|` or `||`, or one inside a parameter's type
                    operand = false;
                    i += if double { 2 } else { 1 };
                } else if double {
                    // `|| body`: a closure without parameters
                    seg_at!(depth) += 1;
                    check!("closures");
                    i += 2;
                } else {
                    params = Some(depth);
                    i += 1;
                }
            }
            b'-' | b'=' if b.get(i + 1) == Some(&b'>') => {
                if c == b'-' && params.is_none() {
                    seg_at!(depth) += 1;
                    check!("function types");
                } else if c == b'=' && params.is_none() {
                    // a match arm: `pat => expr`
                    angle = 0;
                    seg_at!(depth) = 0;
                }
                operand = false;
                i += 2;
            }
            b'<' | b'>' if b.get(i + 1) == Some(&b'=') => {
                operand = false;
                i += 2;
            }
            // a shift (`1 << n`), not two generic angles
            b'<' if b.get(i + 1) == Some(&b'<') => {
                operand = false;
                i += 2;
            }
            b'<' => {
                if params.is_none() {
                    angle += 1;
                    check!("generic arguments");
                }
                operand = false;
                i += 1;
            }
            b'>' => {
                angle = angle.saturating_sub(1);
                // `Vec<u8> ` ends a type, which may be followed by `|` in a pattern
                operand = true;
                i += 1;
            }
            b'!' | b'-' | b'*' | b'&' | b'=' if b.get(i + 1) == Some(&b'=') => {
                // `!=` and `==` compare; `-=`, `*=`, `&=` assign (right to left, so they nest)
                if !matches!(c, b'!' | b'=') && params.is_none() {
                    seg_at!(depth) += 1;
                    check!("assignments");
                }
                operand = false;
                i += 2;
            }
            b'=' => {
                // `a = b = ..` nests to the right
                if params.is_none() {
                    seg_at!(depth) += 1;
                    check!("assignments");
                }
                operand = false;
                i += 1;
            }
            b'!' | b'-' | b'*' | b'&' => {
                if !operand && params.is_none() {
                    pre += 1;
                    check!("prefix operators");
                    keep_pre = true;
                }
                operand = false;
                i += 1;
            }
            b'?' => {
                operand = true;
                i += 1;
            }
            b'.' => {
                // `.field`, `.method()`, `.await`, `..`: none nests
                operand = false;
                i += 1;
                while i < b.len() && b[i] == b'.' {
                    i += 1;
                }
                // the name after a dot is an operand, and never a keyword that nests
                while i < b.len() && (b[i].is_ascii_whitespace()) {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i > start {
                    operand = true;
                }
            }
            _ => {
                operand = false;
                i += 1;
            }
        }
        if !keep_pre {
            pre = 0;
        }
    }
    None
}

/// Past the closing quote of a string whose opening quote is just before `i` (escapes skipped).
fn skip_string(b: &[u8], mut i: usize, line: &mut u32) -> usize {
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\n') {
                *line += 1;
            }
            i += 1;
        } else if b[i] == b'\n' {
            *line += 1;
        }
        i += 1;
    }
    i + 1
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    const MAX: usize = 256;

    fn deep(s: &str) -> bool {
        too_deep(s, MAX).is_some()
    }

    #[test]
    fn every_nesting_shape_is_caught() {
        let n = MAX + 1;
        for (open, close) in [
            ("(", ")"),
            ("[", "]"),
            ("{", "}"),
            ("|a: u8| ", ""),
            ("|a, (b, c): (u8, u8)| ", ""),
            ("move || ", ""),
            ("|| ", ""),
            ("Option<", ">"),
            ("fn() -> ", ""),
            ("fn(u8, u16) -> ", ""),
            ("impl Fn() -> ", ""),
            ("Box<dyn Fn() -> ", ">"),
            ("&mut ", ""),
            ("&'a mut ", ""),
            ("*const ", ""),
            ("!", ""),
            ("- ", ""),
            ("&&", ""),
            ("return ", ""),
            ("a = ", ""),
            ("a += ", ""),
            ("a -= ", ""),
        ] {
            let text = format!("fn f() {{ x = {}1{}; }}", open.repeat(n), close.repeat(n));
            assert!(deep(&text), "{open:?} not caught");
        }
    }

    #[test]
    fn ordinary_and_flat_code_passes() {
        let n = 10 * MAX;
        for text in [
            format!("fn f() {{ x{} }}", ".rev()".repeat(n)),
            format!("fn f() {{ 1{} }}", " + 1".repeat(n)),
            format!("fn f() {{ 1{} }}", " - 1".repeat(n)),
            format!("fn f() {{ a{} }}", " == b != c <= d >= e".repeat(n)),
            format!(
                "fn f() {{ {} }}",
                "a += 1; b -= 2; c <<= 3; d = e;".repeat(n)
            ),
            format!("fn f() {{ a{} }}", " || b".repeat(n)),
            format!("fn f() {{ a{} }}", " | b".repeat(n)),
            format!("fn f() {{ a{} }}", " && !b".repeat(n)),
            format!("fn f() {{ {} }}", "let mut a = &mut b; ".repeat(n)),
            format!("fn f() {{ {} }}", "if a < b {} ".repeat(n)),
            format!(
                "fn f(a: u8) -> u8 {{ 0 {} }}",
                "else if a == 1 { 1 } ".repeat(n)
            ),
            format!(
                "fn f() {{ {} }}",
                "x.map(|a| a).filter(move |b| !b);".repeat(n)
            ),
            format!("const T: &[&str] = &[{}];", "\"(\", ".repeat(n)),
            format!("fn f() {{ let s = \"{}\"; }}", "(".repeat(n)),
            format!("fn f() {{ let s = r#\"{}\"#; }}", "(".repeat(n)),
            format!("fn f() {{ let s = br\"{}\\\"; }}", "(".repeat(n)),
            format!("// {}\nfn f<'a>(c: char) {{ '(' }}", "(".repeat(n)),
            format!("/* {} */ fn f() {{ '\\'' }}", "(".repeat(n)),
            format!(
                "fn f() {{ match x {{ {} }} }}",
                "A | B | C::<u8> => &mut a, ".repeat(n)
            ),
            format!(
                "impl<T: Into<Vec<u8>>> X<T> {{ {} }}",
                "fn a(&mut self) -> &mut Self { self } ".repeat(n)
            ),
        ] {
            assert_eq!(
                too_deep(&text, MAX),
                None,
                "{}",
                &text[..80.min(text.len())]
            );
        }
    }

    #[test]
    fn the_line_is_where_the_limit_is_passed() {
        let text = format!("fn f() {{\n    x = {}1;\n}}\n", "move ||\n".repeat(MAX + 5));
        let (line, why) = too_deep(&text, MAX).unwrap();
        assert!(line > 100, "{line}");
        assert!(why.contains("closures"), "{why}");
    }
}
