//! Medusa (v2) API routes: each `src/api/**/route.(ts|js)` of a Medusa project exports its
//! method handlers (`export const POST = async (req, res) => ..`); the folders are the path
//! (`src/api/admin/products/[id]/route.ts` serves `/admin/products/{id}`). A project is Medusa's
//! when its package.json depends on `@medusajs/framework` or `@medusajs/medusa`, or it has a
//! `medusa-config.*`: a `src/api/**/route.ts` in another project is no route.

use super::fileroutes::{bracket_segment, project_of, project_roots, strip_ext, under};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::Resolver;
use crate::facts::Protocol;

const FRAMEWORK: &str = "medusa";
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// The URL path a file of a Medusa project serves, if it is a route file: the folders between
/// `src/api/` and `route.*`.
fn route_path(rest: &str) -> Option<String> {
    let inside = rest.strip_prefix("src/api/")?;
    let (dirs, name) = inside.rsplit_once('/').unwrap_or(("", inside));
    if strip_ext(name) != "route" {
        return None;
    }
    let segs: Vec<String> = dirs
        .split('/')
        .filter(|d| !d.is_empty())
        .map(bracket_segment)
        .collect();
    Some(normalize_path("", &segs.join("/")))
}

pub fn routes(res: &Resolver) -> Vec<RawRoute> {
    let roots = project_roots(
        res,
        &["@medusajs/framework", "@medusajs/medusa"],
        &["medusa-config"],
    );
    let mut out = Vec::new();
    if roots.is_empty() {
        return out;
    }
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        let Some(root) = project_of(&roots, &module.file) else {
            continue;
        };
        let Some(path) = under(&module.file, root).and_then(route_path) else {
            continue;
        };
        for method in METHODS {
            let Some(handler) = module.export(method) else {
                continue;
            };
            out.push(super::fileroutes::route(
                FRAMEWORK,
                m,
                method,
                path.clone(),
                module.export_line(method).unwrap_or(1),
                handler.clone(),
                Protocol::Rest,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::route_path;

    #[test]
    fn route_files_are_their_folders() {
        assert_eq!(
            route_path("src/api/admin/products/[id]/route.ts").as_deref(),
            Some("/admin/products/{id}")
        );
        assert_eq!(route_path("src/api/route.js").as_deref(), Some("/"));
        assert_eq!(route_path("src/api/store/carts/helpers.ts"), None);
        assert_eq!(route_path("src/routes/admin/route.ts"), None);
    }
}
