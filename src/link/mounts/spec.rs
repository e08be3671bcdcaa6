//! Spec-first routers: an OpenAPI document routes the requests, each operation to the function
//! its `operationId` names in the controller an extension names (`x-exegesis-controller`), from
//! the controllers the middleware is given. exegesis-express:
//! `app.use(await exegesisExpress.middleware(path.resolve(__dirname, 'api.yaml'), { controllers:
//! { messagesController } }))`.

use super::{Mounter, RawRoute, Scoped, field_of, normalize_path};
use crate::facts::{Diagnostic, Protocol};
use crate::link::ModId;
use crate::link::resolve::Resolved;
use crate::program::Val;

/// The packages whose `middleware(spec, options)` is a spec-first router.
const ROUTERS: &[&str] = &["exegesis-express"];

impl Mounter<'_> {
    /// The document and options of a spec-first router's middleware (`exegesisExpress
    /// .middleware(spec, options)`), when `v` is one.
    fn spec_router(&self, m: ModId, v: &Val) -> Option<(Val, Option<Val>)> {
        let Val::Call(callee, args) = v else {
            return None;
        };
        let Resolved::Package { spec, name, path } = self.res.resolve(m, callee) else {
            return None;
        };
        let called = path.last().or(name.as_ref())?;
        (ROUTERS.contains(&spec.as_str()) && called == "middleware")
            .then(|| (args.first().cloned(), args.get(1).cloned()))
            .and_then(|(spec, options)| Some((spec?, options)))
    }

    /// Is `v` a spec-first router's middleware?
    pub(super) fn is_spec_router(&self, m: ModId, v: &Val) -> bool {
        self.spec_router(m, v).is_some()
    }

    /// The routes a spec-first router mounted under `prefix`/`scope` serves: one per mutation
    /// operation of its document, run by the function the operation names in its controller. A
    /// document not found, or an operation whose controller is not among those given, is said.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn spec_routes(
        &mut self,
        m: ModId,
        v: &Val,
        prefix: &str,
        scope: &str,
        chain: &[Scoped],
        framework: &'static str,
        line: u32,
    ) {
        let Some((spec, options)) = self.spec_router(m, v) else {
            return;
        };
        let file = self.modules()[m].file.clone();
        let here = file.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let document = self.dir_value(m, &spec, &here, 0);
        let ops: Vec<_> = match &document {
            Some(d) => self
                .docs
                .map(|docs| {
                    docs.operations
                        .iter()
                        .filter(|o| o.location.file == *d)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
            None => vec![],
        };
        if ops.is_empty() {
            self.diagnostics.push(Diagnostic::new(
                file,
                line,
                format!(
                    "a spec-first router routes requests by an API document not read here ({}): the routes it serves are not listed",
                    document.as_deref().unwrap_or("its path is computed at run time")
                ),
            ));
            return;
        }
        // An object written here or a name bound to one.
        let object = |v: Val| match self.res.resolve(m, &v) {
            Resolved::Obj(_, fields) => Val::Obj(fields),
            _ => v,
        };
        let options = options.map(object).unwrap_or(Val::Unknown);
        // `ignoreServers: true`: the document's server paths are not the app's.
        let bare = field_of(&options, "ignoreServers") == Val::Bool(true);
        let controllers = object(field_of(&options, "controllers"));
        let scope = scope.trim_end_matches('*');
        let mut unresolved = Vec::new();
        for op in ops {
            let path = if bare { &op.bare_path } else { &op.path };
            let (Some(path), Some(id)) = (path, &op.operation_id) else {
                continue;
            };
            let controller = op.controller.as_deref().unwrap_or_default();
            let module = match &controllers {
                Val::Obj(_) => Some(field_of(&controllers, controller)),
                _ => None,
            }
            .filter(|v| *v != Val::Unknown);
            let Some(module) = module else {
                if unresolved.len() < 8 {
                    unresolved.push(format!("{} {path} (`{controller}.{id}`)", op.method));
                }
                continue;
            };
            self.routes.push(RawRoute {
                method: op.method.clone(),
                path: normalize_path(&normalize_path(prefix, scope), path),
                framework,
                module: m,
                line: op.location.line,
                handler: Val::Member(std::sync::Arc::new(module), id.clone()),
                handler_module: m,
                middleware: chain.iter().map(|(cm, v, _)| (*cm, v.clone())).collect(),
                branch: None,
                protocol: Protocol::Rest,
                handler_name: Some(format!("{controller}.{id}")),
                path_complete: !self.incomplete,
                steps: vec![],
                file: Some(op.location.file.clone()),
            });
        }
        if !unresolved.is_empty() {
            self.diagnostics.push(Diagnostic::new(
                self.modules()[m].file.clone(),
                line,
                format!(
                    "a spec-first router's operations name a controller it is not given, so their handlers are not followed: {}",
                    unresolved.join(", ")
                ),
            ));
        }
    }
}
