//! salvo: a `Router` is a tree of filters. `Router::with_path("users")` (or `Router::new()
//! .path("users")`, path filters adding up) matches a part of the path; `.get(h)`, `.post(h)`,
//! .. serve that path by method, `.goal(h)` by any; `.push(child)` (`.unshift`, `.append(&mut
//! vec![..])`) nests a child under it; `.hoop(m)` runs middleware for the router and every
//! descendant, whenever it is added. Handlers are `#[handler]` functions or types whose
//! `#[handler] impl` has `handle`.

use super::*;

impl<'m, 'a> Routes<'m, 'a> {
    /// A method of salvo router `h`; `false` when it is none of the routing ones.
    pub(super) fn salvo_method(
        &mut self,
        h: usize,
        name: &str,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> bool {
        let m = frame.module;
        match (name, args.len()) {
            ("path", 1) => {
                let v = self.expr(&args[0], frame);
                let (path, complete) = self.prefix_of(&v, args.first(), m, line, "path");
                let r = &mut self.arena[h];
                r.prefix = join_path(&r.prefix, &path);
                r.prefix_complete &= complete;
            }
            ("goal", 1) => {
                let v = self.expr(&args[0], frame);
                let handler = self.salvo_handler(&v);
                for method in ANY_METHOD {
                    self.salvo_entry(h, method, handler.clone(), m, line);
                }
            }
            (n, 1) if method_of(n).is_some() => {
                let v = self.expr(&args[0], frame);
                let handler = self.salvo_handler(&v);
                if let Some(method) = method_of(n) {
                    self.salvo_entry(h, &method, handler, m, line);
                }
            }
            ("push" | "unshift", 1) => {
                if let V::Handle(c) = self.expr(&args[0], frame) {
                    self.absorb(h, c, ("", true));
                }
            }
            ("append", 1) => {
                if let V::List(items) = self.expr(&args[0], frame) {
                    for i in items {
                        if let V::Handle(c) = i {
                            self.absorb(h, c, ("", true));
                        }
                    }
                }
            }
            ("hoop", 1) => {
                let v = self.expr(&args[0], frame);
                let mut mws = Vec::new();
                Self::mws_of(&v, m, line, &mut mws);
                self.arena[h].pending.extend(mws);
            }
            _ => return false,
        }
        true
    }

    /// A salvo handler: a `#[handler]` function, or a value of a type with a `handle` method.
    fn salvo_handler(&self, v: &V<'a>) -> Handler<'a> {
        if let V::Instance(ty, _) = v
            && let Some(&f) = self.model.methods_of(ty, "handle").first()
        {
            return Handler::Fn(f);
        }
        Self::handler_of(v)
    }

    fn salvo_entry(&mut self, h: usize, method: &str, handler: Handler<'a>, m: ModId, line: Line) {
        self.arena[h].entries.push(Entry {
            method: method.to_string(),
            path: String::new(),
            framework: "salvo",
            module: m,
            line,
            handler,
            middleware: vec![],
            path_complete: true,
        });
    }
}
