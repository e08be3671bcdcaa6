//! Request-body schemas the probe can fill in: zod `z.object({..})` schemas, class-validator DTO
//! classes (their decorators, else their TypeScript types) and serde `Deserialize` structs. Each
//! becomes a [`Schema`] of typed fields, from which [`build`] makes a minimal valid body.

use crate::discover::{Discovered, Lang};
use crate::facts::Location;
use serde_json::{Map, Value};
use std::collections::HashMap;
use tree_sitter::{Node, Parser};

/// The string formats a value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plain,
    Email,
    Uuid,
    Url,
    DateTime,
    Date,
}

/// What a field accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    Str {
        format: Format,
        min: usize,
    },
    Num {
        min: f64,
    },
    Bool,
    Obj(Vec<Field>),
    Arr,
    /// One of these values (an enum, `z.enum`, `@IsIn`).
    OneOf(Vec<Value>),
    /// Another schema, by name.
    Ref(String),
    /// A type the probe cannot make a value for, as written.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub spec: Spec,
    pub optional: bool,
}

/// A named schema and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub name: String,
    /// `zod schema`, `class-validator DTO`, `serde struct`, `serde enum`.
    pub kind: &'static str,
    pub location: Location,
    pub spec: Spec,
}

/// Every schema of the repository, by name; TypeScript and Rust apart (a TS endpoint's body is
/// never a Rust struct).
#[derive(Debug, Default)]
pub struct Index {
    pub ts: HashMap<String, Schema>,
    pub rust: HashMap<String, Schema>,
}

impl Index {
    pub fn build(found: &Discovered) -> Index {
        let mut index = Index::default();
        for f in &found.files {
            if f.lang.is_ts()
                && (f.text.contains("z.object")
                    || f.text.contains("class-validator")
                    || f.text.contains("object({"))
            {
                ts_schemas(&f.rel, &f.text, f.lang, &mut index.ts);
            }
        }
        for f in &found.rust_files {
            if f.text.contains("Deserialize") {
                rust_schemas(&f.rel, &f.text, &mut index.rust);
            }
        }
        index
    }

    /// The schema an endpoint reads its body with: the first schema named in `code` (the route's
    /// line and the handler's first lines), in order.
    pub fn named_in(&self, code: &str, rust: bool) -> Option<&Schema> {
        let map = if rust { &self.rust } else { &self.ts };
        code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
            .find_map(|w| map.get(w).filter(|s| !matches!(s.spec, Spec::OneOf(_))))
    }
}

/// The value a string of this format gets; `unique` makes plain strings and emails differ per
/// request (empty for the plain `x` and `probe@example.com`).
fn string(format: Format, min: usize, unique: &str) -> String {
    let s = match format {
        Format::Plain if unique.is_empty() => "x".to_string(),
        Format::Plain => format!("x-{unique}"),
        Format::Email if unique.is_empty() => "probe@example.com".to_string(),
        Format::Email => format!("probe+{unique}@example.com"),
        Format::Uuid => "7f3c9a52-5b1e-4c8d-9e2a-0d4b6f1a3c5e".to_string(),
        Format::Url => "https://example.com/probe".to_string(),
        Format::DateTime => "2030-01-01T00:00:00Z".to_string(),
        Format::Date => "2030-01-01".to_string(),
    };
    if format == Format::Plain && s.chars().count() < min {
        let pad = min - s.chars().count();
        format!("{s}{}", "x".repeat(pad))
    } else {
        s
    }
}

/// A minimal valid value of `spec`: required fields only. Err names the field it cannot fill.
pub fn build(spec: &Spec, index: &HashMap<String, Schema>, unique: &str) -> Result<Value, String> {
    fn go(
        spec: &Spec,
        index: &HashMap<String, Schema>,
        unique: &str,
        depth: usize,
        at: &str,
    ) -> Result<Value, String> {
        if depth > 8 {
            return Err(format!("`{at}` nests too deep"));
        }
        Ok(match spec {
            Spec::Str { format, min } => Value::String(string(*format, *min, unique)),
            Spec::Num { min } => {
                let n = min.max(1.0);
                if n.fract() == 0.0 {
                    Value::from(n as i64)
                } else {
                    Value::from(n)
                }
            }
            Spec::Bool => Value::Bool(true),
            Spec::Arr => Value::Array(Vec::new()),
            Spec::OneOf(values) => values
                .first()
                .cloned()
                .ok_or_else(|| format!("`{at}` allows no value"))?,
            Spec::Ref(name) => {
                let s = index.get(name).ok_or_else(|| {
                    format!("`{at}` has type `{name}`, whose schema was not found")
                })?;
                go(&s.spec, index, unique, depth + 1, at)?
            }
            Spec::Unknown(t) => return Err(format!("cannot make a value for `{at}` (`{t}`)")),
            Spec::Obj(fields) => {
                let mut m = Map::new();
                for f in fields.iter().filter(|f| !f.optional) {
                    let path = if at.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{at}.{}", f.name)
                    };
                    // A plain string named for an email is one.
                    let spec = match &f.spec {
                        Spec::Str {
                            format: Format::Plain,
                            min,
                        } if f.name.to_ascii_lowercase().contains("email") => Spec::Str {
                            format: Format::Email,
                            min: *min,
                        },
                        other => other.clone(),
                    };
                    m.insert(f.name.clone(), go(&spec, index, unique, depth + 1, &path)?);
                }
                Value::Object(m)
            }
        })
    }
    go(spec, index, unique, 0, "")
}

// ---- TypeScript: zod and class-validator ----

fn text<'a>(n: Node, src: &'a [u8]) -> &'a str {
    n.utf8_text(src).unwrap_or("")
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

fn literal(n: Node, src: &[u8]) -> Option<Value> {
    match n.kind() {
        "string" => Some(Value::String(unquote(text(n, src)))),
        "number" => serde_json::from_str(text(n, src)).ok(),
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        _ => None,
    }
}

fn first_arg(args: Option<Node>) -> Option<Node> {
    args.and_then(|a| a.named_child(0))
}

fn number_arg(args: Option<Node>, src: &[u8]) -> Option<f64> {
    first_arg(args).and_then(|a| text(a, src).parse().ok())
}

fn object_fields(obj: Node, src: &[u8]) -> Vec<Field> {
    let mut out = Vec::new();
    let mut cursor = obj.walk();
    for pair in obj.named_children(&mut cursor) {
        if pair.kind() != "pair" {
            continue;
        }
        let (Some(k), Some(v)) = (
            pair.child_by_field_name("key"),
            pair.child_by_field_name("value"),
        ) else {
            continue;
        };
        let (spec, optional) = zod(v, src);
        out.push(Field {
            name: unquote(text(k, src)),
            spec,
            optional,
        });
    }
    out
}

/// A zod expression's spec, and whether it may be left out.
fn zod(n: Node, src: &[u8]) -> (Spec, bool) {
    match n.kind() {
        "identifier" => (Spec::Ref(text(n, src).to_string()), false),
        "call_expression" => {
            let func = n.child_by_field_name("function");
            let args = n.child_by_field_name("arguments");
            let Some(func) = func else {
                return (Spec::Unknown(text(n, src).into()), false);
            };
            match func.kind() {
                "member_expression" => {
                    let (Some(obj), Some(prop)) = (
                        func.child_by_field_name("object"),
                        func.child_by_field_name("property"),
                    ) else {
                        return (Spec::Unknown(text(n, src).into()), false);
                    };
                    let prop = text(prop, src);
                    match text(obj, src) {
                        "z" | "z.coerce" | "zod" => (zod_base(prop, args, src, n), false),
                        _ => {
                            let (inner, optional) = zod(obj, src);
                            zod_method(prop, args, inner, optional, src)
                        }
                    }
                }
                // `object({..})`, `string()` imported by name
                "identifier" => (zod_base(text(func, src), args, src, n), false),
                _ => (Spec::Unknown(text(n, src).into()), false),
            }
        }
        _ => (Spec::Unknown(text(n, src).into()), false),
    }
}

fn zod_base(name: &str, args: Option<Node>, src: &[u8], whole: Node) -> Spec {
    let str_of = |format| Spec::Str { format, min: 0 };
    match name {
        "string" => str_of(Format::Plain),
        "email" => str_of(Format::Email),
        "uuid" | "guid" => str_of(Format::Uuid),
        "url" => str_of(Format::Url),
        "date" | "iso" => str_of(Format::DateTime),
        "number" | "bigint" | "int" => Spec::Num { min: 0.0 },
        "boolean" => Spec::Bool,
        "array" | "set" => Spec::Arr,
        "object" | "strictObject" | "looseObject" => match first_arg(args) {
            Some(o) if o.kind() == "object" => Spec::Obj(object_fields(o, src)),
            _ => Spec::Unknown(text(whole, src).into()),
        },
        "enum" => {
            let values: Vec<Value> = first_arg(args)
                .filter(|a| a.kind() == "array")
                .map(|a| {
                    let mut c = a.walk();
                    a.named_children(&mut c)
                        .filter_map(|e| literal(e, src))
                        .collect()
                })
                .unwrap_or_default();
            if values.is_empty() {
                Spec::Unknown(text(whole, src).into())
            } else {
                Spec::OneOf(values)
            }
        }
        "literal" => first_arg(args)
            .and_then(|a| literal(a, src))
            .map(|v| Spec::OneOf(vec![v]))
            .unwrap_or_else(|| Spec::Unknown(text(whole, src).into())),
        "union" => first_arg(args)
            .filter(|a| a.kind() == "array")
            .and_then(|a| a.named_child(0))
            .map(|first| zod(first, src).0)
            .unwrap_or_else(|| Spec::Unknown(text(whole, src).into())),
        "any" | "unknown" => Spec::OneOf(vec![Value::String("x".into())]),
        "record" => Spec::OneOf(vec![Value::Object(Map::new())]),
        _ => Spec::Unknown(text(whole, src).into()),
    }
}

fn zod_method(
    name: &str,
    args: Option<Node>,
    inner: Spec,
    optional: bool,
    src: &[u8],
) -> (Spec, bool) {
    let with_format = |spec: Spec, format| match spec {
        Spec::Str { min, .. } => Spec::Str { format, min },
        other => other,
    };
    match name {
        "optional" | "nullish" | "nullable" | "default" | "catch" => (inner, true),
        "email" => (with_format(inner, Format::Email), optional),
        "uuid" | "cuid" | "cuid2" | "ulid" => (with_format(inner, Format::Uuid), optional),
        "url" => (with_format(inner, Format::Url), optional),
        "datetime" => (with_format(inner, Format::DateTime), optional),
        "min" | "length" | "nonempty" | "gte" => {
            let n = number_arg(args, src).unwrap_or(1.0);
            let spec = match inner {
                Spec::Str { format, min } => Spec::Str {
                    format,
                    min: min.max(n as usize),
                },
                Spec::Num { min } => Spec::Num { min: min.max(n) },
                other => other,
            };
            (spec, optional)
        }
        "positive" | "gt" => {
            let spec = match inner {
                Spec::Num { min } => Spec::Num { min: min.max(1.0) },
                other => other,
            };
            (spec, optional)
        }
        "extend" | "merge" => {
            let more = first_arg(args)
                .filter(|a| a.kind() == "object")
                .map(|o| object_fields(o, src))
                .unwrap_or_default();
            match inner {
                Spec::Obj(mut fields) => {
                    fields.extend(more);
                    (Spec::Obj(fields), optional)
                }
                other => (other, optional),
            }
        }
        "partial" => match inner {
            Spec::Obj(fields) => (
                Spec::Obj(
                    fields
                        .into_iter()
                        .map(|f| Field {
                            optional: true,
                            ..f
                        })
                        .collect(),
                ),
                optional,
            ),
            other => (other, optional),
        },
        // refinements and transforms keep the shape
        _ => (inner, optional),
    }
}

/// class-validator decorators on one property, and its TypeScript type.
fn dto_field(member: Node, decorators: &[Node], src: &[u8]) -> Option<Field> {
    let name = unquote(text(member.child_by_field_name("name")?, src));
    let mut optional = {
        let mut c = member.walk();
        member.children(&mut c).any(|ch| ch.kind() == "?")
    };
    let mut spec: Option<Spec> = None;
    let mut min: Option<f64> = None;
    for d in decorators {
        let Some(inner) = d.named_child(0) else {
            continue;
        };
        let (callee, args) = match inner.kind() {
            "call_expression" => (
                inner.child_by_field_name("function"),
                inner.child_by_field_name("arguments"),
            ),
            _ => (Some(inner), None),
        };
        let Some(callee) = callee else { continue };
        let str_of = |format| Some(Spec::Str { format, min: 0 });
        match text(callee, src) {
            "IsOptional" => optional = true,
            "IsString" | "IsNotEmpty" | "IsAlphanumeric" if spec.is_none() => {
                spec = str_of(Format::Plain)
            }
            "IsEmail" => spec = str_of(Format::Email),
            "IsUUID" => spec = str_of(Format::Uuid),
            "IsUrl" => spec = str_of(Format::Url),
            "IsDateString" | "IsISO8601" | "IsDate" => spec = str_of(Format::DateTime),
            "IsInt" | "IsNumber" | "IsNumberString" => spec = Some(Spec::Num { min: 0.0 }),
            "IsPositive" => {
                spec = Some(Spec::Num { min: 0.0 });
                min = Some(min.unwrap_or(0.0).max(1.0));
            }
            "Min" | "MinLength" | "Length" | "ArrayMinSize" => {
                min = number_arg(args, src).map(|n| n.max(min.unwrap_or(0.0)));
            }
            "IsBoolean" => spec = Some(Spec::Bool),
            "IsArray" => spec = Some(Spec::Arr),
            "IsObject" => spec = Some(Spec::OneOf(vec![Value::Object(Map::new())])),
            "IsIn" => {
                let values: Vec<Value> = first_arg(args)
                    .filter(|a| a.kind() == "array")
                    .map(|a| {
                        let mut c = a.walk();
                        a.named_children(&mut c)
                            .filter_map(|e| literal(e, src))
                            .collect()
                    })
                    .unwrap_or_default();
                if !values.is_empty() {
                    spec = Some(Spec::OneOf(values));
                }
            }
            "Type" => {
                // `@Type(() => AddressDto)`
                let target = first_arg(args)
                    .and_then(|f| f.child_by_field_name("body"))
                    .map(|b| text(b, src).to_string());
                if let Some(t) = target {
                    spec = Some(Spec::Ref(t));
                }
            }
            _ => {}
        }
    }
    let spec = spec.or_else(|| {
        let t = member.child_by_field_name("type")?;
        let t = text(t, src).trim_start_matches(':').trim().to_string();
        Some(match t.as_str() {
            "string" => Spec::Str {
                format: Format::Plain,
                min: 0,
            },
            "number" => Spec::Num { min: 0.0 },
            "boolean" => Spec::Bool,
            "Date" => Spec::Str {
                format: Format::DateTime,
                min: 0,
            },
            t if t.ends_with("[]") || t.starts_with("Array<") => Spec::Arr,
            t if t.chars().all(|c| c.is_alphanumeric() || c == '_') => Spec::Ref(t.to_string()),
            t => Spec::Unknown(t.to_string()),
        })
    })?;
    let spec = match (spec, min) {
        (Spec::Str { format, min: m }, Some(n)) => Spec::Str {
            format,
            min: m.max(n as usize),
        },
        (Spec::Num { min: m }, Some(n)) => Spec::Num { min: m.max(n) },
        (s, _) => s,
    };
    Some(Field {
        name,
        spec,
        optional,
    })
}

fn ts_schemas(rel: &str, source: &str, lang: Lang, out: &mut HashMap<String, Schema>) {
    let Some(language) = crate::frontend::ts::language(lang) else {
        return;
    };
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        return;
    }
    let Some(tree) = parser.parse(source, None) else {
        return;
    };
    let src = source.as_bytes();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "variable_declarator" => {
                if let (Some(name), Some(value)) = (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ) && name.kind() == "identifier"
                    && value.kind() == "call_expression"
                {
                    let (spec, _) = zod(value, src);
                    if matches!(spec, Spec::Obj(_)) {
                        let name = text(name, src).to_string();
                        out.entry(name.clone()).or_insert(Schema {
                            name,
                            kind: "zod schema",
                            location: Location::new(rel, n.start_position().row as u32 + 1),
                            spec,
                        });
                    }
                }
            }
            "class_declaration" => {
                if let (Some(name), Some(body)) =
                    (n.child_by_field_name("name"), n.child_by_field_name("body"))
                {
                    let mut fields = Vec::new();
                    let mut decorated = false;
                    let mut pending: Vec<Node> = Vec::new();
                    let mut c = body.walk();
                    for m in body.children(&mut c) {
                        match m.kind() {
                            "decorator" => pending.push(m),
                            "public_field_definition" => {
                                let mut ds = std::mem::take(&mut pending);
                                let mut c2 = m.walk();
                                ds.extend(m.children(&mut c2).filter(|d| d.kind() == "decorator"));
                                decorated |= !ds.is_empty();
                                if let Some(f) = dto_field(m, &ds, src) {
                                    fields.push(f);
                                }
                            }
                            "comment" => {}
                            _ => pending.clear(),
                        }
                    }
                    let name = text(name, src).to_string();
                    let dto_like = ["Dto", "DTO", "Input", "Body", "Request", "Payload"]
                        .iter()
                        .any(|s| name.ends_with(s));
                    if !fields.is_empty() && (decorated || dto_like) {
                        out.entry(name.clone()).or_insert(Schema {
                            name,
                            kind: "class-validator DTO",
                            location: Location::new(rel, n.start_position().row as u32 + 1),
                            spec: Spec::Obj(fields),
                        });
                    }
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
}

// ---- Rust: serde ----

/// Words of an identifier: `created_at` / `CreatedAt` → `created`, `at`.
fn words(ident: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in ident.split('_').filter(|p| !p.is_empty()) {
        let mut cur = String::new();
        for c in part.chars() {
            if c.is_uppercase() && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.extend(c.to_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// `ident` renamed by serde's `rename_all` style.
fn renamed(ident: &str, style: Option<&str>) -> String {
    let ws = words(ident);
    let cap = |w: &String| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    match style {
        Some("camelCase") => ws
            .iter()
            .enumerate()
            .map(|(i, w)| if i == 0 { w.clone() } else { cap(w) })
            .collect(),
        Some("PascalCase") => ws.iter().map(cap).collect(),
        Some("snake_case") => ws.join("_"),
        Some("kebab-case") => ws.join("-"),
        Some("SCREAMING_SNAKE_CASE") => ws.join("_").to_uppercase(),
        Some("lowercase") => ws.join(""),
        Some("UPPERCASE") => ws.join("").to_uppercase(),
        _ => ident.to_string(),
    }
}

/// `key = "value"` pairs and bare words in `#[serde(..)]` / `#[validate(..)]` attributes, as text.
fn attr_text(attrs: &[syn::Attribute], name: &str) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident(name))
        .filter_map(|a| match &a.meta {
            syn::Meta::List(l) => Some(l.tokens.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" , ")
}

/// The string value of `key = "…"` in attribute text.
fn attr_value(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("{key} ="))?;
    let rest = &text[at..];
    let open = rest.find('"')?;
    let close = rest[open + 1..].find('"')?;
    Some(rest[open + 1..open + 1 + close].to_string())
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

fn rust_type(ty: &syn::Type) -> (Spec, bool) {
    let syn::Type::Path(p) = ty else {
        if let syn::Type::Reference(r) = ty {
            return rust_type(&r.elem);
        }
        return (Spec::Unknown(quote::quote!(#ty).to_string()), false);
    };
    let Some(last) = p.path.segments.last() else {
        return (Spec::Unknown(String::new()), false);
    };
    let inner = || match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            syn::GenericArgument::Type(t) => Some(t.clone()),
            _ => None,
        }),
        _ => None,
    };
    let name = last.ident.to_string();
    let str_of = |format| (Spec::Str { format, min: 0 }, false);
    match name.as_str() {
        "String" | "str" | "Cow" | "SmolStr" | "CompactString" => str_of(Format::Plain),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" | "f32" | "f64" | "Decimal" | "BigDecimal" | "NonZeroU32" | "NonZeroU64" => {
            (Spec::Num { min: 0.0 }, false)
        }
        "bool" => (Spec::Bool, false),
        "Uuid" => str_of(Format::Uuid),
        "DateTime" | "NaiveDateTime" | "OffsetDateTime" | "PrimitiveDateTime" | "Timestamp" => {
            str_of(Format::DateTime)
        }
        "NaiveDate" | "Date" => str_of(Format::Date),
        "Url" => str_of(Format::Url),
        "Vec" | "HashSet" | "BTreeSet" | "VecDeque" => (Spec::Arr, false),
        "HashMap" | "BTreeMap" | "Value" | "Map" => {
            (Spec::OneOf(vec![Value::Object(Map::new())]), false)
        }
        "Option" => match inner() {
            Some(t) => (rust_type(&t).0, true),
            None => (Spec::Unknown(name), true),
        },
        "Box" | "Arc" | "Rc" => match inner() {
            Some(t) => rust_type(&t),
            None => (Spec::Unknown(name), false),
        },
        _ => (Spec::Ref(name), false),
    }
}

fn derives_deserialize(attrs: &[syn::Attribute]) -> bool {
    has_word(&attr_text(attrs, "derive"), "Deserialize")
}

fn rust_items(items: &[syn::Item], rel: &str, out: &mut HashMap<String, Schema>) {
    for item in items {
        match item {
            syn::Item::Struct(s) if derives_deserialize(&s.attrs) => {
                let serde = attr_text(&s.attrs, "serde");
                let style = attr_value(&serde, "rename_all");
                let syn::Fields::Named(named) = &s.fields else {
                    continue;
                };
                let mut fields = Vec::new();
                for f in &named.named {
                    let Some(ident) = &f.ident else { continue };
                    let fserde = attr_text(&f.attrs, "serde");
                    if has_word(&fserde, "skip") || has_word(&fserde, "skip_deserializing") {
                        continue;
                    }
                    let ident = ident.to_string();
                    let ident = ident.trim_start_matches("r#");
                    let name = attr_value(&fserde, "rename")
                        .unwrap_or_else(|| renamed(ident, style.as_deref()));
                    let (mut spec, mut optional) = rust_type(&f.ty);
                    optional |= has_word(&fserde, "default");
                    if has_word(&fserde, "flatten") {
                        spec = Spec::Unknown("#[serde(flatten)]".into());
                    }
                    let validate = attr_text(&f.attrs, "validate");
                    if let Spec::Str { format, min } = &mut spec {
                        if has_word(&validate, "email") {
                            *format = Format::Email;
                        } else if has_word(&validate, "url") {
                            *format = Format::Url;
                        }
                        if let Some(at) = validate.find("min =") {
                            let n: String = validate[at + 5..]
                                .trim_start()
                                .chars()
                                .take_while(|c| c.is_ascii_digit())
                                .collect();
                            *min = n.parse().unwrap_or(*min);
                        }
                    }
                    fields.push(Field {
                        name,
                        spec,
                        optional,
                    });
                }
                let name = s.ident.to_string();
                out.entry(name.clone()).or_insert(Schema {
                    name,
                    kind: "serde struct",
                    location: Location::new(rel, s.ident.span().start().line as u32),
                    spec: Spec::Obj(fields),
                });
            }
            syn::Item::Enum(e) if derives_deserialize(&e.attrs) => {
                let serde = attr_text(&e.attrs, "serde");
                let style = attr_value(&serde, "rename_all");
                let unit = e
                    .variants
                    .iter()
                    .all(|v| matches!(v.fields, syn::Fields::Unit));
                let Some(first) = e.variants.first().filter(|_| unit) else {
                    continue;
                };
                let vserde = attr_text(&first.attrs, "serde");
                let value = attr_value(&vserde, "rename")
                    .unwrap_or_else(|| renamed(&first.ident.to_string(), style.as_deref()));
                let name = e.ident.to_string();
                out.entry(name.clone()).or_insert(Schema {
                    name,
                    kind: "serde enum",
                    location: Location::new(rel, e.ident.span().start().line as u32),
                    spec: Spec::OneOf(vec![Value::String(value)]),
                });
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    rust_items(inner, rel, out);
                }
            }
            _ => {}
        }
    }
}

fn rust_schemas(rel: &str, source: &str, out: &mut HashMap<String, Schema>) {
    if let Ok(file) = syn::parse_file(source) {
        rust_items(&file.items, rel, out);
    }
    proc_macro2::extra::invalidate_current_thread_spans();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(source: &str) -> HashMap<String, Schema> {
        let mut out = HashMap::new();
        ts_schemas("src/schemas.ts", source, Lang::TypeScript, &mut out);
        out
    }

    #[test]
    fn zod_objects_give_minimal_bodies() {
        let index = ts(r#"
const address = z.object({ city: z.string().min(3) });
export const createOrderSchema = z.object({
  sku: z.string().min(2),
  quantity: z.number().int().positive(),
  email: z.string().email(),
  customerId: z.string().uuid(),
  express: z.boolean(),
  currency: z.enum(['eur', 'usd']),
  note: z.string().optional(),
  shipTo: address,
}).strict();
"#);
        let s = &index["createOrderSchema"];
        assert_eq!(s.kind, "zod schema");
        let body = build(&s.spec, &index, "").unwrap();
        assert_eq!(
            body,
            serde_json::json!({"sku": "xx", "quantity": 1, "email": "probe@example.com",
                "customerId": "7f3c9a52-5b1e-4c8d-9e2a-0d4b6f1a3c5e", "express": true,
                "currency": "eur", "shipTo": {"city": "xxx"}})
        );
        let unique = build(&s.spec, &index, "ab12").unwrap();
        assert_eq!(unique["sku"], "x-ab12");
        assert_eq!(unique["email"], "probe+ab12@example.com");
    }

    #[test]
    fn class_validator_dtos_give_minimal_bodies() {
        let index = ts(r#"
export class CreateUserDto {
  @IsEmail()
  email: string;
  @IsString() @MinLength(3)
  name: string;
  @IsOptional() @IsString()
  bio?: string;
  @IsInt() @Min(18)
  age: number;
  marketing?: boolean;
  @IsIn(['free', 'pro'])
  plan: string;
}
"#);
        let body = build(&index["CreateUserDto"].spec, &index, "").unwrap();
        assert_eq!(
            body,
            serde_json::json!({"email": "probe@example.com", "name": "xxx", "age": 18, "plan": "free"})
        );
    }

    #[test]
    fn serde_structs_give_minimal_bodies_or_say_why_not() {
        let mut index = HashMap::new();
        rust_schemas(
            "src/orders.rs",
            r#"
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewOrder {
    pub customer_email: String,
    pub quantity: u32,
    pub coupon: Option<String>,
    #[serde(default)]
    pub gift: bool,
    pub currency: Currency,
    pub id: Uuid,
}
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Currency { Eur, Usd }
#[derive(Deserialize)]
struct Odd { shape: (u8, u8) }
"#,
            &mut index,
        );
        let body = build(&index["NewOrder"].spec, &index, "").unwrap();
        assert_eq!(
            body,
            serde_json::json!({"customerEmail": "probe@example.com", "quantity": 1, "currency": "eur",
                "id": "7f3c9a52-5b1e-4c8d-9e2a-0d4b6f1a3c5e"})
        );
        let why = build(&index["Odd"].spec, &index, "").unwrap_err();
        assert!(why.contains("shape"), "{why}");
    }
}
