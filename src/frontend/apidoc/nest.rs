//! `@nestjs/swagger` code-first documentation: a controller method is documented when the app
//! builds a document with `SwaggerModule` (which lists every controller route), or when it or its
//! class carries an `@Api…` decorator; it documents the key with `@ApiHeader({ name:
//! 'Idempotency-Key', .. })` on either.

use super::{ApiDocFile, ApiOperation, DocSource, KeyHeaderDoc, is_key_header, retention};
use crate::discover::SourceFile;
use crate::facts::Location;
use tree_sitter::{Node, Parser};

const ROUTE_DECORATORS: &[(&str, &str)] = &[
    ("Post", "POST"),
    ("Put", "PUT"),
    ("Patch", "PATCH"),
    ("Delete", "DELETE"),
];

struct Decorator<'t> {
    name: String,
    /// The first argument, when it is an object literal.
    object: Option<Node<'t>>,
    line: u32,
}

pub fn read(
    file: &SourceFile,
    key_headers: &[String],
    swagger_module: bool,
) -> Option<(ApiDocFile, Vec<ApiOperation>)> {
    let controller = swagger_module && file.text.contains("@Controller");
    if !file.text.contains("@nestjs/swagger") && !controller {
        return None;
    }
    let mut parser = Parser::new();
    let lang = crate::frontend::ts::language(file.lang)?;
    parser.set_language(&lang).ok()?;
    let tree = parser.parse(&file.text, None)?;
    let src = file.text.as_bytes();
    let mut ops = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "class_declaration" {
            class(node, src, &file.rel, key_headers, swagger_module, &mut ops);
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    let doc = ApiDocFile {
        file: file.rel.clone(),
        source: DocSource::NestjsSwagger,
        version: None,
        operations: ops.len(),
    };
    Some((doc, ops))
}

fn text<'a>(n: Node, src: &'a [u8]) -> &'a str {
    n.utf8_text(src).unwrap_or("")
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn decorator<'t>(n: Node<'t>, src: &[u8]) -> Option<Decorator<'t>> {
    let inner = n.named_child(0)?;
    let (callee, args) = match inner.kind() {
        "call_expression" => (
            inner.child_by_field_name("function")?,
            inner.child_by_field_name("arguments"),
        ),
        _ => (inner, None),
    };
    let name = text(callee, src).rsplit('.').next()?.to_string();
    let object = args
        .and_then(|a| a.named_child(0))
        .filter(|a| a.kind() == "object");
    Some(Decorator {
        name,
        object,
        line: line(n),
    })
}

/// A string, boolean or other literal property of an object literal, as written (quotes off).
fn property(object: Node, key: &str, src: &[u8]) -> Option<String> {
    let mut cursor = object.walk();
    for pair in object.named_children(&mut cursor) {
        if pair.kind() != "pair" {
            continue;
        }
        let k = pair.child_by_field_name("key")?;
        if text(k, src).trim_matches(|c| c == '\'' || c == '"') != key {
            continue;
        }
        let v = pair.child_by_field_name("value")?;
        let t = text(v, src);
        return Some(
            t.trim_matches(|c| c == '\'' || c == '"' || c == '`')
                .to_string(),
        );
    }
    None
}

fn key_header(
    ds: &[Decorator],
    src: &[u8],
    rel: &str,
    key_headers: &[String],
) -> Option<KeyHeaderDoc> {
    ds.iter().find_map(|d| {
        if d.name != "ApiHeader" {
            return None;
        }
        let object = d.object?;
        let name = property(object, "name", src)?;
        if !is_key_header(&name, key_headers) {
            return None;
        }
        let description = property(object, "description", src).unwrap_or_default();
        Some(KeyHeaderDoc {
            name,
            required: property(object, "required", src).as_deref() == Some("true"),
            retention: retention(&description),
            location: Location::new(rel, d.line),
        })
    })
}

fn class(
    class: Node,
    src: &[u8],
    rel: &str,
    key_headers: &[String],
    swagger_module: bool,
    ops: &mut Vec<ApiOperation>,
) {
    // Class decorators sit on the class, or on the `export` statement around it.
    let mut class_nodes = Vec::new();
    for holder in [
        Some(class),
        class.parent().filter(|p| p.kind() == "export_statement"),
    ]
    .into_iter()
    .flatten()
    {
        let mut cursor = holder.walk();
        class_nodes.extend(
            holder
                .children(&mut cursor)
                .filter(|c| c.kind() == "decorator"),
        );
    }
    let class_ds: Vec<Decorator> = class_nodes
        .iter()
        .filter_map(|n| decorator(*n, src))
        .collect();
    let Some(body) = class.child_by_field_name("body") else {
        return;
    };
    let mut pending: Vec<Decorator> = Vec::new();
    let mut cursor = body.walk();
    for member in body.children(&mut cursor) {
        match member.kind() {
            "decorator" => pending.extend(decorator(member, src)),
            "method_definition" => {
                let ds = std::mem::take(&mut pending);
                let Some(method) = ds
                    .iter()
                    .find_map(|d| ROUTE_DECORATORS.iter().find(|(n, _)| *n == d.name))
                    .map(|(_, m)| *m)
                else {
                    continue;
                };
                let is_controller = class_ds.iter().any(|d| d.name == "Controller");
                let documented = (swagger_module && is_controller)
                    || ds
                        .iter()
                        .chain(&class_ds)
                        .any(|d| d.name.starts_with("Api"));
                if !documented {
                    continue;
                }
                let first = ds.iter().map(|d| d.line).min().unwrap_or(line(member));
                let header = key_header(&ds, src, rel, key_headers)
                    .or_else(|| key_header(&class_ds, src, rel, key_headers));
                ops.push(ApiOperation {
                    method: method.to_string(),
                    path: None,
                    bare_path: None,
                    source: DocSource::NestjsSwagger,
                    location: Location::new(rel, first),
                    route: Some((rel.to_string(), first, line(member))),
                    key_header: header,
                    examples: Vec::new(),
                    operation_id: None,
                    controller: None,
                });
            }
            "comment" => {}
            _ => pending.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Lang;

    #[test]
    fn reads_api_header_decorators() {
        let text = r#"import { ApiHeader, ApiTags } from '@nestjs/swagger';
@ApiTags('orders')
@Controller('orders')
export class OrdersController {
  @Post() // a comment between decorators
  @ApiHeader({ name: 'Idempotency-Key', required: true, description: 'Keys are kept for 24 hours.' })
  create(@Body() dto: CreateOrderDto) {}

  @Post(':id/refund')
  refund() {}

  @Get()
  list() {}
}
"#;
        let file = SourceFile {
            rel: "src/orders.controller.ts".into(),
            lang: Lang::TypeScript,
            text: text.into(),
        };
        let (_, ops) = read(&file, &["idempotency-key".into()], false).unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(
            ops[0].route,
            Some(("src/orders.controller.ts".into(), 5, 7))
        );
        let key = ops[0].key_header.as_ref().unwrap();
        assert!(key.required);
        assert_eq!(key.retention.as_ref().unwrap().seconds, 86_400);
        assert!(ops[1].key_header.is_none());
        // With a SwaggerModule document, every controller route is documented.
        let plain = SourceFile {
            rel: "src/refunds.controller.ts".into(),
            lang: Lang::TypeScript,
            text: "@Controller('refunds')\nexport class R {\n  @Post()\n  create() {}\n}\n".into(),
        };
        assert!(read(&plain, &[], false).is_none());
        let (_, ops) = read(&plain, &[], true).unwrap();
        assert_eq!(ops.len(), 1);
    }
}
