//! The crate model: packages from `Cargo.toml`, each crate's module tree from its root file and
//! `mod` declarations (`x.rs`, `x/mod.rs`, `#[path]`, inline `mod x { }`), and path resolution
//! through `use` (`crate::`, `super::`, `self::`, renames, globs, other workspace crates).

use super::ir::*;
use crate::facts::Diagnostic;
use std::cell::RefCell;
// A fast hasher: resolution looks names up millions of times on a large workspace.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::Path;

pub type ModId = usize;
pub type FnId = usize;
pub type ImplId = usize;

/// One compilation unit: a package's library, one of its binaries, or a lone file.
#[derive(Debug, Default)]
pub struct Crate {
    /// The name other crates use for it (`-` read as `_`).
    pub name: String,
    /// Dependencies by the name code uses, mapped to their package name (both `-` → `_`).
    pub deps: HashMap<String, String>,
    /// Of those, the path dependencies (`o2_enterprise = { path = "src/enterprise/o2_enterprise"
    /// }`, directly or through `[workspace.dependencies]`) whose directory holds no source in the
    /// checkout: code of the project's that the audit cannot read.
    pub absent_deps: HashSet<String>,
    /// Integration tests and benches: their routers are test fixtures.
    pub is_test: bool,
}

#[derive(Debug)]
pub struct Module<'a> {
    /// As its parent declares it (`mod user;` → `user`); a crate root is named after its file.
    pub name: String,
    pub krate: usize,
    pub file: usize,
    pub parent: Option<ModId>,
    /// Where `mod x;` looks for `x.rs` / `x/mod.rs`.
    pub dir: String,
    pub children: HashMap<String, ModId>,
    pub fns: HashMap<String, FnId>,
    pub types: HashSet<String>,
    /// Named fields of the structs defined here.
    pub fields: HashMap<String, &'a [(String, Ty)]>,
    /// The type aliases defined here (without generic parameters): the type each names.
    pub aliases: HashMap<String, &'a Ty>,
    pub traits: HashMap<String, Vec<FnId>>,
    /// Each trait's supertraits, as written.
    pub trait_supers: HashMap<String, Vec<Vec<String>>>,
    pub consts: HashMap<String, &'a Ex>,
    /// The declared types of the statics defined here.
    pub static_types: HashMap<String, &'a Ty>,
    /// The axum-extra typed paths of the types defined here (`#[typed_path("/users/{id}")]`).
    pub typed_paths: HashMap<String, &'a str>,
    /// The diesel tables of the types defined here (`#[diesel(table_name = users)]`).
    pub diesel_tables: HashMap<String, &'a str>,
    pub uses: Vec<&'a UseDecl>,
    pub externs: Vec<(String, String)>,
    pub is_test: bool,
}

#[derive(Debug)]
pub struct FnDef<'a> {
    pub module: ModId,
    pub func: &'a Func,
    pub imp: Option<ImplId>,
    /// The trait this is a default method of.
    pub in_trait: Option<String>,
}

#[derive(Debug)]
pub struct ImplDef<'a> {
    pub module: ModId,
    pub imp: &'a Impl,
    pub fns: Vec<FnId>,
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Res {
    Mod(ModId),
    Fn(FnId),
    /// A struct/enum/alias defined in module `.0`.
    Type(ModId, String),
    Trait(ModId, String),
    Const(ModId, String),
    /// `Type::name`: an associated function or constant of a project type (or trait).
    Assoc(Box<Res>, String),
    /// Outside the scanned tree: the full path, crate first (`axum::routing::post`).
    Ext(Vec<String>),
    Unknown,
}

pub struct Model<'a> {
    pub files: &'a [FileIr],
    pub crates: Vec<Crate>,
    pub modules: Vec<Module<'a>>,
    pub fns: Vec<FnDef<'a>>,
    pub impls: Vec<ImplDef<'a>>,
    impls_by_type: HashMap<String, Vec<ImplId>>,
    /// `impl<T: Bound> Trait for T` blocks: they give every type bounded so their methods.
    blanket_impls: Vec<ImplId>,
    /// Types a macro makes (juniper's `#[graphql_interface] trait Block` makes `BlockValue`),
    /// known by the inherent impls the crate writes for them: no module declares a type of that
    /// name, and an inherent impl can only be of a type of the crate. The name, and the module
    /// of its first impl (where a path to it resolves).
    macro_types: HashMap<String, ModId>,
    /// `impl Trait for T` blocks by the trait's last path segment.
    impls_by_trait: HashMap<String, Vec<ImplId>>,
    /// Every method of every impl and trait, by name: for calls on values of unknown type.
    pub methods_by_name: HashMap<String, Vec<FnId>>,
    /// Library crates by the name code uses.
    lib_roots: HashMap<String, ModId>,
    lookup_cache: RefCell<HashMap<LookupKey, Res>>,
    /// Lookups under way, with their level on the lookup stack: a lookup that meets one of them
    /// again is a cycle of `use`s (globs re-exporting each other) and yields nothing there.
    lookups_open: RefCell<HashMap<LookupKey, usize>>,
    /// The lowest level of an open lookup that the current one met (see [`Model::lookup`]).
    lookup_low: std::cell::Cell<usize>,
    /// SeaORM models: the module holding each (the entity's name in code) and its attributes.
    pub entities: Vec<(ModId, &'a EntityAttrs)>,
    /// `macro_rules!` definitions by name, with the module each is written in.
    pub macros: HashMap<String, Vec<(ModId, &'a MacroRules)>>,
    /// Manifests that are there but could not be read.
    pub diagnostics: Vec<Diagnostic>,
    /// Each crate's dependencies, its own and those of the project's crates it depends on,
    /// by code and package name: built on first use (see [`Model::depends_on`]).
    dependency_closure: std::sync::OnceLock<Vec<std::collections::HashSet<String>>>,
}

type LookupKey = (ModId, String, bool, bool);

/// The types SeaORM's `DeriveEntityModel` generates in the model's module.
pub const ENTITY_TYPES: &[&str] = &["Entity", "ActiveModel", "Column", "PrimaryKey"];

const MAX_RESOLVE_DEPTH: usize = 24;

/// Names every Rust file has in scope without a `use`.
const PRELUDE: &[&str] = &[
    "Some", "None", "Ok", "Err", "Vec", "String", "Box", "Option", "Result", "Default", "Clone",
    "Into", "From", "ToString", "Iterator", "Arc", "Rc",
];

fn norm(name: &str) -> String {
    name.replace('-', "_")
}

fn dirname(rel: &str) -> &str {
    rel.rfind('/').map(|i| &rel[..i]).unwrap_or("")
}

fn join(dir: &str, name: &str) -> String {
    let mut parts: Vec<&str> = if dir.is_empty() {
        vec![]
    } else {
        dir.split('/').collect()
    };
    for p in name.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// A package's manifest, as far as the model needs it.
#[derive(Debug, Default)]
struct Manifest {
    dir: String,
    name: String,
    lib_name: Option<String>,
    lib_path: Option<String>,
    bin_paths: Vec<String>,
    deps: HashMap<String, String>,
    /// The path dependencies: the name code uses, and the directory (from the scanned root).
    path_deps: Vec<(String, String)>,
}

fn dep_tables(v: &toml::Value) -> Vec<&toml::value::Table> {
    let mut out = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = v.get(key).and_then(|t| t.as_table()) {
            out.push(t);
        }
    }
    if let Some(targets) = v.get("target").and_then(|t| t.as_table()) {
        for (_, t) in targets {
            for key in ["dependencies", "dev-dependencies"] {
                if let Some(t) = t.get(key).and_then(|t| t.as_table()) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// A `Cargo.toml`, read safely; a file that is there but unreadable or invalid is a diagnostic.
fn manifest_toml(root: &Path, dir: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<toml::Value> {
    let rel = join(dir, "Cargo.toml");
    let text = match crate::paths::read_in_root(root, &rel) {
        Ok(t) => t?,
        Err(why) => {
            diagnostics.push(Diagnostic::new(rel, 0, format!("Cargo.toml {why}")));
            return None;
        }
    };
    match toml::from_str(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                .unwrap_or(0);
            diagnostics.push(Diagnostic::new(
                rel,
                line as u32,
                format!(
                    "Cargo.toml is not valid TOML ({}): its crate's dependencies are not known",
                    e.message()
                ),
            ));
            None
        }
    }
}

fn read_manifest(
    v: &toml::Value,
    dir: &str,
    workspace: &HashMap<String, String>,
    workspace_paths: &HashMap<String, String>,
) -> Option<Manifest> {
    let name = v.get("package")?.get("name")?.as_str()?.to_string();
    let mut m = Manifest {
        dir: dir.to_string(),
        name,
        ..Default::default()
    };
    if let Some(lib) = v.get("lib") {
        m.lib_name = lib.get("name").and_then(|n| n.as_str()).map(norm);
        m.lib_path = lib
            .get("path")
            .and_then(|n| n.as_str())
            .map(|p| join(dir, p));
    }
    if let Some(bins) = v.get("bin").and_then(|b| b.as_array()) {
        for b in bins {
            if let Some(p) = b.get("path").and_then(|p| p.as_str()) {
                m.bin_paths.push(join(dir, p));
            }
        }
    }
    for t in dep_tables(v) {
        for (key, spec) in t {
            let package = spec
                .get("package")
                .and_then(|p| p.as_str())
                .map(norm)
                .or_else(|| workspace.get(&norm(key)).cloned())
                .unwrap_or_else(|| norm(key));
            m.deps.insert(norm(key), package);
            let path = match spec.get("path").and_then(|p| p.as_str()) {
                Some(p) => Some(join(dir, p)),
                None if spec.get("workspace").and_then(|w| w.as_bool()) == Some(true) => {
                    workspace_paths.get(&norm(key)).cloned()
                }
                None => None,
            };
            if let Some(path) = path {
                m.path_deps.push((norm(key), path));
            }
        }
    }
    Some(m)
}

/// `[workspace.dependencies]` path dependencies: code name -> directory from the scanned root.
fn workspace_paths(manifests: &[(String, toml::Value)]) -> HashMap<String, String> {
    workspace_field(manifests, "path", join)
}

/// `[workspace.dependencies]` renames: code name -> package name.
fn workspace_deps(manifests: &[(String, toml::Value)]) -> HashMap<String, String> {
    workspace_field(manifests, "package", |_, p| norm(p))
}

/// Each `[workspace.dependencies]` entry that sets `field`, by its code name, with the value
/// `value` makes of the manifest's folder and the field.
fn workspace_field(
    manifests: &[(String, toml::Value)],
    field: &str,
    value: impl Fn(&str, &str) -> String,
) -> HashMap<String, String> {
    let mut out = HashMap::default();
    for (dir, v) in manifests {
        if let Some(t) = v
            .get("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(|d| d.as_table())
        {
            for (key, spec) in t {
                if let Some(p) = spec.get(field).and_then(|p| p.as_str()) {
                    out.insert(norm(key), value(dir, p));
                }
            }
        }
    }
    out
}

pub(super) fn is_test_path(rel: &str) -> bool {
    let dirs: Vec<&str> = rel.split('/').collect();
    dirs[..dirs.len() - 1]
        .iter()
        .any(|d| matches!(*d, "tests" | "benches" | "test"))
}

impl<'a> Model<'a> {
    pub fn build(files: &'a [FileIr], root: &Path) -> Model<'a> {
        let by_rel: HashMap<&str, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.rel.as_str(), i))
            .collect();
        // Every directory that holds a .rs file, and its ancestors: where manifests may be.
        let mut dirs: HashSet<String> = HashSet::default();
        for f in files {
            let mut d = dirname(&f.rel);
            loop {
                if !dirs.insert(d.to_string()) {
                    break;
                }
                if d.is_empty() {
                    break;
                }
                d = dirname(d);
            }
        }
        let mut dirs: Vec<String> = dirs.into_iter().collect();
        dirs.sort();
        let mut diagnostics = Vec::new();
        let tomls: Vec<(String, toml::Value)> = dirs
            .iter()
            .filter_map(|d| Some((d.clone(), manifest_toml(root, d, &mut diagnostics)?)))
            .collect();
        let workspace = workspace_deps(&tomls);
        let paths = workspace_paths(&tomls);
        let manifests: Vec<Manifest> = tomls
            .iter()
            .filter_map(|(d, v)| read_manifest(v, d, &workspace, &paths))
            .collect();
        // (a directory holds source when a file in view is under it)
        let absent = |m: &Manifest| -> HashSet<String> {
            m.path_deps
                .iter()
                .filter(|(_, dir)| dirs.binary_search(dir).is_err())
                .map(|(name, _)| name.clone())
                .collect()
        };

        let mut model = Model {
            files,
            crates: Vec::new(),
            modules: Vec::new(),
            fns: Vec::new(),
            impls: Vec::new(),
            impls_by_type: HashMap::default(),
            blanket_impls: Vec::new(),
            macro_types: HashMap::default(),
            impls_by_trait: HashMap::default(),
            methods_by_name: HashMap::default(),
            lib_roots: HashMap::default(),
            lookup_cache: RefCell::new(HashMap::default()),
            lookups_open: RefCell::new(HashMap::default()),
            lookup_low: std::cell::Cell::new(usize::MAX),
            entities: Vec::new(),
            macros: HashMap::default(),
            diagnostics,
            dependency_closure: std::sync::OnceLock::new(),
        };
        let mut reached: HashSet<usize> = HashSet::default();
        // (crate, root file)
        let mut roots: Vec<(usize, usize)> = Vec::new();
        for m in &manifests {
            let code_name = m.lib_name.clone().unwrap_or_else(|| norm(&m.name));
            let src = join(&m.dir, "src");
            let lib = m.lib_path.clone().unwrap_or_else(|| join(&src, "lib.rs"));
            let mut targets: Vec<(String, bool, bool)> = Vec::new(); // (file, is_lib, is_test)
            targets.push((lib, true, false));
            targets.push((join(&src, "main.rs"), false, false));
            for b in &m.bin_paths {
                targets.push((b.clone(), false, false));
            }
            let bin_dir = format!("{}/", join(&src, "bin"));
            let tests_dir = format!("{}/", join(&m.dir, "tests"));
            let benches_dir = format!("{}/", join(&m.dir, "benches"));
            let examples_dir = format!("{}/", join(&m.dir, "examples"));
            for f in files {
                let rest_of = |d: &str| f.rel.strip_prefix(d).map(str::to_string);
                for (dir, test) in [
                    (&bin_dir, false),
                    (&examples_dir, false),
                    (&tests_dir, true),
                    (&benches_dir, true),
                ] {
                    if let Some(rest) = rest_of(dir)
                        && (!rest.contains('/') || rest.ends_with("/main.rs"))
                    {
                        targets.push((f.rel.clone(), false, test));
                    }
                }
            }
            let deps = m.deps.clone();
            for (file, is_lib, is_test) in targets {
                let Some(&fi) = by_rel.get(file.as_str()) else {
                    continue;
                };
                if roots.iter().any(|&(_, f)| f == fi) {
                    continue;
                }
                model.crates.push(Crate {
                    name: code_name.clone(),
                    deps: deps.clone(),
                    absent_deps: absent(m),
                    is_test,
                });
                let c = model.crates.len() - 1;
                roots.push((c, fi));
                let root_mod = model.add_tree(c, fi, &by_rel, &mut reached, is_test);
                if is_lib {
                    model.lib_roots.entry(code_name.clone()).or_insert(root_mod);
                }
            }
        }
        // Files no crate reaches: each is read as a crate of its own.
        for (fi, f) in files.iter().enumerate() {
            if reached.contains(&fi) {
                continue;
            }
            let pkg = manifests
                .iter()
                .filter(|m| m.dir.is_empty() || f.rel.starts_with(&format!("{}/", m.dir)))
                .max_by_key(|m| m.dir.len());
            model.crates.push(Crate {
                name: pkg.map(|m| norm(&m.name)).unwrap_or_default(),
                deps: pkg.map(|m| m.deps.clone()).unwrap_or_default(),
                absent_deps: pkg.map(absent).unwrap_or_default(),
                is_test: is_test_path(&f.rel),
            });
            let c = model.crates.len() - 1;
            let test = is_test_path(&f.rel);
            model.add_tree(c, fi, &by_rel, &mut reached, test);
        }
        for (i, imp) in model.impls.iter().enumerate() {
            if imp.imp.blanket.is_some() {
                model.blanket_impls.push(i);
            }
            if let Some(last) = imp.imp.self_ty.last() {
                model.impls_by_type.entry(last.clone()).or_default().push(i);
                if imp.imp.trait_.is_none()
                    && imp.imp.self_ty.len() == 1
                    && !model.modules.iter().any(|m| {
                        m.krate == model.modules[imp.module].krate
                            && (m.types.contains(last) || m.aliases.contains_key(last))
                    })
                {
                    model.macro_types.entry(last.clone()).or_insert(imp.module);
                }
            }
            if let Some(last) = imp.imp.trait_.as_ref().and_then(|t| t.last()) {
                model
                    .impls_by_trait
                    .entry(last.clone())
                    .or_default()
                    .push(i);
            }
        }
        // A trait's declaration without a body runs nothing of its own: the impls are the
        // candidates.
        for (id, f) in model.fns.iter().enumerate() {
            if f.imp.is_some() || (f.in_trait.is_some() && !f.func.body.is_empty()) {
                model
                    .methods_by_name
                    .entry(f.func.name.clone())
                    .or_default()
                    .push(id);
            }
        }
        model
    }

    /// Adds the module tree rooted at file `fi`; returns the root module.
    fn add_tree(
        &mut self,
        krate: usize,
        fi: usize,
        by_rel: &HashMap<&str, usize>,
        reached: &mut HashSet<usize>,
        is_test: bool,
    ) -> ModId {
        reached.insert(fi);
        let files = self.files;
        let file = &files[fi];
        let stem = file
            .rel
            .rsplit('/')
            .next()
            .unwrap_or("")
            .trim_end_matches(".rs");
        let root_name = match stem {
            "lib" | "main" | "mod" => dirname(&file.rel).rsplit('/').next().unwrap_or(""),
            s => s,
        };
        let root = self.new_module(
            root_name.to_string(),
            krate,
            fi,
            None,
            dirname(&file.rel).to_string(),
            is_test,
        );
        // (module, items, the file's directory for #[path])
        let mut stack: Vec<(ModId, &'a [Item])> = vec![(root, &file.items)];
        let mut in_crate: HashSet<usize> = HashSet::from_iter([fi]);
        while let Some((m, items)) = stack.pop() {
            for item in items {
                self.add_item(m, item);
                let Item::Mod {
                    name,
                    path_attr,
                    body,
                    is_test: test,
                } = item
                else {
                    continue;
                };
                let test = *test || self.modules[m].is_test;
                let parent_dir = self.modules[m].dir.clone();
                let cur_file = self.modules[m].file;
                match body {
                    Some(inner) => {
                        let dir = match path_attr {
                            Some(p) => join(&parent_dir, p),
                            None => join(&parent_dir, name),
                        };
                        let child =
                            self.new_module(name.clone(), krate, cur_file, Some(m), dir, test);
                        self.modules[m].children.insert(name.clone(), child);
                        stack.push((child, inner));
                    }
                    None => {
                        let candidates: Vec<String> = match path_attr {
                            Some(p) => vec![join(dirname(&files[cur_file].rel), p)],
                            None => vec![
                                join(&parent_dir, &format!("{name}.rs")),
                                join(&parent_dir, &format!("{name}/mod.rs")),
                            ],
                        };
                        let Some((path, &cfi)) = candidates
                            .iter()
                            .find_map(|c| by_rel.get(c.as_str()).map(|f| (c, f)))
                        else {
                            continue;
                        };
                        if !in_crate.insert(cfi) {
                            continue;
                        }
                        reached.insert(cfi);
                        let mod_rs = path.ends_with("/mod.rs") || path_attr.is_some();
                        let dir = if mod_rs {
                            dirname(path).to_string()
                        } else {
                            path.trim_end_matches(".rs").to_string()
                        };
                        let child = self.new_module(name.clone(), krate, cfi, Some(m), dir, test);
                        self.modules[m].children.insert(name.clone(), child);
                        stack.push((child, &files[cfi].items));
                    }
                }
            }
        }
        root
    }

    fn new_module(
        &mut self,
        name: String,
        krate: usize,
        file: usize,
        parent: Option<ModId>,
        dir: String,
        is_test: bool,
    ) -> ModId {
        self.modules.push(Module {
            name,
            krate,
            file,
            parent,
            dir,
            children: HashMap::default(),
            fns: HashMap::default(),
            types: HashSet::default(),
            fields: HashMap::default(),
            aliases: HashMap::default(),
            traits: HashMap::default(),
            trait_supers: HashMap::default(),
            consts: HashMap::default(),
            static_types: HashMap::default(),
            typed_paths: HashMap::default(),
            diesel_tables: HashMap::default(),
            uses: Vec::new(),
            externs: Vec::new(),
            is_test,
        });
        self.modules.len() - 1
    }

    fn add_fn(
        &mut self,
        m: ModId,
        func: &'a Func,
        imp: Option<ImplId>,
        in_trait: Option<String>,
    ) -> FnId {
        self.fns.push(FnDef {
            module: m,
            func,
            imp,
            in_trait,
        });
        self.fns.len() - 1
    }

    fn add_item(&mut self, m: ModId, item: &'a Item) {
        match item {
            Item::Fn(f) => {
                let id = self.add_fn(m, f, None, None);
                self.modules[m].fns.entry(f.name.clone()).or_insert(id);
                self.add_nested(m, &f.body);
            }
            Item::Impl(imp) => {
                self.impls.push(ImplDef {
                    module: m,
                    imp,
                    fns: vec![],
                });
                let iid = self.impls.len() - 1;
                for f in &imp.fns {
                    let id = self.add_fn(m, f, Some(iid), None);
                    self.impls[iid].fns.push(id);
                    self.add_nested(m, &f.body);
                }
            }
            Item::Trait { name, fns, supers } => {
                let mut ids = Vec::new();
                for f in fns {
                    ids.push(self.add_fn(m, f, None, Some(name.clone())));
                }
                self.modules[m].traits.insert(name.clone(), ids);
                // A trait defined once per feature set (`#[cfg(feature = ..)]`) has the
                // supertraits of every definition.
                let known = self.modules[m]
                    .trait_supers
                    .entry(name.clone())
                    .or_default();
                for s in supers {
                    if !known.contains(s) {
                        known.push(s.clone());
                    }
                }
            }
            Item::Const { name, value, ty } => {
                self.modules[m].consts.insert(name.clone(), value);
                if let Some(t) = ty {
                    self.modules[m].static_types.insert(name.clone(), t);
                }
            }
            Item::Type {
                name,
                fields,
                entity,
                alias,
                typed_path,
                diesel_table,
            } => {
                if let Some(t) = diesel_table {
                    self.modules[m].diesel_tables.insert(name.clone(), t);
                }
                self.modules[m].types.insert(name.clone());
                if let Some(p) = typed_path {
                    self.modules[m].typed_paths.insert(name.clone(), p);
                }
                self.modules[m].fields.insert(name.clone(), fields);
                if let Some(t) = alias {
                    self.modules[m].aliases.insert(name.clone(), t);
                }
                if let Some(e) = entity {
                    // What `DeriveEntityModel` generates next to the model: paths to them
                    // (`user::Entity`, a prelude's `pub use super::user::Entity as User`) resolve.
                    for t in ENTITY_TYPES {
                        self.modules[m].types.insert(t.to_string());
                    }
                    self.entities.push((m, e));
                }
            }
            Item::Use(decls) => self.modules[m].uses.extend(decls.iter()),
            Item::ExternCrate { name, alias } => {
                self.modules[m].externs.push((alias.clone(), name.clone()))
            }
            Item::MacroRules(def) => self
                .macros
                .entry(def.name.clone())
                .or_default()
                .push((m, def)),
            Item::Mod { .. } => {}
        }
    }

    /// The `macro_rules!` an invocation `name!` written in module `m` expands: one defined in `m`
    /// or a module around it (textual scope, `#[macro_use]`), else one the crate exports, else
    /// the one other crates export (`use other::name;`), else none (a macro of a dependency).
    pub fn macro_def(&self, m: ModId, name: &str) -> Option<(ModId, &'a MacroRules)> {
        let defs = self.macros.get(name)?;
        let krate = self.modules[m].krate;
        let mut up = Some(m);
        while let Some(x) = up {
            if let Some(d) = defs.iter().find(|(dm, _)| *dm == x) {
                return Some(*d);
            }
            up = self.modules[x].parent;
        }
        let in_crate = |d: &&(ModId, &MacroRules)| self.modules[d.0].krate == krate;
        defs.iter()
            .find(|d| in_crate(d) && d.1.exported)
            .or_else(|| defs.iter().find(in_crate))
            .or_else(|| defs.iter().find(|d| d.1.exported))
            .copied()
    }

    /// Items declared inside a function body: visible to the module for our purposes.
    fn add_nested(&mut self, m: ModId, body: &'a [Stmt]) {
        for s in body {
            if let Stmt::Item(item) = s
                && !matches!(**item, Item::Mod { .. })
            {
                if let Item::Fn(f) = &**item
                    && self.modules[m].fns.contains_key(&f.name)
                {
                    continue;
                }
                self.add_item(m, item);
            }
        }
    }

    /// The diesel table a project type is a row (or new row, or changeset) of.
    pub fn diesel_table(&self, ty: &Res) -> Option<&'a str> {
        match ty {
            Res::Type(m, name) => self.modules[*m].diesel_tables.get(name).copied(),
            _ => None,
        }
    }

    pub fn file_of(&self, m: ModId) -> &'a str {
        &self.files[self.modules[m].file].rel
    }

    pub fn crate_of(&self, m: ModId) -> &Crate {
        &self.crates[self.modules[m].krate]
    }

    fn crate_root(&self, mut m: ModId) -> ModId {
        while let Some(p) = self.modules[m].parent {
            m = p;
        }
        m
    }

    /// Does the crate of `m` depend on `package` (by its code or package name)?
    /// Whether module `m`'s crate depends on `package`, itself or through a crate of the
    /// project it depends on (an `entity` crate that re-exports `sea_orm` for the others).
    pub fn depends_on(&self, m: ModId, package: &str) -> bool {
        let closure = self.dependency_closure.get_or_init(|| {
            let by_name: HashMap<&str, usize> = self
                .crates
                .iter()
                .enumerate()
                .map(|(k, c)| (c.name.as_str(), k))
                .collect();
            (0..self.crates.len())
                .map(|start| {
                    let mut names = std::collections::HashSet::new();
                    let mut seen = vec![start];
                    let mut i = 0;
                    while i < seen.len() && i < 64 {
                        for (code, dep) in &self.crates[seen[i]].deps {
                            names.insert(code.clone());
                            names.insert(dep.clone());
                            if let Some(&k) = by_name.get(dep.as_str())
                                && !seen.contains(&k)
                            {
                                seen.push(k);
                            }
                        }
                        i += 1;
                    }
                    names
                })
                .collect()
        });
        closure
            .get(self.modules[m].krate)
            .is_some_and(|names| names.contains(&norm(package)))
    }

    /// Can code of module `m` call function `f`: `f` is in `m`'s crate or in a crate of the
    /// project that `m`'s crate depends on (a method found by its name alone in another binary
    /// of the workspace is not what runs).
    pub fn can_call(&self, m: ModId, f: FnId) -> bool {
        let k = self.modules[self.fns[f].module].krate;
        k == self.modules[m].krate || self.depends_on(m, &self.crates[k].name)
    }

    /// The package an external crate name stands for in module `m`'s crate.
    pub fn package_of(&self, m: ModId, code_name: &str) -> String {
        self.crate_of(m)
            .deps
            .get(code_name)
            .cloned()
            .unwrap_or_else(|| norm(code_name))
    }

    /// Resolves a path as written in module `m`.
    pub fn resolve(&self, m: ModId, segs: &[String]) -> Res {
        let r = self.resolve_d(m, segs, 0);
        // A module and a function of one name (`pub mod branches; pub use branches::branches;`,
        // the module in the type namespace, the function in the value namespace): a path that
        // ends there names the function.
        if let Res::Mod(_) = r
            && let Some((name, init)) = segs.split_last()
            && let Some(v) = self.value_named(m, init, name)
        {
            return v;
        }
        r
    }

    /// The function (or type or constant) `name` of the module `init` names from `m` (`m` itself
    /// when `init` is empty), by its definition or a `use` that brings it in.
    fn value_named(&self, m: ModId, init: &[String], name: &str) -> Option<Res> {
        let parent = if init.is_empty() {
            m
        } else {
            match self.resolve_d(m, init, 0) {
                Res::Mod(p) => p,
                _ => return None,
            }
        };
        self.value_in(parent, name, 0, &mut Vec::new())
    }

    /// The function (or type or constant) `name` of module `m`: defined there, brought in by a
    /// `use` of that name, or by a glob (`pub use super::{create_place::*}` in a prelude,
    /// where module `create_place` defines function `create_place`), globs read once each and
    /// at most four deep.
    fn value_in(&self, m: ModId, name: &str, depth: usize, seen: &mut Vec<ModId>) -> Option<Res> {
        if depth > 4 || seen.contains(&m) {
            return None;
        }
        seen.push(m);
        let module = &self.modules[m];
        if let Some(&f) = module.fns.get(name) {
            return Some(Res::Fn(f));
        }
        let named = module
            .uses
            .iter()
            .filter(|u| u.alias == name)
            .find_map(|u| match self.resolve_d(m, &u.path, 1) {
                r @ (Res::Fn(_) | Res::Type(..) | Res::Const(..)) => Some(r),
                _ => None,
            });
        if named.is_some() {
            return named;
        }
        module.uses.iter().filter(|u| u.alias == "*").find_map(|u| {
            match self.resolve_d(m, &u.path, 1) {
                Res::Mod(g) => self.value_in(g, name, depth + 1, seen),
                _ => None,
            }
        })
    }

    fn resolve_d(&self, m: ModId, segs: &[String], depth: usize) -> Res {
        if depth > MAX_RESOLVE_DEPTH || segs.is_empty() {
            return Res::Unknown;
        }
        let first = segs[0].as_str();
        let mut cur = match first {
            "crate" | "$crate" => Res::Mod(self.crate_root(m)),
            "self" => Res::Mod(m),
            "super" => Res::Mod(self.modules[m].parent.unwrap_or(m)),
            "Self" => return Res::Unknown,
            name => match self.lookup(m, name, segs.len() == 1, true, depth + 1) {
                // `BlockValue::add_text(..)`, `impl BlockValue`: a type a macro made, with
                // impls in the crate
                r @ (Res::Unknown | Res::Ext(_)) => match self.macro_type(m, name) {
                    Res::Unknown => r,
                    t => t,
                },
                r => r,
            },
        };
        for seg in &segs[1..] {
            cur = match cur {
                Res::Mod(x) => {
                    if seg == "super" {
                        Res::Mod(self.modules[x].parent.unwrap_or(x))
                    } else {
                        match self.lookup(x, seg, false, false, depth + 1) {
                            Res::Unknown => self.macro_type(x, seg),
                            r => r,
                        }
                    }
                }
                Res::Type(..) | Res::Trait(..) => Res::Assoc(Box::new(cur), seg.clone()),
                Res::Ext(mut p) => {
                    p.push(seg.clone());
                    Res::Ext(p)
                }
                _ => return Res::Unknown,
            };
        }
        cur
    }

    /// A name in module `m`: its items, its `use`s, its globs; then (for the first segment of a
    /// path) crates and the prelude.
    ///
    /// Every answer is computed once. Globs may form cycles (`pub use a::*` ↔ `pub use b::*`, or
    /// a root that `use self::m::*`s modules that each `use super::*`): a lookup met again while
    /// open yields nothing, and an answer that depended on such a cut (on a lookup still open
    /// below it on the stack) is not kept, since it may be incomplete; the open lookup's own
    /// answer, which saw the whole cycle, is. So each (module, name) costs its globs once.
    fn lookup(&self, m: ModId, name: &str, last: bool, scope: bool, depth: usize) -> Res {
        let key = (m, name.to_string(), last, scope);
        if let Some(r) = self.lookup_cache.borrow().get(&key) {
            return r.clone();
        }
        if let Some(&level) = self.lookups_open.borrow().get(&key) {
            self.lookup_low.set(self.lookup_low.get().min(level));
            return Res::Unknown;
        }
        let level = self.lookups_open.borrow().len();
        self.lookups_open.borrow_mut().insert(key.clone(), level);
        let outer_low = self.lookup_low.replace(usize::MAX);
        let r = if depth > MAX_RESOLVE_DEPTH {
            // cut by depth: incomplete for every lookup under way
            self.lookup_low.set(0);
            Res::Unknown
        } else {
            self.lookup_uncached(m, name, last, scope, depth)
        };
        self.lookups_open.borrow_mut().remove(&key);
        let low = self.lookup_low.get();
        if low >= level {
            self.lookup_cache.borrow_mut().insert(key, r.clone());
            self.lookup_low.set(outer_low);
        } else {
            self.lookup_low.set(outer_low.min(low));
        }
        r
    }

    fn lookup_uncached(&self, m: ModId, name: &str, last: bool, scope: bool, depth: usize) -> Res {
        if let Some(r) = self.local(m, name) {
            return r;
        }
        let module = &self.modules[m];
        let mut ext_glob: Option<Res> = None;
        for u in module.uses.iter().filter(|u| u.alias == name) {
            if u.path.len() == 1 && u.path[0] == name {
                return self.extern_crate(m, name);
            }
            let r = self.resolve_d(m, &u.path, depth + 1);
            if r != Res::Unknown {
                return r;
            }
        }
        for (alias, krate) in &module.externs {
            if alias == name {
                return self.extern_crate(m, krate);
            }
        }
        for u in module.uses.iter().filter(|u| u.alias == "*") {
            match self.resolve_d(m, &u.path, depth + 1) {
                Res::Mod(g) if g != m => {
                    let r = self.lookup(g, name, last, false, depth + 1);
                    if !matches!(r, Res::Unknown | Res::Ext(_)) {
                        return r;
                    }
                    if ext_glob.is_none() && matches!(r, Res::Ext(_)) && last {
                        ext_glob = Some(r);
                    }
                }
                Res::Ext(mut p) if last && ext_glob.is_none() => {
                    p.push(name.to_string());
                    ext_glob = Some(Res::Ext(p));
                }
                _ => {}
            }
        }
        if !scope {
            return ext_glob.unwrap_or(Res::Unknown);
        }
        let krate = self.crate_of(m);
        if self.lib_roots.contains_key(name) || krate.deps.contains_key(name) || name == krate.name
        {
            return self.extern_crate(m, name);
        }
        if let Some(r) = ext_glob {
            return r;
        }
        if PRELUDE.contains(&name) {
            return Res::Ext(vec!["std".into(), name.into()]);
        }
        self.extern_crate(m, name)
    }

    fn extern_crate(&self, m: ModId, name: &str) -> Res {
        let package = self.package_of(m, name);
        match self
            .lib_roots
            .get(name)
            .or_else(|| self.lib_roots.get(&package))
        {
            Some(&r) => Res::Mod(r),
            None => Res::Ext(vec![name.to_string()]),
        }
    }

    /// An item defined in module `m` itself.
    fn local(&self, m: ModId, name: &str) -> Option<Res> {
        let module = &self.modules[m];
        if let Some(&c) = module.children.get(name) {
            return Some(Res::Mod(c));
        }
        if let Some(&f) = module.fns.get(name) {
            return Some(Res::Fn(f));
        }
        if module.types.contains(name) {
            return Some(Res::Type(m, name.to_string()));
        }
        if module.traits.contains_key(name) {
            return Some(Res::Trait(m, name.to_string()));
        }
        if module.consts.contains_key(name) {
            return Some(Res::Const(m, name.to_string()));
        }
        None
    }

    /// The impls of a type, best first: those whose self type resolves to `ty` itself, else every
    /// impl of a type of that name.
    pub fn impls_of(&self, ty: &Res) -> Vec<ImplId> {
        let name = match ty {
            Res::Type(_, n) => n.as_str(),
            Res::Ext(p) => match p.last() {
                Some(n) => n.as_str(),
                None => return vec![],
            },
            _ => return vec![],
        };
        let Some(all) = self.impls_by_type.get(name) else {
            return vec![];
        };
        let exact: Vec<ImplId> = all
            .iter()
            .copied()
            .filter(|&i| {
                let imp = &self.impls[i];
                self.resolve(imp.module, &imp.imp.self_ty) == *ty
            })
            .collect();
        if exact.is_empty() && matches!(ty, Res::Type(..)) {
            all.clone()
        } else {
            exact
        }
    }

    /// `Type::name` or `value.name()` on a value of type `ty`: the functions it can run.
    pub fn methods_of(&self, ty: &Res, name: &str) -> Vec<FnId> {
        let named_in = |i: ImplId| {
            self.impls[i]
                .fns
                .iter()
                .copied()
                .filter(move |&f| self.fns[f].func.name == name)
        };
        let mut out = Vec::new();
        let impls = self.impls_of(ty);
        for &i in &impls {
            out.extend(named_in(i));
        }
        if out.is_empty() {
            // a trait's default method
            for &i in &impls {
                let imp = &self.impls[i];
                if let Some(tr) = &imp.imp.trait_
                    && let Res::Trait(tm, tn) = self.resolve(imp.module, tr)
                    && let Some(ids) = self.modules[tm].traits.get(&tn)
                {
                    out.extend(ids.iter().copied().filter(|&f| {
                        self.fns[f].func.name == name && !self.fns[f].func.body.is_empty()
                    }));
                }
            }
        }
        if let Res::Trait(tm, tn) = ty
            && let Some(ids) = self.modules[*tm].traits.get(tn)
        {
            out.extend(
                ids.iter()
                    .copied()
                    .filter(|&f| self.fns[f].func.name == name),
            );
        }
        if out.is_empty() {
            // a blanket impl for the traits the type implements (`impl<T: SimpleRoute> Route
            // for T` gives `OAuth2TokenEndpoint::route()`)
            for i in self.blanket_for(ty) {
                out.extend(named_in(i));
            }
        }
        out
    }

    /// A call of path `p` in module `m` into the project's own code that the audit cannot read:
    /// a function of a path dependency whose directory is not in the checkout
    /// (`o2_enterprise::enterprise::actions::register_app(..)`), or one another crate of the
    /// project has no code in view for (a stub standing in for a private crate), named directly
    /// or through a `use`. The crate, and the path in full. Only a path to a function
    /// (`krate::module::function`, every segment after the crate in lower case), not a type's
    /// associated function, nor a crate from a registry, nor a module of the crate's own that a
    /// build step writes (`crate::prisma::..`, read by the names its calls use).
    pub fn unreadable_fn(&self, m: ModId, p: &[String]) -> Option<(String, Vec<String>)> {
        let head = p.first()?;
        let mut full: Vec<String> = p.to_vec();
        if let Some(u) = self.modules[m]
            .uses
            .iter()
            .find(|u| u.alias == *head && !(u.path.len() == 1 && u.path[0] == u.alias))
        {
            full = u.path.clone();
            full.extend(p[1..].iter().cloned());
        }
        let lower = |s: &String| s.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
        let own = self.crate_of(m).name.clone();
        // (a re-export on the way, `pub use o2_enterprise::enterprise::datasets;` in a crate in
        // view, is followed to the crate it names)
        let mut ctx = m;
        for _ in 0..4 {
            if full.len() < 2 || !full[1..].iter().all(lower) {
                return None;
            }
            if self.crate_of(ctx).absent_deps.contains(&full[0]) {
                return Some((full[0].clone(), full));
            }
            let root = match self.resolve(ctx, &full[..1]) {
                Res::Mod(root)
                    if self.modules[root].parent.is_none()
                        && self.crates[self.modules[root].krate].name != own =>
                {
                    root
                }
                _ => return None,
            };
            if self.resolve(ctx, &full) != Res::Unknown {
                return None;
            }
            // the module where the path stops resolving, and the name it does not find there
            let (mut at, mut i) = (root, 1);
            while i + 1 < full.len() {
                match self.resolve(ctx, &full[..=i]) {
                    Res::Mod(x) => (at, i) = (x, i + 1),
                    _ => break,
                }
            }
            let reexport = self.modules[at].uses.iter().find(|u| {
                u.alias == full[i]
                    && u.path.len() > 1
                    && !matches!(u.path[0].as_str(), "crate" | "self" | "super")
            });
            match reexport {
                Some(u) => {
                    let mut next = u.path.clone();
                    next.extend(full[i + 1..].iter().cloned());
                    (full, ctx) = (next, at);
                }
                None => return Some((self.crates[self.modules[root].krate].name.clone(), full)),
            }
        }
        None
    }

    /// The blanket impls whose every bound `ty` implements.
    pub fn blanket_for(&self, ty: &Res) -> Vec<ImplId> {
        if self.blanket_impls.is_empty() {
            return Vec::new();
        }
        // A trait object or a bounded generic implements its trait and the supertraits: an
        // extension trait's blanket impl (`impl<T: JobRepository + ?Sized> JobRepositoryExt for
        // T`) gives it its methods. Bounds outside the project (`Send`, `Sized`) say nothing of
        // which impl it is.
        if let Res::Trait(..) = ty {
            let implemented = self.supertraits(ty);
            return self
                .blanket_impls
                .iter()
                .copied()
                .filter(|&i| {
                    let imp = &self.impls[i];
                    let bounds: Vec<Res> = imp
                        .imp
                        .blanket
                        .iter()
                        .flatten()
                        .map(|b| self.resolve(imp.module, b))
                        .filter(|r| matches!(r, Res::Trait(..)))
                        .collect();
                    !bounds.is_empty() && bounds.iter().all(|b| implemented.contains(b))
                })
                .collect();
        }
        let implemented: Vec<Res> = self
            .impls_of(ty)
            .into_iter()
            .filter_map(|i| {
                let imp = &self.impls[i];
                Some(self.resolve(imp.module, imp.imp.trait_.as_ref()?))
            })
            .filter(|r| matches!(r, Res::Trait(..)))
            .collect();
        self.blanket_impls
            .iter()
            .copied()
            .filter(|&i| {
                let imp = &self.impls[i];
                let bounds = imp.imp.blanket.as_deref().unwrap_or_default();
                !bounds.is_empty()
                    && bounds
                        .iter()
                        .all(|b| implemented.contains(&self.resolve(imp.module, b)))
            })
            .collect()
    }

    /// Associated constant `name` of type `ty` (`const PATH: &str = ".."` in an impl of it): the
    /// impl and the constant's value.
    pub fn assoc_const(&self, ty: &Res, name: &str) -> Option<(ImplId, &'a Ex)> {
        self.impls_of(ty).into_iter().find_map(|i| {
            let imp: &'a Impl = self.impls[i].imp;
            imp.consts
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, e)| (i, e))
        })
    }

    /// `value.name()` on a trait object or a generic bounded by the trait (`Arc<dyn Storage>`,
    /// `S: Storage`): the method of that name in each `impl Trait for T` of the workspace.
    pub fn implementations(&self, ty: &Res, name: &str) -> Vec<FnId> {
        // The trait, then its supertraits (`dyn Db` where `trait Db: BaseDb` and the method is
        // `BaseDb`'s), breadth first: the first that has implementations of the method.
        self.supertraits(ty)
            .iter()
            .map(|t| self.own_implementations(t, name))
            .find(|found| !found.is_empty())
            .unwrap_or_default()
    }

    /// The declaration of method `name` a trait object or a bounded generic of trait `ty`
    /// answers to: the trait's own, else a supertrait's (`dyn Repository` where `trait
    /// Repository: RepositoryAccess` declares `user_email`), breadth first. What it declares it
    /// returns is what the call returns, whichever impl runs.
    pub fn trait_method(&self, ty: &Res, name: &str) -> Option<FnId> {
        self.supertraits(ty).into_iter().find_map(|t| {
            let Res::Trait(tm, tn) = t else { return None };
            self.modules[tm]
                .traits
                .get(&tn)
                .into_iter()
                .flatten()
                .copied()
                .find(|&f| self.fns[f].func.name == name)
        })
    }

    /// Trait `ty` and its supertraits in the project, breadth first, each once (none for
    /// anything but a trait).
    pub fn supertraits(&self, ty: &Res) -> Vec<Res> {
        if !matches!(ty, Res::Trait(..)) {
            return Vec::new();
        }
        let mut queue = vec![ty.clone()];
        let mut i = 0;
        while i < queue.len() && queue.len() < 32 {
            if let Res::Trait(tm, tn) = queue[i].clone() {
                for s in self.modules[tm].trait_supers.get(&tn).into_iter().flatten() {
                    let r = self.resolve(tm, s);
                    if matches!(r, Res::Trait(..)) && !queue.contains(&r) {
                        queue.push(r);
                    }
                }
            }
            i += 1;
        }
        queue
    }

    fn own_implementations(&self, ty: &Res, name: &str) -> Vec<FnId> {
        let Res::Trait(_, tn) = ty else {
            return vec![];
        };
        let mut out = Vec::new();
        for &i in self.impls_by_trait.get(tn).into_iter().flatten() {
            let imp = &self.impls[i];
            let Some(tr) = &imp.imp.trait_ else { continue };
            if self.resolve(imp.module, tr) != *ty {
                continue;
            }
            out.extend(
                imp.fns
                    .iter()
                    .copied()
                    .filter(|&f| self.fns[f].func.name == name),
            );
        }
        out.sort();
        out.dedup();
        out
    }

    /// The SeaORM entity a type belongs to: `Some((module name, type))` for `Entity`,
    /// `ActiveModel`, `Model`, … defined in (or generated into) a model's module.
    pub fn entity_of<'r>(&self, r: &'r Res) -> Option<(&str, &'r str)> {
        let Res::Type(m, name) = r else { return None };
        self.entities
            .iter()
            .any(|(em, _)| em == m)
            .then(|| (self.modules[*m].name.as_str(), name.as_str()))
    }

    /// The type an impl block is for, resolved in its module.
    /// A type a macro made (see `Model::macro_types`), named from a module of its crate.
    fn macro_type(&self, m: ModId, name: &str) -> Res {
        match self.macro_types.get(name) {
            Some(&at) if self.modules[at].krate == self.modules[m].krate => {
                Res::Type(at, name.to_string())
            }
            _ => Res::Unknown,
        }
    }

    /// The `impl From<T> for E` blocks of enum (or type) `e` (its last path segment).
    pub fn from_impls(&self, e: &str) -> Vec<ImplId> {
        self.impls_by_trait
            .get("From")
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| self.impls[i].imp.self_ty.last().is_some_and(|t| t == e))
            .collect()
    }

    pub fn impl_type(&self, i: ImplId) -> Res {
        let imp = &self.impls[i];
        match self.resolve(imp.module, &imp.imp.self_ty) {
            Res::Unknown => Res::Type(
                imp.module,
                imp.imp.self_ty.last().cloned().unwrap_or_default(),
            ),
            r => r,
        }
    }

    /// The string value of a constant, if it is a literal (or `HeaderName::from_static(lit)`).
    pub fn const_str(&self, m: ModId, name: &str) -> Option<String> {
        let e = self.modules[m].consts.get(name)?;
        match e {
            Ex::Lit(s) => Some(s.clone()),
            Ex::Call(_, args, _) => match args.first() {
                Some(Ex::Lit(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins() {
        assert_eq!(join("src/a", "../b.rs"), "src/b.rs");
        assert_eq!(join("", "src/x.rs"), "src/x.rs");
        assert_eq!(dirname("src/x.rs"), "src");
        assert_eq!(dirname("x.rs"), "");
    }
}
