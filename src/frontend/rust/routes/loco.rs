//! loco (built on axum): a controller's `Routes::new().prefix("api/notes").add("/", post(add))`
//! (or `Routes::at(prefix)`), collected in the app's `Hooks::routes` by
//! `AppRoutes::with_default_routes()` (or `empty()`) with `.add_route(r)` / `.add_routes(v)`.
//! `AppRoutes::prefix(p)` sets, and `nest_prefix(p)` extends, the prefix of the controllers
//! added after it; `nest_route(p, r)` / `nest_routes(p, v)` add under a prefix for those only.
//! The method routers are axum's (`post(h)`, `get(h).delete(h2)`).

use super::*;

impl<'m, 'a> Routes<'m, 'a> {
    /// A method of loco `Routes` (`app` false) or `AppRoutes` (`app` true) `h`; `false` when it
    /// is none of the routing ones.
    pub(super) fn loco_method(
        &mut self,
        h: usize,
        app: bool,
        name: &str,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> bool {
        let m = frame.module;
        match (app, name, args.len()) {
            (false, "prefix", 1) => {
                let v = self.expr(&args[0], frame);
                let (prefix, complete) = self.prefix_of(&v, args.first(), m, line, "prefix");
                let r = &mut self.arena[h];
                r.prefix = prefix;
                r.prefix_complete = complete;
            }
            (false, "add", 2) => self.axum_route(h, &args[0], &args[1], frame, "loco"),
            (true, "prefix" | "nest_prefix", 1) => {
                let v = self.expr(&args[0], frame);
                let (prefix, complete) = self.prefix_of(&v, args.first(), m, line, name);
                let r = &mut self.arena[h];
                if name == "prefix" {
                    r.add_prefix = (prefix, complete);
                } else {
                    r.add_prefix.0 = join_path(&r.add_prefix.0, &prefix);
                    r.add_prefix.1 &= complete;
                }
            }
            (true, "add_route" | "add_routes", 1) => {
                let v = self.expr(&args[0], frame);
                let prefix = self.arena[h].add_prefix.clone();
                self.loco_add(h, v, &prefix);
            }
            (true, "nest_route" | "nest_routes", 2) => {
                let p = self.expr(&args[0], frame);
                let (nested, complete) = self.prefix_of(&p, args.first(), m, line, name);
                let (base, base_complete) = self.arena[h].add_prefix.clone();
                let v = self.expr(&args[1], frame);
                self.loco_add(
                    h,
                    v,
                    &(join_path(&base, &nested), base_complete && complete),
                );
            }
            _ => return false,
        }
        true
    }

    /// Adds loco `Routes` (one, or a list) to `AppRoutes` `h` under `prefix`.
    fn loco_add(&mut self, h: usize, v: V<'a>, prefix: &(String, bool)) {
        match v {
            V::Handle(c) => self.absorb(h, c, (&prefix.0, prefix.1)),
            V::List(items) => {
                for i in items {
                    self.loco_add(h, i, prefix);
                }
            }
            _ => {}
        }
    }
}
