//! warp: routes are filters combined by value. `warp::path!("api" / "users" / u32)` (or
//! `warp::path("api")`, `warp::path::param()`) matches path segments, `warp::post()` and its
//! siblings a method, `.and(f)` requires both (joining their paths), `.or(f)` tries either (each
//! side keeps its routes), and `.map(h)` / `.and_then(h)` / `.then(h)` give the handler; what
//! `warp::serve(filter)` (or `warp::service`) serves is the app. A filter with a handler and no
//! method filter answers every method, like axum's `any`.

use super::*;

/// A warp filter as far as routing goes.
#[derive(Debug, Clone)]
pub(super) struct Filter<'a> {
    path: String,
    complete: bool,
    methods: Vec<String>,
    /// The handler, and where it was given.
    handler: Option<(Handler<'a>, ModId, Line)>,
    /// Routes of an `.or(..)` combination, relative to `path`.
    routes: Vec<Entry<'a>>,
    middleware: Vec<MwAt<'a>>,
}

impl<'a> Filter<'a> {
    pub(super) fn at(path: String, complete: bool) -> Self {
        Filter {
            path,
            complete,
            methods: vec![],
            handler: None,
            routes: vec![],
            middleware: vec![],
        }
    }

    fn methods(methods: Vec<String>) -> Self {
        Filter {
            methods,
            ..Filter::at(String::new(), true)
        }
    }

    /// Every route the filter serves.
    fn routes(&self) -> Vec<Entry<'a>> {
        let mut out = self.routes.clone();
        if let Some((handler, module, line)) = &self.handler {
            let methods: Vec<String> = if self.methods.is_empty() {
                ANY_METHOD.iter().map(|m| m.to_string()).collect()
            } else {
                self.methods.clone()
            };
            for method in methods {
                out.push(Entry {
                    method,
                    path: self.path.clone(),
                    framework: "warp",
                    module: *module,
                    line: *line,
                    handler: handler.clone(),
                    middleware: self.middleware.clone(),
                    path_complete: self.complete,
                });
            }
        }
        out
    }

    /// `a.and(b)`: both must match, `a`'s path first.
    fn and(mut self, b: Filter<'a>) -> Self {
        let methods = if self.methods.is_empty() {
            b.methods.clone()
        } else {
            self.methods.clone()
        };
        if !b.routes.is_empty() {
            // `warp::path("api").and(routes)`: the routes under the path
            for mut e in b.routes() {
                if !self.methods.is_empty() && !self.methods.contains(&e.method) {
                    continue;
                }
                e.path = join_path(&self.path, &e.path);
                e.path_complete &= self.complete;
                e.middleware.extend(self.middleware.iter().cloned());
                self.routes.push(e);
            }
            self.methods = methods;
            return self;
        }
        self.path = join_path(&self.path, &b.path);
        self.complete &= b.complete;
        self.methods = methods;
        if b.handler.is_some() {
            self.handler = b.handler;
        }
        self.middleware.extend(b.middleware);
        self
    }

    /// `a.or(b)`: either; each keeps its own routes.
    fn or(self, b: Filter<'a>) -> Self {
        let mut routes = self.routes();
        routes.extend(b.routes());
        Filter {
            routes,
            ..Filter::at(String::new(), true)
        }
    }
}

impl<'m, 'a> Routes<'m, 'a> {
    /// A call into warp by its path (`warp::path("x")`, `warp::post()`, `warp::serve(f)`), or
    /// `None` when `path` is not warp's.
    pub(super) fn warp_call(
        &mut self,
        path: &[String],
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> Option<V<'a>> {
        let m = frame.module;
        if path.first().is_none_or(|k| k != "warp") {
            return None;
        }
        let last = path.last().map(String::as_str).unwrap_or("");
        let prev = if path.len() >= 2 {
            path[path.len() - 2].as_str()
        } else {
            ""
        };
        let vals = self.eval_args(args, frame);
        let filter = match (prev, last) {
            ("warp" | "path" | "filters", "path") if vals.len() == 1 => {
                let (p, complete) = self.prefix_of(&vals[0], args.first(), m, line, "warp::path");
                Filter::at(p, complete)
            }
            ("path", "param") => Filter::at("{param}".to_string(), true),
            (_, "serve" | "service") if vals.len() == 1 => {
                let V::Filter(f) = &vals[0] else {
                    self.serve(&vals[0]);
                    return Some(V::Unknown);
                };
                let v = self.new_router(Kind::Warp, String::new(), m, line);
                if let V::Handle(h) = v {
                    self.arena[h].entries = f.routes();
                }
                return Some(v);
            }
            ("warp" | "method", name) if vals.is_empty() && method_of(name).is_some() => {
                Filter::methods(method_of(name).into_iter().collect())
            }
            // `warp::any()`, `warp::body::json()`, `warp::header(..)`, `warp::path::end()`, ..:
            // they match no path segment or method
            _ => Filter::at(String::new(), true),
        };
        Some(V::Filter(Box::new(filter)))
    }

    /// `warp::path!("api" / "users" / u32)`: its segments (`{param}` for a typed one).
    pub(super) fn warp_path_macro(&self, lits: &[String], m: ModId) -> Option<V<'a>> {
        if !self.model.depends_on(m, "warp") {
            return None;
        }
        let path = lits.join("/");
        Some(V::Filter(Box::new(Filter::at(path, true))))
    }

    /// A method of a warp filter.
    pub(super) fn warp_method(
        &mut self,
        f: Filter<'a>,
        name: &str,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> V<'a> {
        let vals = self.eval_args(args, frame);
        let first = vals.into_iter().next();
        let out = match (name, first) {
            ("and", Some(V::Filter(b))) => f.and(*b),
            ("or", Some(V::Filter(b))) => f.or(*b),
            ("map" | "and_then" | "then", Some(v)) => Filter {
                handler: Some((Self::handler_of(&v), frame.module, line)),
                ..f
            },
            ("with", Some(v)) => {
                let mut f = f;
                Self::mws_of(&v, frame.module, line, &mut f.middleware);
                f
            }
            _ => f,
        };
        V::Filter(Box::new(out))
    }
}
