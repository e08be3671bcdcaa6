//! Module specifiers to files (relative paths, index files, extensions, tsconfig or jsconfig
//! `baseUrl` and `paths`, workspace packages) and symbolic values to what they are across files.

use crate::program::{ClassId, FnId, Module, RouterId, Val};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// The fields of a wrapper's config object that hold the function it wraps
/// (`withApiWrapper({ handler })`); other function fields (`getLoggerContext`) are helpers.
const HANDLER_FIELDS: &[&str] = &[
    "handler", "handle", "fn", "run", "execute", "resolve", "action",
];

pub type ModId = usize;

/// Names a folder's code may use without an import: the module and export each stands for.
type AutoImports = HashMap<String, (ModId, String)>;

const EXTENSIONS: &[&str] = &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"];

thread_local! {
    /// Set while this thread reads the project's Effect layers (see `Resolver::effect_service`).
    static READING_EFFECT_LAYERS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Effect layers by the tag class they provide: (module, `succeed`/`sync`/`effect`/`scoped`,
/// what the layer is given).
type EffectLayers = FxHashMap<(ModId, ClassId), Vec<(ModId, String, Val)>>;

/// What a value is, once every import has been followed.
#[derive(Debug, Clone)]
pub enum Resolved {
    Func(ModId, FnId),
    Class(ModId, ClassId),
    Instance(ModId, ClassId),
    Router(ModId, RouterId),
    Obj(ModId, Vec<(String, Val)>),
    Str(String),
    /// A string the environment may set, and the code's default for it (`process.env.X || 'x'`),
    /// or the value an example environment file of the project gives it (`example`: that file,
    /// `.env.example`), which then wins over the code's default.
    Default {
        value: String,
        var: String,
        example: Option<String>,
    },
    Module(ModId),
    /// An object the linker put together from values written in several modules (a tRPC
    /// resolver's options: its `ctx` is what the context creator returns, extended by each
    /// middleware). A later field of a name wins.
    Assembled(Vec<(String, Part)>),
    /// A value read from the environment at run time (`process.env.ADMIN_PREFIX`), as written.
    Env(String),
    /// Something from an npm package: the specifier, the imported name and the members after it.
    Package {
        spec: String,
        name: Option<String>,
        path: Vec<String>,
    },
    Opaque,
}

/// A field of an [`Resolved::Assembled`] object: a value in its module, or an object assembled too.
#[derive(Debug, Clone)]
pub enum Part {
    Val(ModId, Val),
    Obj(Vec<(String, Part)>),
}

struct TsConfig {
    /// Directory of the tsconfig, relative to the root.
    base_url: Option<String>,
    paths: Vec<(String, Vec<String>)>,
}

/// A package.json `exports` field as (subpath, target) pairs: a string is the package's `.`; an
/// object of subpaths maps each (a target that is an object of conditions takes the first of
/// `types`, `import`, `default`, `require`, `node` that names a file); an object of conditions
/// alone is the package's `.`.
fn package_exports(v: Option<&serde_json::Value>) -> Vec<(String, String)> {
    fn target(v: &serde_json::Value, depth: usize) -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(o) if depth < 4 => {
                ["types", "import", "default", "require", "node"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(|t| target(t, depth + 1)))
            }
            serde_json::Value::Array(a) if depth < 4 => a.iter().find_map(|t| target(t, depth + 1)),
            _ => None,
        }
    }
    match v {
        Some(serde_json::Value::Object(o)) if o.keys().any(|k| k.starts_with('.')) => {
            let mut map: Vec<(String, String)> = o
                .iter()
                .filter(|(k, _)| k.starts_with('.'))
                .filter_map(|(k, t)| Some((k.clone(), target(t, 0)?)))
                .collect();
            // As Node matches them: exact subpaths, then patterns by the longest prefix.
            map.sort_by_key(|(k, _)| match k.find('*') {
                None => (0, 0),
                Some(at) => (1, usize::MAX - at),
            });
            map
        }
        Some(other) => target(other, 0)
            .map(|t| vec![(".".to_string(), t)])
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

/// The source a package entry in a build folder was compiled from, when the build is not in the
/// tree (`./lib/core-index.js` → `src/core-index`, `dist/index.d.ts` → `src/index`): the
/// compiler's `outDir` mirrors its `rootDir`, by convention `src`.
fn built_to_source(target: &str) -> Option<String> {
    let t = target.trim_start_matches("./");
    let (dir, rest) = t.split_once('/')?;
    if !matches!(dir, "lib" | "dist" | "build" | "out" | "esm" | "cjs") {
        return None;
    }
    let stem = [".d.ts", ".d.mts", ".d.cts", ".js", ".mjs", ".cjs"]
        .iter()
        .find_map(|ext| rest.strip_suffix(ext))
        .unwrap_or(rest);
    Some(format!("src/{stem}"))
}

/// An example environment file: its path and the variables it sets (see
/// [`Resolver::env_example`]).
type EnvFile = std::sync::Arc<(String, Vec<(String, String)>)>;

/// An environment read a string was taken from: the read as written, and the example
/// environment file that gave its value.
type EnvRead = (String, Option<String>);

pub struct Resolver<'m> {
    pub modules: &'m [Module],
    by_file: FxHashMap<&'m str, ModId>,
    root: &'m Path,
    tsconfigs: Mutex<HashMap<String, Option<std::sync::Arc<TsConfig>>>>,
    /// Each folder's example environment file (see [`Resolver::env_example`]), read once.
    env_files: Mutex<HashMap<String, Option<EnvFile>>>,
    /// Workspace package name -> its folder, from every package.json in the tree.
    packages: HashMap<String, String>,
    /// Workspace package name -> its `exports` map: (subpath, target), both relative to its
    /// folder (`./orpc/router` → `./src/drivers/orpc/router.ts`, `./*` → `./src/*.ts`).
    package_exports: HashMap<String, Vec<(String, String)>>,
    /// Folder of every package.json above a module -> the packages it depends on (dependencies,
    /// devDependencies, peerDependencies), sorted.
    manifests: std::collections::BTreeMap<String, Vec<String>>,
    /// Nitro's auto-imports: for each server folder of a Nuxt or Nitro project, the names its
    /// `utils/` modules export, usable without an import anywhere in that folder.
    auto_imports: Vec<(String, AutoImports)>,
    /// Folders of Nuxt projects, for Nuxt's `~` / `@` (source folder) and `~~` / `@@` (root)
    /// aliases.
    nuxt_roots: Vec<String>,
    /// The `alias` entries of each Nuxt project's `nuxt.config` (`'#db':
    /// fileURLToPath(new URL('./server/database/', import.meta.url))`): (project folder, alias,
    /// target folder relative to the tree's root).
    nuxt_aliases: Vec<(String, String, String)>,
    /// Folders a Prisma schema generates its client into (`generator { output = .. }`).
    prisma_clients: Vec<String>,
    /// What a framework passes for a parameter of a function it calls (a tRPC resolver's or
    /// middleware's options): (module, function, parameter index) → the value.
    params: FxHashMap<(ModId, FnId, usize), Resolved>,
    /// The module where a value was first cut at [`MAX_DEPTH`] since the last
    /// [`Resolver::take_depth_cut`].
    depth_cut: Mutex<Option<ModId>>,
    /// Manifests and configurations that are there but could not be read or are not valid: one
    /// diagnostic each (see [`Resolver::take_manifest_problems`]).
    manifest_problems: Mutex<Vec<crate::facts::Diagnostic>>,
    /// What [`Resolver::resolve_spec`] found: folder → specifier → module.
    specs: Mutex<FxHashMap<String, FxHashMap<String, Option<ModId>>>>,
    /// The modules each module re-exports whole (`export * from ".."`), resolved once per module
    /// on first use: a barrel is searched for every name imported through it.
    star_mods: Vec<std::sync::OnceLock<Vec<ModId>>>,
    /// Every Drizzle table a module exports: its name in the code → its SQL name, read once.
    drizzle_tables: std::sync::OnceLock<FxHashMap<String, String>>,
    /// Hono context variables: each name a middleware sets (`c.set('db', drizzle(..))`) with the
    /// values set, in the modules that set them.
    context_vars: std::sync::OnceLock<FxHashMap<String, Vec<(ModId, Val)>>>,
    /// awilix registrations: each name a container registers (`container.register({ userService:
    /// asClass(UserService) })`, `container.register('db', asFunction(makeDb))`) with the
    /// resolvers registered under it, in the modules that register them.
    awilix: std::sync::OnceLock<FxHashMap<String, Vec<(ModId, Val)>>>,
    /// Every `new C(..)` of the tree, by the name the class is called by there: (module, the
    /// class as written, the arguments). At most [`MAX_NEWS_PER_NAME`] per name.
    news: std::sync::OnceLock<FxHashMap<String, Vec<NewSite>>>,
    /// Effect layers: each tag class a layer of the project provides (`Layer.succeed(Tag, impl)`,
    /// `Layer.effect(Tag, make)`) with the layers that do, in their modules.
    effect_layers: std::sync::OnceLock<EffectLayers>,
}

/// A `new C(..)`: its module, the class as written and the arguments.
type NewSite = (ModId, Val, Vec<Val>);

/// Most `new C(..)` calls of one name read for what a constructor is given.
const MAX_NEWS_PER_NAME: usize = 16;

thread_local! {
    /// A constructor's argument is being read on this thread (see
    /// [`Resolver::constructor_arg`]).
    static IN_CONSTRUCTOR_ARG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Most functions an object is read for as a table of them (see [`Resolver::function_table`]).
const MAX_TABLE_FUNCTIONS: usize = 256;
const MAX_DEPTH: usize = 24;

thread_local! {
    /// The functions whose return values are being followed on this thread, innermost last:
    /// (resolver, module, function).
    static FOLLOWING: std::cell::RefCell<Vec<(usize, ModId, FnId)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

thread_local! {
    /// Spread values left to try in the member lookup under way on this thread (see
    /// [`SpreadBudget`]); `None` when no lookup is under way.
    static SPREADS_LEFT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The most spread values one member lookup tries, through every nested spread: past it, the
/// member is not known. Spreads that spread each other would otherwise be tried exponentially.
const MAX_SPREADS: usize = 64;

/// The budget of spread values of the outermost member lookup on this thread; restored when
/// dropped.
struct SpreadBudget {
    outer: bool,
}

impl SpreadBudget {
    fn enter() -> SpreadBudget {
        let outer = SPREADS_LEFT.with(|c| {
            if c.get().is_none() {
                c.set(Some(MAX_SPREADS));
                true
            } else {
                false
            }
        });
        SpreadBudget { outer }
    }

    /// Takes one spread value from the budget: false when none is left.
    fn take() -> bool {
        SPREADS_LEFT.with(|c| match c.get() {
            Some(0) => false,
            Some(n) => {
                c.set(Some(n - 1));
                true
            }
            None => true,
        })
    }
}

impl Drop for SpreadBudget {
    fn drop(&mut self) {
        if self.outer {
            SPREADS_LEFT.with(|c| c.set(None));
        }
    }
}

/// A function's return values being followed; leaves the thread's list when dropped.
struct Following;

impl Following {
    /// None when the function is already being followed on this thread.
    fn enter(res: &Resolver<'_>, m: ModId, f: FnId) -> Option<Following> {
        let key = (res as *const Resolver<'_> as usize, m, f);
        FOLLOWING.with(|s| {
            let mut s = s.borrow_mut();
            if s.contains(&key) {
                return None;
            }
            s.push(key);
            Some(Following)
        })
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        FOLLOWING.with(|s| {
            s.borrow_mut().pop();
        });
    }
}

/// `use-db` → `useDb`, `send_mail` → `sendMail`.
fn camel_case(stem: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in stem.chars() {
        if c == '-' || c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn parent_dir(file: &str) -> &str {
    file.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

pub use crate::paths::join;

/// The callee of a value one of two as a parameter decides (see [`crate::program::WHEN`]).
fn is_when(callee: &Val) -> bool {
    matches!(callee, Val::Global(g) if g == crate::program::WHEN)
}

/// awilix, or a module of it (`awilix/lib/container`).
fn is_awilix(spec: &str) -> bool {
    spec == "awilix" || spec.starts_with("awilix/")
}

/// `process.env.X` (and members of it).
fn env_rooted(v: &Val) -> bool {
    match v {
        Val::Member(inner, p) => {
            matches!(inner.as_ref(), Val::Global(g) if g == "process") && p == "env"
                || env_rooted(inner)
        }
        _ => false,
    }
}

impl<'m> Resolver<'m> {
    pub fn new(modules: &'m [Module], root: &'m Path) -> Self {
        let by_file = modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.file.as_str(), i))
            .collect();
        let mut r = Resolver {
            modules,
            by_file,
            root,
            tsconfigs: Mutex::new(HashMap::new()),
            env_files: Mutex::new(HashMap::new()),
            packages: HashMap::new(),
            package_exports: HashMap::new(),
            manifests: std::collections::BTreeMap::new(),
            auto_imports: Vec::new(),
            nuxt_roots: Vec::new(),
            nuxt_aliases: Vec::new(),
            prisma_clients: Vec::new(),
            params: FxHashMap::default(),
            depth_cut: Mutex::new(None),
            drizzle_tables: std::sync::OnceLock::new(),
            context_vars: std::sync::OnceLock::new(),
            awilix: std::sync::OnceLock::new(),
            news: std::sync::OnceLock::new(),
            effect_layers: std::sync::OnceLock::new(),
            manifest_problems: Mutex::new(Vec::new()),
            specs: Mutex::new(FxHashMap::default()),
            star_mods: (0..modules.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
        };
        (r.packages, r.manifests, r.package_exports) = r.workspace_packages();
        (r.auto_imports, r.nuxt_roots) = r.server_auto_imports();
        r.nuxt_aliases = r.nuxt_config_aliases();
        // every tsconfig that applies to a module is read now, so one that cannot be read is a
        // diagnostic whether or not an import needs it
        let mut dirs: Vec<&str> = modules.iter().map(|m| parent_dir(&m.file)).collect();
        dirs.sort_unstable();
        dirs.dedup();
        for d in dirs {
            r.tsconfig_for(d);
        }
        r
    }

    /// The server folders of Nuxt and Nitro projects (`server/` of a Nuxt app, `server/` or the
    /// root of a Nitro one) and what their `utils/` modules export: named exports by their names,
    /// a default export by its file's name in camelCase (`use-db.ts` → `useDb`).
    fn server_auto_imports(&self) -> (Vec<(String, AutoImports)>, Vec<String>) {
        let mut out = Vec::new();
        // (folder, Nuxt) for every project a manifest or a configuration file marks.
        let mut projects: std::collections::BTreeMap<String, bool> = Default::default();
        for (dir, deps) in &self.manifests {
            if deps.iter().any(|d| d == "nuxt" || d == "nuxt3") {
                projects.insert(dir.clone(), true);
            } else if deps.iter().any(|d| d == "nitropack" || d == "nitro") {
                projects.entry(dir.clone()).or_insert(false);
            }
        }
        for module in self.modules {
            let (dir, name) = module.file.rsplit_once('/').unwrap_or(("", &module.file));
            let stem = name.split('.').take(2).collect::<Vec<_>>().join(".");
            if stem == "nuxt.config" {
                projects.insert(dir.to_string(), true);
            } else if stem == "nitro.config" {
                projects.entry(dir.to_string()).or_insert(false);
            }
        }
        let nuxt_roots = projects
            .iter()
            .filter(|(_, nuxt)| **nuxt)
            .map(|(d, _)| d.clone())
            .collect();
        for (dir, nuxt) in &projects {
            let (dir, nuxt) = (dir.clone(), *nuxt);
            let server = join(&dir, "server").unwrap_or_default();
            let has_server = self.modules.iter().any(|m| {
                m.file
                    .strip_prefix(server.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            });
            let server = if nuxt || has_server { server } else { dir };
            let utils = join(&server, "utils").unwrap_or_default();
            let mut names = HashMap::new();
            for (m, module) in self.modules.iter().enumerate() {
                let Some(rest) = module
                    .file
                    .strip_prefix(utils.as_str())
                    .and_then(|r| r.strip_prefix('/'))
                else {
                    continue;
                };
                for (name, _) in &module.exports {
                    if name == "default" {
                        let stem = rest.rsplit('/').next().unwrap_or(rest);
                        let stem = stem.split('.').next().unwrap_or(stem);
                        names
                            .entry(camel_case(stem))
                            .or_insert((m, "default".to_string()));
                    } else {
                        names.entry(name.clone()).or_insert((m, name.clone()));
                    }
                }
            }
            if !names.is_empty() {
                out.push((server, names));
            }
        }
        (out, nuxt_roots)
    }

    /// The Nuxt project folder nearest above `dir`.
    fn nuxt_root(&self, dir: &str) -> Option<&String> {
        self.nuxt_roots
            .iter()
            .filter(|d| in_folder(dir, d))
            .max_by_key(|d| d.len())
    }

    /// The aliases each `nuxt.config` declares (https://nuxt.com/docs/api/nuxt-config#alias):
    /// an entry's first string (`'./server/database/'` in `fileURLToPath(new URL(..,
    /// import.meta.url))` or `resolve(__dirname, '..')`), read from the config's folder.
    fn nuxt_config_aliases(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for module in self.modules {
            let (dir, name) = module.file.rsplit_once('/').unwrap_or(("", &module.file));
            if !name.starts_with("nuxt.config.") {
                continue;
            }
            let Some(config) = module.export("default") else {
                continue;
            };
            let opts = match config {
                Val::Obj(_) => Some(config),
                Val::Call(_, args) => args.iter().find(|a| matches!(a, Val::Obj(_))),
                _ => None,
            };
            let Some(Val::Obj(aliases)) = opts.and_then(|o| crate::program::field(o, "alias"))
            else {
                continue;
            };
            for (alias, v) in aliases.iter().take(64) {
                let Some(target) = first_string(module, v, 0) else {
                    continue;
                };
                let target = target.trim_end_matches('/');
                if let Some(path) = join(dir, target).filter(|_| target.starts_with('.')) {
                    out.push((dir.to_string(), alias.clone(), path));
                }
            }
        }
        out
    }

    /// A name Nitro auto-imports into module `m`'s server folder: the module and export.
    fn auto_import(&self, m: ModId, name: &str) -> Option<(ModId, &str)> {
        let file = &self.modules[m].file;
        self.auto_imports
            .iter()
            .filter(|(dir, _)| {
                dir.is_empty()
                    || file
                        .strip_prefix(dir.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
            .max_by_key(|(dir, _)| dir.len())
            .and_then(|(_, names)| names.get(name))
            .map(|(t, n)| (*t, n.as_str()))
    }

    /// The folders holding a package.json (above some module), each with the packages it depends
    /// on, in folder order.
    pub fn manifests(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.manifests
            .iter()
            .map(|(d, deps)| (d.as_str(), deps.as_slice()))
    }

    /// Does a package.json of module `m`'s folder or of a folder above it declare one of
    /// `packages` (as a dependency of any kind)?
    pub fn declares(&self, m: ModId, packages: &[String]) -> bool {
        let mut dir = parent_dir(&self.modules[m].file);
        loop {
            if let Some(deps) = self.manifests.get(dir)
                && packages.iter().any(|p| deps.binary_search(p).is_ok())
            {
                return true;
            }
            if dir.is_empty() {
                return false;
            }
            dir = parent_dir(dir);
        }
    }

    /// The value the project's example environment file gives the variable an environment read
    /// names (`process.env.API_PREFIX`, `import.meta.env.BASE`, `env('API_PREFIX')`): the nearest
    /// such file in the folders from module `m`'s up to the tree's root (`.env.example`,
    /// `.example.env`, `.env.sample`, `.env.template`, `.env.dist`, `.env.defaults`), where the
    /// variable is set. That file documents what a deployment sets, so its value wins over the
    /// code's fallback; a diagnostic still says the deployment may set another.
    fn env_example(&self, m: ModId, var: &str) -> Option<Resolved> {
        let name = super::env_name(var)?;
        let mut dir = parent_dir(&self.modules[m].file);
        for _ in 0..64 {
            if let Some((file, vars)) = self.env_file(dir).as_deref()
                && let Some((_, value)) = vars.iter().find(|(k, _)| k == name)
            {
                return Some(Resolved::Default {
                    value: value.clone(),
                    var: var.to_string(),
                    example: Some(file.clone()),
                });
            }
            if dir.is_empty() {
                break;
            }
            dir = parent_dir(dir);
        }
        None
    }

    /// The example environment file of folder `dir` and the variables it sets, read once.
    fn env_file(&self, dir: &str) -> Option<EnvFile> {
        const NAMES: [&str; 8] = [
            ".env.example",
            ".example.env",
            ".env.sample",
            ".sample.env",
            ".env.template",
            ".env.dist",
            ".env.defaults",
            "env.example",
        ];
        let mut memo = self.env_files.lock().ok()?;
        if let Some(found) = memo.get(dir) {
            return found.clone();
        }
        let found = NAMES.iter().find_map(|n| {
            let rel = join(dir, n)?;
            let text = crate::paths::read_in_root(self.root, &rel).ok()??;
            Some(std::sync::Arc::new((rel, crate::text::dotenv(&text))))
        });
        memo.insert(dir.to_string(), found.clone());
        found
    }

    /// The folder of the package module `m` is in: the nearest folder above it that holds a
    /// package.json (the tree's root when none does).
    pub fn package_root(&self, m: ModId) -> &str {
        let mut dir = parent_dir(&self.modules[m].file);
        loop {
            if dir.is_empty() || self.manifests.contains_key(dir) {
                return dir;
            }
            dir = parent_dir(dir);
        }
    }

    /// The folder of the workspace package named `name` (its package.json's `name`).
    pub fn package_dir(&self, name: &str) -> Option<&str> {
        self.packages.get(name).map(String::as_str)
    }

    /// A JSON file of the tree (a framework's route declaration), its text and value; None when
    /// it is not there, and with a diagnostic when it cannot be read or is not valid JSON.
    pub fn read_json(&self, rel: &str) -> Option<(String, serde_json::Value)> {
        let text = self.read_manifest(rel)?;
        let v = self.manifest_json(rel, serde_json::from_str(&text))?;
        Some((text, v))
    }

    /// The folders directly inside folder `rel` of the tree, sorted; symlinks are not followed.
    pub fn subfolders(&self, rel: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(rel)) else {
            return vec![];
        };
        let mut out: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .map(|n| join(rel, n).unwrap_or_default())
            })
            .collect();
        out.sort();
        out
    }

    /// Imports of a Prisma client generated into the tree (`import { PrismaClient } from
    /// '@/generated/prisma/client'`, with `output = "../src/generated/prisma"`) are the Prisma
    /// client, whether or not the generated files are checked in.
    pub fn with_generated_clients(mut self, dirs: &[String]) -> Self {
        self.prisma_clients = dirs.to_vec();
        self
    }

    /// Binds parameters of functions a framework calls to what it passes them (the first binding
    /// of a parameter stays).
    pub fn bind_params(&mut self, bindings: Vec<((ModId, FnId, usize), Resolved)>) {
        for (k, v) in bindings {
            self.params.entry(k).or_insert(v);
        }
    }

    /// `@prisma/client` when `spec`, imported from module `from`, points into a generated Prisma
    /// client folder (relative, through tsconfig `paths`, or from `baseUrl`).
    fn generated_client(&self, from: ModId, spec: &str) -> Option<String> {
        if self.prisma_clients.is_empty() {
            return None;
        }
        let dir = parent_dir(&self.modules[from].file);
        let mut targets: Vec<String> = Vec::new();
        if spec.starts_with('.') {
            targets.extend(join(dir, spec));
        } else if let Some(cfg) = self.tsconfig_for(dir) {
            let base = cfg.base_url.as_deref().unwrap_or("");
            for (pattern, ts) in &cfg.paths {
                let rest = match pattern.strip_suffix('*') {
                    Some(prefix) => spec.strip_prefix(prefix),
                    None => (spec == pattern).then_some(""),
                };
                let Some(rest) = rest else { continue };
                targets.extend(
                    ts.iter()
                        .filter_map(|t| join(base, &t.replacen('*', rest, 1))),
                );
            }
            if let Some(b) = &cfg.base_url {
                targets.extend(join(b, spec));
            }
        }
        targets
            .iter()
            .any(|t| {
                self.prisma_clients.iter().any(|d| {
                    t == d
                        || t.strip_prefix(d.as_str())
                            .is_some_and(|r| r.starts_with('/'))
                })
            })
            .then(|| "@prisma/client".to_string())
    }

    #[allow(clippy::type_complexity)]
    fn workspace_packages(
        &self,
    ) -> (
        HashMap<String, String>,
        std::collections::BTreeMap<String, Vec<String>>,
        HashMap<String, Vec<(String, String)>>,
    ) {
        let mut dirs: Vec<&str> = self.modules.iter().map(|m| parent_dir(&m.file)).collect();
        dirs.sort();
        dirs.dedup();
        let mut out = HashMap::new();
        let mut exports = HashMap::new();
        let mut manifests = std::collections::BTreeMap::new();
        let mut seen = std::collections::HashSet::new();
        for d in dirs {
            let mut cur = Some(d);
            while let Some(dir) = cur {
                if !seen.insert(dir.to_string()) {
                    break;
                }
                let pj = join(dir, "package.json").unwrap_or_default();
                if let Some(text) = self.read_manifest(&pj)
                    && let Some(v) = self.manifest_json(&pj, serde_json::from_str(&text))
                {
                    if let Some(name) = v.get("name").and_then(|n| n.as_str()) {
                        out.insert(name.to_string(), dir.to_string());
                        let mut map = package_exports(v.get("exports"));
                        // Without `exports`, the entry its manifest names (`main: lib/index.js`).
                        if map.is_empty()
                            && let Some(entry) = ["types", "typings", "module", "main"]
                                .iter()
                                .find_map(|k| v.get(*k).and_then(|e| e.as_str()))
                        {
                            map.push((".".to_string(), entry.to_string()));
                        }
                        if !map.is_empty() {
                            exports.insert(name.to_string(), map);
                        }
                    }
                    let mut deps: Vec<String> =
                        ["dependencies", "devDependencies", "peerDependencies"]
                            .iter()
                            .filter_map(|k| v.get(*k).and_then(|d| d.as_object()))
                            .flat_map(|d| d.keys().cloned())
                            .collect();
                    deps.sort();
                    deps.dedup();
                    manifests.insert(dir.to_string(), deps);
                }
                cur = if dir.is_empty() {
                    None
                } else {
                    Some(parent_dir(dir))
                };
            }
        }
        (out, manifests, exports)
    }

    /// A manifest or configuration of the tree, or None; one that is there but cannot be read
    /// is a diagnostic.
    fn read_manifest(&self, rel: &str) -> Option<String> {
        match crate::paths::read_in_root(self.root, rel) {
            Ok(text) => text,
            Err(why) => {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                self.manifest_problem(rel, 0, format!("{name} {why}"));
                None
            }
        }
    }

    /// The JSON value of a manifest, or None with a diagnostic that says where it is invalid.
    fn manifest_json<E: std::fmt::Display>(
        &self,
        rel: &str,
        parsed: Result<serde_json::Value, E>,
    ) -> Option<serde_json::Value> {
        match parsed {
            Ok(v) => Some(v),
            Err(e) => {
                let e = e.to_string();
                // serde_json and json5 both end their message with "line N column M" or
                // "at line N column M"
                let line = e
                    .split("line ")
                    .nth(1)
                    .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let name = rel.rsplit('/').next().unwrap_or(rel);
                self.manifest_problem(
                    rel,
                    line,
                    format!("{name} is not valid JSON ({e}): it is ignored"),
                );
                None
            }
        }
    }

    fn manifest_problem(&self, rel: &str, line: u32, message: String) {
        if let Ok(mut p) = self.manifest_problems.lock() {
            p.push(crate::facts::Diagnostic::new(rel, line, message));
        }
    }

    /// The manifests and configurations met so far that could not be read, each once.
    pub fn take_manifest_problems(&self) -> Vec<crate::facts::Diagnostic> {
        let mut out = self
            .manifest_problems
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        out.sort_by(|a, b| (&a.file, a.line, &a.message).cmp(&(&b.file, b.line, &b.message)));
        out.dedup_by(|a, b| a.file == b.file && a.message == b.message);
        out
    }

    pub fn module_of(&self, file: &str) -> Option<ModId> {
        self.by_file.get(file).copied()
    }

    /// The module a path of the tree names, as an import would (extension and index optional).
    pub fn file_module(&self, path: &str) -> Option<ModId> {
        self.file_candidates(path)
    }

    fn file_candidates(&self, base: &str) -> Option<ModId> {
        if let Some(&m) = self.by_file.get(base) {
            return Some(m);
        }
        // `./x.js` written in TypeScript sources means `./x.ts`.
        for (written, actual) in [
            (".js", &["ts", "tsx"][..]),
            (".mjs", &["mts"][..]),
            (".cjs", &["cts"][..]),
            (".jsx", &["tsx"][..]),
        ] {
            if let Some(stem) = base.strip_suffix(written) {
                for ext in actual {
                    if let Some(&m) = self.by_file.get(format!("{stem}.{ext}").as_str()) {
                        return Some(m);
                    }
                }
            }
        }
        for ext in EXTENSIONS {
            if let Some(&m) = self.by_file.get(format!("{base}.{ext}").as_str()) {
                return Some(m);
            }
        }
        for ext in EXTENSIONS {
            let idx = if base.is_empty() {
                format!("index.{ext}")
            } else {
                format!("{base}/index.{ext}")
            };
            if let Some(&m) = self.by_file.get(idx.as_str()) {
                return Some(m);
            }
        }
        None
    }

    /// The module a specifier names from `from`, or None for an npm package (or a file not scanned).
    /// Memoised per (folder, specifier): the answer depends on nothing else.
    pub fn resolve_spec(&self, from: ModId, spec: &str) -> Option<ModId> {
        let dir = parent_dir(&self.modules[from].file);
        if let Ok(memo) = self.specs.lock()
            && let Some(found) = memo.get(dir).and_then(|by_spec| by_spec.get(spec))
        {
            return *found;
        }
        let found = self.resolve_spec_in(from, spec);
        if let Ok(mut memo) = self.specs.lock() {
            memo.entry(dir.to_string())
                .or_default()
                .insert(spec.to_string(), found);
        }
        found
    }

    fn resolve_spec_in(&self, from: ModId, spec: &str) -> Option<ModId> {
        let dir = parent_dir(&self.modules[from].file);
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            return self.file_candidates(&join(dir, spec)?);
        }
        if spec.starts_with('/') {
            return None;
        }
        if let Some(cfg) = self.tsconfig_for(dir) {
            for (pattern, targets) in &cfg.paths {
                let rest = match pattern.strip_suffix('*') {
                    Some(prefix) => spec.strip_prefix(prefix),
                    None => (spec == pattern).then_some(""),
                };
                let Some(rest) = rest else { continue };
                for t in targets {
                    let target = t.replacen('*', rest, 1);
                    let base = cfg.base_url.as_deref().unwrap_or("");
                    if let Some(m) = join(base, &target).and_then(|p| self.file_candidates(&p)) {
                        return Some(m);
                    }
                }
            }
            if let Some(base) = &cfg.base_url
                && let Some(m) = join(base, spec).and_then(|p| self.file_candidates(&p))
            {
                return Some(m);
            }
        }
        // SvelteKit's `$lib` alias (`src/lib` of the app, declared in the tsconfig SvelteKit
        // generates, which is build output).
        if let Some(rest) = spec
            .strip_prefix("$lib")
            .filter(|r| r.is_empty() || r.starts_with('/'))
            && let Some(root) = self
                .manifests
                .iter()
                .filter(|(d, deps)| deps.iter().any(|x| x == "@sveltejs/kit") && in_folder(dir, d))
                .map(|(d, _)| d)
                .max_by_key(|d| d.len())
            && let Some(m) =
                join(root, &format!("src/lib{rest}")).and_then(|p| self.file_candidates(&p))
        {
            return Some(m);
        }
        // Nuxt's aliases: `~~/x` and `@@/x` from the project's root, `~/x` and `@/x` from its
        // source folder (the root, or `app/` in Nuxt 4).
        if let Some((alias, rest)) = ["~~/", "@@/", "~/", "@/"]
            .iter()
            .find_map(|a| spec.strip_prefix(a).map(|r| (*a, r)))
            && let Some(root) = self.nuxt_root(dir)
        {
            let bases: &[&str] = if alias.len() == 3 {
                &[""]
            } else {
                &["", "app"]
            };
            for base in bases {
                if let Some(m) = join(root, base)
                    .and_then(|b| join(&b, rest))
                    .and_then(|p| self.file_candidates(&p))
                {
                    return Some(m);
                }
            }
        }
        // Nuxt's `#server` and `#shared` (the root's `server/` and `shared/`), and the aliases
        // its configuration declares.
        let configured = self
            .nuxt_aliases
            .iter()
            .filter_map(|(root, alias, target)| {
                let rest = spec.strip_prefix(alias.as_str())?;
                (rest.is_empty() || rest.starts_with('/')).then_some((root, target.clone(), rest))
            });
        let builtin = ["#server", "#shared"].into_iter().filter_map(|alias| {
            let rest = spec.strip_prefix(alias)?;
            let root = self.nuxt_root(dir)?;
            let target = join(root, &alias[1..])?;
            (rest.is_empty() || rest.starts_with('/')).then_some((root, target, rest))
        });
        for (root, target, rest) in configured.chain(builtin) {
            if !in_folder(dir, root) {
                continue;
            }
            let path = format!("{target}{rest}");
            if let Some(m) = self.file_candidates(&path) {
                return Some(m);
            }
        }
        // Workspace packages: `@org/pkg` or `@org/pkg/sub` inside this tree.
        let mut parts = spec.splitn(3, '/');
        let first = parts.next()?;
        let (name, sub) = if first.starts_with('@') {
            let second = parts.next()?;
            (format!("{first}/{second}"), parts.next().unwrap_or(""))
        } else {
            let sub = spec[first.len()..].trim_start_matches('/');
            (first.to_string(), sub)
        };
        let dir = self.packages.get(&name)?;
        // Its `exports` map first: what Node resolves the subpath to.
        if let Some(map) = self.package_exports.get(&name) {
            let want = if sub.is_empty() {
                ".".to_string()
            } else {
                format!("./{sub}")
            };
            for (key, target) in map {
                let target = match key.split_once('*') {
                    Some((pre, post)) => {
                        match want.strip_prefix(pre).and_then(|r| r.strip_suffix(post)) {
                            Some(star) => target.replacen('*', star, 1),
                            None => continue,
                        }
                    }
                    None if *key == want => target.clone(),
                    None => continue,
                };
                if let Some(m) = join(dir, &target)
                    .and_then(|p| self.file_candidates(&p))
                    .or_else(|| {
                        join(dir, &built_to_source(&target)?).and_then(|p| self.file_candidates(&p))
                    })
                {
                    return Some(m);
                }
            }
        }
        if sub.is_empty() {
            for entry in ["src/index", "index", "lib/index", "src/main"] {
                if let Some(m) = join(dir, entry).and_then(|p| self.file_candidates(&p)) {
                    return Some(m);
                }
            }
            None
        } else {
            join(dir, sub)
                .and_then(|p| self.file_candidates(&p))
                .or_else(|| join(dir, &format!("src/{sub}")).and_then(|p| self.file_candidates(&p)))
        }
    }

    fn tsconfig_for(&self, dir: &str) -> Option<std::sync::Arc<TsConfig>> {
        if let Some(c) = self.tsconfigs.lock().ok()?.get(dir) {
            return c.clone();
        }
        // A jsconfig.json is a tsconfig.json for JavaScript projects (`allowJs` implied): its
        // `baseUrl` and `paths` resolve imports the same way.
        let own = self
            .load_tsconfig(dir, "tsconfig.json", 0)
            .or_else(|| self.load_tsconfig(dir, "jsconfig.json", 0));
        let found = match own {
            Some(c) => Some(std::sync::Arc::new(c)),
            None if dir.is_empty() => None,
            None => self.tsconfig_for(parent_dir(dir)),
        };
        self.tsconfigs
            .lock()
            .ok()?
            .insert(dir.to_string(), found.clone());
        found
    }

    /// Reads `dir/name` (JSON with comments), following `extends` to relative files.
    fn load_tsconfig(&self, dir: &str, name: &str, depth: usize) -> Option<TsConfig> {
        if depth > 5 {
            return None;
        }
        let rel = join(dir, name)?;
        let text = self.read_manifest(&rel)?;
        let v: serde_json::Value = self.manifest_json(&rel, json5::from_str(&text))?;
        let cfg_dir = parent_dir(&rel).to_string();
        let mut cfg = match v.get("extends").and_then(|e| e.as_str()) {
            Some(ext) if ext.starts_with('.') => {
                let ext = if ext.ends_with(".json") {
                    ext.to_string()
                } else {
                    format!("{ext}.json")
                };
                self.load_tsconfig(&cfg_dir, &ext, depth + 1)
                    .unwrap_or(TsConfig {
                        base_url: None,
                        paths: vec![],
                    })
            }
            _ => TsConfig {
                base_url: None,
                paths: vec![],
            },
        };
        if let Some(opts) = v.get("compilerOptions") {
            if let Some(b) = opts.get("baseUrl").and_then(|b| b.as_str()) {
                cfg.base_url = join(&cfg_dir, b);
            }
            if let Some(paths) = opts.get("paths").and_then(|p| p.as_object()) {
                if cfg.base_url.is_none() {
                    cfg.base_url = Some(cfg_dir.clone());
                }
                cfg.paths = paths
                    .iter()
                    .map(|(k, v)| {
                        let targets = v
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(|t| t.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default();
                        (k.clone(), targets)
                    })
                    .collect();
                cfg.paths
                    .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
            }
        }
        Some(cfg)
    }

    // ----- values -----

    /// The MongoDB collection a value is (`db.collection('logs')`), through a local bound to one
    /// and through a project helper returning one (`getLogsCollection()`).
    pub fn collection_name(&self, m: ModId, v: &Val, depth: usize) -> Option<String> {
        // A chain's root that is called (`getLogsCollection().insertOne`) is the function.
        let callee = match v {
            Val::Call(callee, args) => {
                if let Val::Member(_, name) = &**callee
                    && name == "collection"
                {
                    return args.first()?.as_str().map(str::to_string);
                }
                &**callee
            }
            Val::Func(_) | Val::Import { .. } => v,
            _ => return None,
        };
        if depth >= 3 {
            return None;
        }
        let Resolved::Func(m2, f) = self.resolve(m, callee) else {
            return None;
        };
        self.modules[m2].functions[f]
            .returns
            .iter()
            .find_map(|r| self.collection_name(m2, r, depth + 1))
    }

    pub fn resolve(&self, m: ModId, v: &Val) -> Resolved {
        self.resolve_d(m, v, 0)
    }

    /// The module where resolution was cut at its depth limit since the last call, if it was.
    pub fn take_depth_cut(&self) -> Option<ModId> {
        self.depth_cut.lock().ok()?.take()
    }

    fn cut_at(&self, m: ModId) {
        if let Ok(mut cut) = self.depth_cut.lock() {
            cut.get_or_insert(m);
        }
    }

    /// [`Self::resolve`] where a string is wanted (a path, a prefix): a value the tree does not
    /// show that the code gives a literal fallback (`config.server.basePath || ''`) is that
    /// fallback, as a [`Resolved::Default`] whose `var` is the expression as written.
    pub fn resolve_str(&self, m: ModId, v: &Val) -> Resolved {
        self.resolve_str_d(m, v, 0)
    }

    fn resolve_str_d(&self, m: ModId, v: &Val, depth: usize) -> Resolved {
        match self.resolve_d(m, v, depth) {
            r @ (Resolved::Opaque | Resolved::Package { .. } | Resolved::Env(_)) => {
                let fallback = self.modules[m].fallback(v);
                // (a value the project's example environment file gives the variable first)
                let read = match &r {
                    Resolved::Env(var) => Some(var.as_str()),
                    _ => fallback.map(|f| f.expr.as_str()),
                };
                if let Some(ex) = read.and_then(|var| self.env_example(m, var)) {
                    return ex;
                }
                match fallback {
                    Some(f) => Resolved::Default {
                        value: f.literal.clone(),
                        var: f.expr.clone(),
                        example: None,
                    },
                    None => r,
                }
            }
            r => r,
        }
    }

    fn resolve_d(&self, m: ModId, v: &Val, depth: usize) -> Resolved {
        if depth > MAX_DEPTH {
            self.cut_at(m);
            return Resolved::Opaque;
        }
        let d = depth + 1;
        match v {
            Val::Func(f) => Resolved::Func(m, *f),
            Val::Class(c) => Resolved::Class(m, *c),
            Val::Instance(c) => self.instance(m, *c),
            Val::Router(r) => Resolved::Router(m, *r),
            Val::Obj(fields) => Resolved::Obj(m, fields.clone()),
            Val::Str(s) => Resolved::Str(s.clone()),
            Val::Global(name) => match self.auto_import(m, name) {
                Some((target, export)) if target != m => self.export_value(target, Some(export), d),
                _ => Resolved::Opaque,
            },
            Val::Param(f, i) => match self.params.get(&(m, *f, *i)) {
                Some(r) => r.clone(),
                // a constructor's parameter (kept in a field, `this.userController =
                // userController`): what the code that makes the instance passes
                None => self.modules[m]
                    .classes
                    .iter()
                    .position(|c| c.method("constructor") == Some(*f))
                    .and_then(|c| self.constructor_arg(m, c, *i, d))
                    .unwrap_or(Resolved::Opaque),
            },
            // A string made of pieces, each of which this tree says.
            Val::Template(parts) => {
                let (mut text, mut env) = (String::new(), None);
                for p in parts {
                    match self.resolve_str_d(m, p, d) {
                        Resolved::Str(s) => text.push_str(&s),
                        Resolved::Default {
                            value,
                            var,
                            example,
                        } => {
                            text.push_str(&value);
                            env.get_or_insert((var, example));
                        }
                        _ => return Resolved::Opaque,
                    }
                }
                match env {
                    Some((var, example)) => Resolved::Default {
                        value: text,
                        var,
                        example,
                    },
                    None => Resolved::Str(text),
                }
            }
            Val::EnvDefault { var, value } => {
                if let Some(r) = self.env_example(m, var) {
                    return r;
                }
                match self.resolve_d(m, value, d) {
                    Resolved::Str(s) | Resolved::Default { value: s, .. } => Resolved::Default {
                        value: s,
                        var: var.clone(),
                        example: None,
                    },
                    r => r,
                }
            }
            Val::Import { spec, name } => match self.resolve_spec(m, spec) {
                Some(target) => self.export_value(target, name.as_deref(), d),
                None => Resolved::Package {
                    spec: self
                        .generated_client(m, spec)
                        .unwrap_or_else(|| spec.clone()),
                    name: name.clone(),
                    path: vec![],
                },
            },
            Val::Member(inner, prop) => {
                if let Val::This(Some(c)) = inner.as_ref() {
                    return self.class_member(m, *c, prop, d);
                }
                // `container.cradle.userService` on an awilix container: what it registers
                if let Val::Member(container, cradle) = inner.as_ref()
                    && cradle == "cradle"
                    && let Some(r) = self.awilix_resolved(m, container, prop, d)
                {
                    return r;
                }
                if env_rooted(v) {
                    return Resolved::Env(super::display(v));
                }
                let base = self.resolve_d(m, inner, d);
                // A member of what a getter hands out (`this.db.usersRepository.save(..)`,
                // `get usersRepository() { return this._usersRepository; }`): a member of its
                // value.
                let base = match base {
                    Resolved::Func(m2, f2) => self.getter_value(m2, f2, d).unwrap_or(base),
                    b => b,
                };
                // A value known only by the interface or object type it is declared with
                // (`protected _dbContext: IGlobalDatabaseContext`, `interface
                // IGlobalDatabaseContext { usersRepository: Repository<User> }`): its member
                // is what that type declares the member to be.
                if matches!(base, Resolved::Opaque)
                    && let Some((tm, t)) = self.declared_type(m, inner)
                    && let Some((fm, ft)) = self.type_field(tm, &t, prop, 0)
                    && matches!(ft, Val::TypeRef(_))
                {
                    return self.resolve_d(fm, &ft, d + 1);
                }
                match self.member_of(base, prop, d) {
                    // `LndService().payInvoice` where the factory returns `wrapAll({ fns })`;
                    // `repo.saveOrganization` where it returns a package's call handed a table
                    // of functions (`injectArguments({ saveOrganization, .. }, { db })`)
                    r @ (Resolved::Opaque | Resolved::Package { .. })
                        if matches!(inner.as_ref(), Val::Call(..)) =>
                    {
                        match self.handed_member(m, inner, prop, d + 1) {
                            Resolved::Opaque => r,
                            found => found,
                        }
                    }
                    // `Discussion.add(..)` on a Mongoose model whose schema loads a class
                    // (`schema.loadClass(DiscussionClass)`) or declares the static
                    // (`schema.static('add', fn)`): that function
                    r @ Resolved::Package { .. } if matches!(&r, Resolved::Package { spec, .. } if spec == "mongoose") => {
                        self.model_static(m, inner, prop, d + 1).unwrap_or(r)
                    }
                    // `c.var.db` in a Hono handler: what a middleware set (`c.set('db', ..)`)
                    Resolved::Opaque
                        if matches!(inner.as_ref(), Val::Member(c, v)
                            if v == "var" && matches!(c.as_ref(), Val::Param(_, 0))) =>
                    {
                        self.context_var(prop, d + 1)
                    }
                    // `repo.saveOrg(..)` on a parameter declared `repo: OrgRepo`, with `type
                    // OrgRepo = ReturnType<typeof createOrgRepo>`: a member of what the function
                    // returns
                    Resolved::Opaque => match self.typed_param_made(m, inner, d + 1) {
                        Some((am, made)) => {
                            let base = self.resolve_d(am, &made, d + 1);
                            match self.member_of(base, prop, d + 1) {
                                Resolved::Opaque | Resolved::Package { .. } => {
                                    self.handed_member(am, &made, prop, d + 1)
                                }
                                found => found,
                            }
                        }
                        None => Resolved::Opaque,
                    },
                    r => r,
                }
            }
            // `body.id || uuidv4()` is the value where one is wanted
            Val::Call(callee, args)
                if matches!(callee.as_ref(), Val::Global(g) if g == crate::program::EITHER)
                    && !args.is_empty() =>
            {
                self.resolve_d(m, &args[0], d)
            }
            // `c.get('db')` in a Hono handler: what a middleware set
            Val::Call(callee, args)
                if matches!(callee.as_ref(), Val::Member(c, g)
                    if g == "get" && matches!(c.as_ref(), Val::Param(_, 0)))
                    && let [Val::Str(var)] = args.as_slice()
                    && !matches!(self.context_var(var, d + 1), Resolved::Opaque) =>
            {
                self.context_var(var, d + 1)
            }
            // `container.resolve('userService')` on an awilix container: what it registers
            Val::Call(callee, args)
                if let Val::Member(container, p) = callee.as_ref()
                    && p == "resolve"
                    && let [Val::Str(name)] = args.as_slice()
                    && let Some(r) = self.awilix_resolved(m, container, name, d) =>
            {
                r
            }
            Val::Call(callee, args) => {
                // `yield* Tag` in an Effect generator: the service a layer provides for it.
                if matches!(callee.as_ref(), Val::Global(g) if g == crate::program::YIELDED) {
                    return match args.first() {
                        Some(tag) => self.effect_service(m, tag, d + 1),
                        None => Resolved::Opaque,
                    };
                }
                // tRPC's server-side caller: the router whose procedures it runs.
                if let Some(parts) = self.trpc_caller(m, callee, d) {
                    return Resolved::Assembled(parts);
                }
                // `sequelize.define('User', attributes)` on a Sequelize instance that arrived as a
                // parameter (`module.exports = (sequelize) => sequelize.define(...)`) is a model.
                if let (Val::Member(_, p), [Val::Str(_), Val::Obj(_), ..]) =
                    (callee.as_ref(), args.as_slice())
                    && p == "define"
                {
                    return Resolved::Package {
                        spec: "sequelize".into(),
                        name: Some("Model".into()),
                        path: vec![],
                    };
                }
                // `router.routes()` (koa-router) hands over the router itself.
                if let Val::Member(inner, p) = callee.as_ref()
                    && matches!(
                        p.as_str(),
                        "routes" | "middleware" | "withTypeProvider" | "use"
                    )
                    && let r @ Resolved::Router(..) = self.resolve_d(m, inner, d)
                {
                    return r;
                }
                // `util.promisify(exec)` (https://nodejs.org/api/util.html#utilpromisifyoriginal):
                // the function it is given, called with a callback of its own; a package's
                // function stays that package's (`execAsync(cmd)` is child_process's `exec`).
                if let Some(first) = args.first()
                    && promisify(&self.resolve_d(m, callee, d))
                    && let r @ Resolved::Package { .. } = self.resolve_d(m, first, d)
                {
                    return r;
                }
                for a in args {
                    if let r @ Resolved::Func(..) = self.resolve_d(m, a, d) {
                        return r;
                    }
                }
                // `withApiWrapper({ handler: async (..) => .., action: 'created' })`: the handler
                // a wrapper of the project is configured with is what it calls (a package's
                // options, `createExpressMiddleware({ router, createContext })`, are not).
                let project_wrapper = args.iter().any(|a| matches!(a, Val::Obj(_)))
                    && matches!(self.resolve_d(m, callee, d + 1), Resolved::Func(..));
                for a in args.iter().filter(|_| project_wrapper) {
                    if let Val::Obj(fields) = a {
                        for (k, v) in fields.iter().take(16) {
                            if HANDLER_FIELDS.contains(&k.as_str())
                                && matches!(v, Val::Func(_) | Val::Import { .. })
                                && let r @ Resolved::Func(..) = self.resolve_d(m, v, d + 1)
                            {
                                return r;
                            }
                        }
                    }
                }
                if let Some(instance) = self.model_factory(m, callee, d) {
                    return instance;
                }
                match self.resolve_d(m, callee, d) {
                    Resolved::Func(m2, f) => {
                        // A function whose return values are already being followed on this
                        // thread (it returns calls to itself): nothing more to learn there, and
                        // following it again would branch at every return.
                        let Some(_following) = Following::enter(self, m2, f) else {
                            return Resolved::Opaque;
                        };
                        // A factory of the class it is given (`getInst(m) { if (!insts.get(m))
                        // insts.set(m, new m()); return insts.get(m) }`, a container's
                        // `resolve(Class)`): an instance of that class.
                        if let Some(i) = self.modules[m2].functions[f].calls.iter().find_map(|c| {
                            match &c.callee {
                                Val::Param(pf, i) if c.is_new && *pf == f => Some(*i),
                                _ => None,
                            }
                        }) && !self.modules[m2].functions[f].returns.is_empty()
                            && let Some(a) = args.get(i)
                            && let Resolved::Class(m3, c) = self.resolve_d(m, a, d + 1)
                        {
                            return self.instance(m3, c);
                        }
                        for r in &self.modules[m2].functions[f].returns {
                            // A small pure helper building a string from its parameters
                            // (`formatPath = (p) => `${process.env.BASE ?? ''}${p}``): its
                            // result for these arguments.
                            if let Some(s) = self.applied(m2, f, r, (m, args), d) {
                                return s;
                            }
                            match self.resolve_d(m2, r, d) {
                                Resolved::Opaque => continue,
                                x => return x,
                            }
                        }
                        Resolved::Opaque
                    }
                    p @ Resolved::Package { .. } => p,
                    Resolved::Class(m2, c) => self.instance(m2, c),
                    _ => Resolved::Opaque,
                }
            }
            Val::New(ctor, _) | Val::TypeRef(ctor) => match self.resolve_d(m, ctor, d) {
                Resolved::Class(m2, c) => self.instance(m2, c),
                p @ Resolved::Package { .. } => p,
                _ => Resolved::Opaque,
            },
            _ => Resolved::Opaque,
        }
    }

    /// Where a value that a call makes was made: following imports and exports, the module of
    /// the call and the call as written there (`require('./router-async').create()` bound to
    /// `router` in `routes/lists.js`, whether read there or imported). None for anything else.
    pub fn call_site(&self, m: ModId, v: &Val, maker: (ModId, FnId)) -> Option<(ModId, Val)> {
        self.call_site_d(m, v, maker, 0)
    }

    /// [`Self::call_site`] of the call of `maker`, the function that makes the value: a call of
    /// another project function that returns it (`getRouter(appType)` returning the router its
    /// body made with `create()`) is followed into that function's returns.
    fn call_site_d(
        &self,
        m: ModId,
        v: &Val,
        maker: (ModId, FnId),
        depth: usize,
    ) -> Option<(ModId, Val)> {
        let (mut m, mut v) = (m, v);
        for _ in 0..MAX_DEPTH {
            let (target, next) = match v {
                Val::Call(callee, _) if !matches!(callee.as_ref(), Val::Global(g) if g == crate::program::EITHER) =>
                {
                    return match self.resolve(m, callee) {
                        Resolved::Func(m2, g) if (m2, g) != maker && depth < 4 => {
                            let _following = Following::enter(self, m2, g)?;
                            self.modules[m2].functions[g]
                                .returns
                                .iter()
                                .find_map(|r| self.call_site_d(m2, r, maker, depth + 1))
                        }
                        _ => Some((m, v.clone())),
                    };
                }
                Val::Import { spec, name } => {
                    let target = self.resolve_spec(m, spec)?;
                    let module = &self.modules[target];
                    let next = match name.as_deref() {
                        None => module.cjs_whole.as_ref()?,
                        Some(n) => module.export(n).or_else(|| {
                            (n == "default")
                                .then_some(module.cjs_whole.as_ref())
                                .flatten()
                        })?,
                    };
                    (target, next)
                }
                // `require('./routes').lists`: the export of that name.
                Val::Member(inner, prop) => match inner.as_ref() {
                    Val::Import { spec, name: None } => {
                        let target = self.resolve_spec(m, spec)?;
                        let module = &self.modules[target];
                        let next = module.export(prop).or_else(|| match &module.cjs_whole {
                            Some(Val::Obj(fields)) => {
                                fields.iter().rev().find(|(k, _)| k == prop).map(|(_, v)| v)
                            }
                            _ => None,
                        })?;
                        (target, next)
                    }
                    _ => return None,
                },
                _ => return None,
            };
            (m, v) = (target, next);
        }
        None
    }

    /// What a returned string `r` of function `f` (in `m2`) is when it is made of literals,
    /// environment defaults and `f`'s own parameters, those being the call's arguments `args`
    /// (read in `m`). None when `r` names no parameter or any piece is not a string.
    fn applied(
        &self,
        m2: ModId,
        f: FnId,
        r: &Val,
        (m, args): (ModId, &[Val]),
        d: usize,
    ) -> Option<Resolved> {
        fn names_param(v: &Val, f: FnId) -> bool {
            match v {
                Val::Param(pf, _) => *pf == f,
                Val::Template(parts) => parts.iter().any(|p| names_param(p, f)),
                Val::EnvDefault { value, .. } => names_param(value, f),
                Val::Call(callee, parts) if is_when(callee) => {
                    parts.iter().any(|p| names_param(p, f))
                }
                _ => false,
            }
        }
        if !names_param(r, f) || d > MAX_DEPTH {
            return None;
        }
        let piece = |v: &Val| -> Option<(String, Option<EnvRead>)> {
            let r = match v {
                Val::Param(pf, i) if *pf == f => {
                    self.resolve_str_d(m, crate::program::argument(args, *i)?, d + 1)
                }
                Val::EnvDefault { var, value } => match value.as_ref() {
                    Val::Param(pf, i) if *pf == f => {
                        match self.resolve_d(m, crate::program::argument(args, *i)?, d + 1) {
                            Resolved::Str(s) | Resolved::Default { value: s, .. } => {
                                Resolved::Default {
                                    value: s,
                                    var: var.clone(),
                                    example: None,
                                }
                            }
                            _ => return None,
                        }
                    }
                    _ => self.resolve_str_d(m2, v, d + 1),
                },
                v => self.resolve_str_d(m2, v, d + 1),
            };
            match r {
                Resolved::Str(s) => Some((s, None)),
                Resolved::Default {
                    value,
                    var,
                    example,
                } => Some((value, Some((var, example)))),
                _ => None,
            }
        };
        // `param ? a : b` (see `WHEN`): the side the argument given, or the parameter's literal
        // default, picks.
        let truthy = |i: usize| -> Option<bool> {
            match args.get(i) {
                Some(Val::Bool(b)) => Some(*b),
                Some(a) => match self.resolve_d(m, a, d + 1) {
                    Resolved::Str(s) => Some(!s.is_empty()),
                    _ => None,
                },
                None => match self.modules[m2].functions[f]
                    .param_defaults
                    .iter()
                    .find(|(j, _)| *j == i)
                {
                    Some((_, Val::Bool(b))) => Some(*b),
                    Some(_) => None,
                    // (no default: `undefined`)
                    None => Some(false),
                },
            }
        };
        let mut v = r;
        for _ in 0..8 {
            match v {
                Val::Call(callee, parts) if is_when(callee) => match parts.as_slice() {
                    [Val::Param(pf, i), a, b] if *pf == f => {
                        v = if truthy(*i)? { a } else { b };
                    }
                    _ => return None,
                },
                _ => break,
            }
        }
        let parts: Vec<Val> = match v {
            Val::Template(parts) => parts.clone(),
            v => vec![v.clone()],
        };
        let (mut text, mut env) = (String::new(), None);
        for p in &parts {
            let (s, var) = piece(p)?;
            text.push_str(&s);
            if let Some(var) = var {
                env.get_or_insert(var);
            }
        }
        Some(match env {
            Some((var, example)) => Resolved::Default {
                value: text,
                var,
                example,
            },
            None => Resolved::Str(text),
        })
    }

    /// An instance of a class: the router itself when the class is one (a subclass of
    /// koa-router whose constructor registers routes).
    fn instance(&self, m: ModId, c: ClassId) -> Resolved {
        match self.modules[m].classes[c].router {
            Some(r) => Resolved::Router(m, r),
            None => Resolved::Instance(m, c),
        }
    }

    /// `Document.build(..)`, `User.findOne(..)`: a static factory a project model class inherits
    /// from its ORM base class gives an instance of that model, whose methods (its own and its
    /// project base classes') are the project's.
    fn model_factory(&self, m: ModId, callee: &Val, d: usize) -> Option<Resolved> {
        const FACTORIES: &[&str] = &[
            "build",
            "create",
            "findOne",
            "findByPk",
            "findById",
            "findOneBy",
            "findOneOrFail",
            "findOneByOrFail",
        ];
        let Val::Member(model, method) = callee else {
            return None;
        };
        if !FACTORIES.contains(&method.as_str()) {
            return None;
        }
        let Resolved::Class(m2, c) = self.resolve_d(m, model, d) else {
            return None;
        };
        matches!(
            self.class_member(m2, c, method, d),
            Resolved::Package { .. }
        )
        .then_some(Resolved::Instance(m2, c))
    }

    fn export_value(&self, target: ModId, name: Option<&str>, d: usize) -> Resolved {
        let module = &self.modules[target];
        match name {
            None => match &module.cjs_whole {
                Some(v) => self.resolve_d(target, v, d),
                None => Resolved::Module(target),
            },
            Some(n) => {
                if let Some(v) = module.export(n) {
                    return self.resolve_d(target, v, d);
                }
                if let Some(whole) = &module.cjs_whole {
                    if n == "default" {
                        return self.resolve_d(target, whole, d);
                    }
                    let base = self.resolve_d(target, whole, d);
                    return self.member_of(base, n, d);
                }
                if n == "default" && module.exports.is_empty() && module.star_exports.is_empty() {
                    return Resolved::Opaque;
                }
                for &sub in self.star_subs(target) {
                    if d < MAX_DEPTH {
                        match self.export_value(sub, Some(n), d + 1) {
                            Resolved::Opaque => continue,
                            r => return r,
                        }
                    }
                }
                Resolved::Opaque
            }
        }
    }

    /// Whether `v` is a getter whose value is a package's (`get usersRepository() { return
    /// this._usersRepository }`, the field a TypeORM repository): read as a value, not called.
    pub fn getter_of_package(&self, m: ModId, v: &Val) -> bool {
        matches!(self.resolve(m, v), Resolved::Func(m2, f2)
            if matches!(self.getter_value(m2, f2, 0), Some(Resolved::Package { .. })))
    }

    /// What a class's getter returns, when `f` is one (unknown when it returns several values
    /// or one this tree does not resolve: a member of it is not a member of the function).
    fn getter_value(&self, m: ModId, f: FnId, d: usize) -> Option<Resolved> {
        let def = &self.modules[m].functions[f];
        let c = def.class?;
        let class = &self.modules[m].classes[c];
        let name = def.name.rsplit('.').next().unwrap_or(&def.name);
        if !class.getters.iter().any(|g| g == name) {
            return None;
        }
        let Some(_following) = Following::enter(self, m, f) else {
            return Some(Resolved::Opaque);
        };
        let out = match &def.returns[..] {
            [r] => self.resolve_d(m, r, d + 1),
            _ => Resolved::Opaque,
        };
        Some(out)
    }

    fn class_member(&self, m: ModId, c: ClassId, prop: &str, d: usize) -> Resolved {
        if d > MAX_DEPTH {
            self.cut_at(m);
            return Resolved::Opaque;
        }
        let class = &self.modules[m].classes[c];
        if let Some(f) = class.method(prop) {
            // An accessor that hands out a router (`get router() { return this.app; }`):
            // reading the member is that router. Other accessors stay the method they are, as
            // the rest of the analysis reads them.
            if class.getters.iter().any(|g| g == prop)
                && let Some(_following) = Following::enter(self, m, f)
            {
                for r in &self.modules[m].functions[f].returns {
                    if let x @ Resolved::Router(..) = self.resolve_d(m, r, d + 1) {
                        return x;
                    }
                }
            }
            return Resolved::Func(m, f);
        }
        if let Some(v) = class.field(prop) {
            return self.resolve_d(m, v, d + 1);
        }
        match class.extends.as_ref().map(|e| self.resolve_d(m, e, d + 1)) {
            Some(Resolved::Class(m2, c2)) => {
                // A field the base class's constructor sets from one of its parameters
                // (`this.path = path`): the argument this class's constructor passes to
                // `super(logger, 'swap')`.
                let base = &self.modules[m2].classes[c2];
                if let (Some(Val::Param(pf, i)), Some(ctor)) =
                    (base.field(prop), base.method("constructor"))
                    && *pf == ctor
                    && let Some(arg) = self.super_arg(m, c, *i)
                {
                    return self.resolve_d(m, &arg, d + 1);
                }
                self.class_member(m2, c2, prop, d + 1)
            }
            Some(Resolved::Package {
                spec,
                name,
                mut path,
            }) => {
                path.push(prop.to_string());
                Resolved::Package { spec, name, path }
            }
            _ => Resolved::Opaque,
        }
    }

    /// Class `c` of module `m` extends a class a package makes or exports (`extends
    /// createZodDto(schema)`, `extends Model`), not one of the project's.
    pub fn extends_package(&self, m: ModId, c: ClassId) -> bool {
        self.modules[m].classes[c]
            .extends
            .as_ref()
            .is_some_and(|e| matches!(self.resolve(m, e), Resolved::Package { .. }))
    }

    /// What every `new C(..)` of the tree that makes class `c` of module `m` passes as argument
    /// `i`, when they all pass the same function, class or instance (one composition root
    /// wiring a controller into its routes): None when none does or they differ.
    fn constructor_arg(&self, m: ModId, c: ClassId, i: usize, d: usize) -> Option<Resolved> {
        // (one level: an argument that is itself a constructor's parameter is not followed to
        // the `new`s of that class, so no shape of the tree makes this more than linear)
        if d > MAX_DEPTH || IN_CONSTRUCTOR_ARG.with(|f| f.get()) {
            return None;
        }
        IN_CONSTRUCTOR_ARG.with(|f| f.set(true));
        let r = self.constructor_arg_at_news(m, c, i, d);
        IN_CONSTRUCTOR_ARG.with(|f| f.set(false));
        r
    }

    /// [`Self::constructor_arg`], read at the `new`s of the class.
    fn constructor_arg_at_news(
        &self,
        m: ModId,
        c: ClassId,
        i: usize,
        d: usize,
    ) -> Option<Resolved> {
        let news = self.news.get_or_init(|| {
            let mut out: FxHashMap<String, Vec<NewSite>> = FxHashMap::default();
            for (nm, module) in self.modules.iter().enumerate() {
                if module.is_test {
                    continue;
                }
                for cs in module.functions.iter().flat_map(|f| &f.calls) {
                    if !cs.is_new || !cs.path.is_empty() || cs.root_name.is_empty() {
                        continue;
                    }
                    let sites = out.entry(cs.root_name.clone()).or_default();
                    if sites.len() < MAX_NEWS_PER_NAME {
                        sites.push((nm, cs.callee.clone(), cs.args.clone()));
                    }
                }
            }
            out
        });
        let mut found: Option<Resolved> = None;
        for (nm, callee, args) in news.get(&self.modules[m].classes[c].name)? {
            if !matches!(self.resolve_d(*nm, callee, d + 1),
                Resolved::Class(cm, cc) if cm == m && cc == c)
            {
                continue;
            }
            let r = self.resolve_d(*nm, args.get(i)?, d + 1);
            let id = |r: &Resolved| match r {
                Resolved::Func(a, b) => Some((0, *a, *b)),
                Resolved::Class(a, b) => Some((1, *a, *b)),
                Resolved::Instance(a, b) => Some((2, *a, *b)),
                _ => None,
            };
            match (&found, id(&r)) {
                (_, None) => return None,
                (None, Some(_)) => found = Some(r),
                (Some(f), Some(x)) if id(f) == Some(x) => {}
                _ => return None,
            }
        }
        found
    }

    /// The string a member of `this` stands for in an instance of class `c`: a field set to a
    /// literal or to another such member (`this.name = this.getName()`), or what a method
    /// returns (`getName() { return 'project' }`), the subclass's own before its base's.
    pub fn this_string(&self, m: ModId, c: ClassId, v: &Val, d: usize) -> Option<String> {
        if d > 4 {
            return None;
        }
        let (name, called) = match v {
            Val::Str(s) => return Some(s.clone()),
            Val::Member(this, name) if matches!(this.as_ref(), Val::This(_)) => (name, false),
            Val::Call(callee, _) => match callee.as_ref() {
                Val::Member(this, name) if matches!(this.as_ref(), Val::This(_)) => (name, true),
                _ => return None,
            },
            _ => return None,
        };
        for (mc, cc) in self.class_chain(m, c) {
            let class = &self.modules[mc].classes[cc];
            if called && let Some(f) = class.method(name) {
                // (a `this` in what it returns is the same instance's)
                return self.modules[mc].functions[f]
                    .returns
                    .iter()
                    .find_map(|r| self.this_string(m, c, r, d + 1));
            }
            if !called
                && let Some(f) = class.field(name)
                && !matches!(f, Val::TypeRef(_) | Val::Unknown)
            {
                return self.this_string(m, c, f, d + 1);
            }
        }
        None
    }

    /// Class `c` of module `m`, then the classes it extends, nearest first (at most 8).
    pub fn class_chain(&self, m: ModId, c: ClassId) -> impl Iterator<Item = (ModId, ClassId)> + '_ {
        std::iter::successors(Some((m, c)), move |&(mc, cc)| {
            match self.modules[mc].classes[cc]
                .extends
                .as_ref()
                .map(|e| self.resolve(mc, e))
            {
                Some(Resolved::Class(m2, c2)) => Some((m2, c2)),
                _ => None,
            }
        })
        .take(8)
    }

    /// What a field holds in instances of class `c` when a base class's constructor sets it
    /// from a parameter (`constructor(protected model: Model<T>)`, or `this.model = model`) and
    /// a class between them passes a value up (`super(Subscriber, ..)`): that value, followed
    /// through constructors that pass their own parameter on. `None` when the field is not set
    /// from a parameter, or when `c` itself takes it (it differs per instance).
    pub fn field_from_super(&self, m: ModId, c: ClassId, field: &str) -> Option<(ModId, Val)> {
        // The chain from `c` up to the class whose constructor takes the field.
        let mut chain = vec![(m, c)];
        let mut index = None;
        for _ in 0..16 {
            let &(mc, cc) = chain.last()?;
            let class = &self.modules[mc].classes[cc];
            let ctor = class.method("constructor");
            let taken = class
                .ctor_params
                .iter()
                .find(|(f, _)| f == field)
                .map(|(_, i)| *i)
                .or_else(|| match class.field(field) {
                    Some(Val::Param(pf, i)) if Some(*pf) == ctor => Some(*i),
                    _ => None,
                });
            if let Some(i) = taken {
                index = Some(i);
                break;
            }
            match class.extends.as_ref().map(|e| self.resolve(mc, e)) {
                Some(Resolved::Class(m2, c2)) if !chain.contains(&(m2, c2)) => chain.push((m2, c2)),
                _ => return None,
            }
        }
        let mut i = index?;
        chain.pop();
        // Down again: each subclass's `super(..)` argument at that position.
        while let Some((mc, cc)) = chain.pop() {
            let ctor = self.modules[mc].classes[cc].method("constructor")?;
            let cs = self.modules[mc].functions[ctor].calls.iter().find(|cs| {
                cs.path.is_empty()
                    && (cs.root_name == "super"
                        || matches!(&cs.callee, Val::Global(g) if g == "super"))
            })?;
            match crate::program::argument(&cs.args, i)? {
                Val::Param(pf, j) if *pf == ctor => i = *j,
                v => return Some((mc, v.clone())),
            }
        }
        None
    }

    /// The `i`-th argument the constructor of class `c` passes to `super(..)`, when it is not
    /// one of that constructor's own parameters (which differ per instance).
    fn super_arg(&self, m: ModId, c: ClassId, i: usize) -> Option<Val> {
        let ctor = self.modules[m].classes[c].method("constructor")?;
        let calls = &self.modules[m].functions[ctor].calls;
        let cs = calls.iter().find(|cs| {
            cs.path.is_empty()
                && (cs.root_name == "super" || matches!(&cs.callee, Val::Global(g) if g == "super"))
        })?;
        let arg = cs.args.get(i)?;
        (!matches!(arg, Val::Param(pf, _) if *pf == ctor)).then(|| arg.clone())
    }

    pub fn member_of(&self, base: Resolved, prop: &str, d: usize) -> Resolved {
        if d > MAX_DEPTH {
            return Resolved::Opaque;
        }
        match base {
            Resolved::Assembled(fields) => {
                match fields.into_iter().rev().find(|(k, _)| k == prop) {
                    Some((_, Part::Val(m, v))) => self.resolve_d(m, &v, d + 1),
                    Some((_, Part::Obj(inner))) => Resolved::Assembled(inner),
                    None => Resolved::Opaque,
                }
            }
            Resolved::Obj(m, fields) => match fields.iter().rev().find(|(k, _)| k == prop) {
                Some((_, v)) => self.resolve_d(m, v, d),
                // A member of what the literal spreads (`{ ...PaymentsMod }` imported whole).
                None => {
                    let _budget = SpreadBudget::enter();
                    fields
                        .iter()
                        .rev()
                        .filter(|(k, _)| k == crate::program::SPREAD)
                        .take_while(|_| SpreadBudget::take())
                        .map(|(_, v)| self.spread_member(m, v, prop, d + 1))
                        .find(|r| !matches!(r, Resolved::Opaque))
                        .unwrap_or(Resolved::Opaque)
                }
            },
            Resolved::Module(m) => self.export_value(m, Some(prop), d),
            // A property assigned on a function object (`request.post = (o) => ..`).
            Resolved::Func(m, f) => match self.modules[m].functions[f].member(prop) {
                Some(v) => self.resolve_d(m, v, d + 1),
                None => Resolved::Opaque,
            },
            Resolved::Instance(m, c) | Resolved::Class(m, c) => self.class_member(m, c, prop, d),
            Resolved::Package {
                spec,
                name,
                mut path,
            } => {
                path.push(prop.to_string());
                Resolved::Package { spec, name, path }
            }
            _ => Resolved::Opaque,
        }
    }

    /// An object value, or the first object a function value returns (an options object or the
    /// function making it: `fields: () => ({ .. })`, a tRPC context creator).
    pub fn object_or_returned(&self, m: ModId, v: &Val) -> Option<(ModId, Vec<(String, Val)>)> {
        match self.resolve(m, v) {
            Resolved::Obj(om, fields) => Some((om, fields)),
            Resolved::Func(fm, f) => self.modules[fm].functions[f].returns.iter().find_map(|r| {
                match self.resolve(fm, r) {
                    Resolved::Obj(om, fields) => Some((om, fields)),
                    _ => None,
                }
            }),
            _ => None,
        }
    }

    /// Member `prop` of a value an object literal spreads: of the value itself, or, for the call
    /// of a project function that hands back what it is given (`wrapAll({ fns })` returning `{
    /// ...fns, ..wrapped }`), of that argument.
    fn spread_member(&self, m: ModId, v: &Val, prop: &str, d: usize) -> Resolved {
        if d > MAX_DEPTH {
            return Resolved::Opaque;
        }
        let base = self.resolve_d(m, v, d + 1);
        match self.member_of(base, prop, d + 1) {
            Resolved::Opaque if matches!(v, Val::Call(..)) => self.handed_member(m, v, prop, d + 1),
            found => found,
        }
    }

    /// Member `prop` of what the call `v` of a project function returns, where the function
    /// hands back (part of) what it is given: `wrapAll({ fns })` returning `{ ...fns, ..wrapped
    /// }` has the members of that argument; a factory returning such a call
    /// (`LndService = () => wrapAll({ fns: { payInvoice, .. } })`) too.
    fn handed_member(&self, m: ModId, v: &Val, prop: &str, d: usize) -> Resolved {
        if d > MAX_DEPTH {
            return Resolved::Opaque;
        }
        let Val::Call(callee, args) = v else {
            return Resolved::Opaque;
        };
        let (m2, f) = match self.resolve_d(m, callee, d + 1) {
            Resolved::Func(m2, f) => (m2, f),
            // a package's function handed a table of functions gives them back, bound or
            // wrapped (`injectArguments({ saveOrganization, .. }, { db })`)
            Resolved::Package { .. } => {
                return match args.first().and_then(|a| self.function_table(m, a, d + 1)) {
                    Some((tm, fields)) => fields
                        .iter()
                        .find(|(k, _)| k == prop)
                        .map_or(Resolved::Opaque, |(_, v)| self.resolve_d(tm, v, d + 1)),
                    None => Resolved::Opaque,
                };
            }
            _ => return Resolved::Opaque,
        };
        let Some(_following) = Following::enter(self, m2, f) else {
            return Resolved::Opaque;
        };
        // `param.fns` of function `f`, as the caller's argument
        fn given(v: &Val, f: FnId, args: &[Val]) -> Option<Val> {
            match v {
                Val::Param(g, i) if *g == f => args.get(*i).cloned(),
                Val::Member(inner, p) => Some(Val::Member(
                    std::sync::Arc::new(given(inner, f, args)?),
                    p.clone(),
                )),
                _ => None,
            }
        }
        for r in &self.modules[m2].functions[f].returns {
            if let Val::Call(..) = r {
                let r = self.handed_member(m2, r, prop, d + 1);
                if !matches!(r, Resolved::Opaque) {
                    return r;
                }
                continue;
            }
            let Val::Obj(fields) = r else { continue };
            // `const { action } = createActionApiRoute(options, handler)` where the factory
            // returns `{ loader, action }`, closures of its own: the function handed to the
            // factory that the closure calls (a wrapper's handler), else the closure.
            if let Some((_, Val::Func(g))) = fields.iter().rev().find(|(k, _)| k == prop) {
                return self
                    .closure_calls_param(m2, *g, f)
                    .and_then(|i| args.get(i))
                    .map(|a| self.resolve_d(m, a, d + 1))
                    .filter(|r| matches!(r, Resolved::Func(..)))
                    .unwrap_or(Resolved::Func(m2, *g));
            }
            let _budget = SpreadBudget::enter();
            for (_, sv) in fields
                .iter()
                .rev()
                .filter(|(k, _)| k == crate::program::SPREAD)
                .take_while(|_| SpreadBudget::take())
            {
                if let Some(arg) = given(sv, f, args) {
                    let base = self.resolve_d(m, &arg, d + 1);
                    let r = self.member_of(base, prop, d + 1);
                    if !matches!(r, Resolved::Opaque) {
                        return r;
                    }
                }
            }
        }
        Resolved::Opaque
    }

    /// The parameter of function `outer` that closure `g` (defined in it, in module `m`) calls,
    /// directly or in a function of its own: the index of the first.
    fn closure_calls_param(&self, m: ModId, g: FnId, outer: FnId) -> Option<usize> {
        let fns = &self.modules[m].functions;
        let mut stack = vec![g];
        let mut seen = 0usize;
        while let Some(h) = stack.pop() {
            seen += 1;
            if seen > 64 {
                return None;
            }
            for cs in &fns[h].calls {
                if let Val::Param(pf, i) = cs.callee
                    && pf == outer
                {
                    return Some(i);
                }
            }
            stack.extend(fns[h].children.iter().copied());
        }
        None
    }

    /// The value a Hono middleware sets for the context variable `name` (`c.set('db', ..)`,
    /// read as `c.var.db` or `c.get('db')`, hono.dev/docs/api/context#set-get): when every
    /// middleware that sets it sets the same thing.
    fn context_var(&self, name: &str, d: usize) -> Resolved {
        let vars = self.context_vars.get_or_init(|| {
            let mut out: FxHashMap<String, Vec<(ModId, Val)>> = FxHashMap::default();
            for (m, module) in self.modules.iter().enumerate() {
                if module.is_test || !self.declares(m, &["hono".to_string()]) {
                    continue;
                }
                for facts in &module.functions {
                    for cs in &facts.calls {
                        if let (Val::Member(c, set), [Val::Str(var), value]) =
                            (&cs.callee, cs.args.as_slice())
                            && set == "set"
                            && matches!(c.as_ref(), Val::Param(_, 0))
                        {
                            let values = out.entry(var.clone()).or_default();
                            if values.len() < 8 && !values.iter().any(|(_, v)| v == value) {
                                values.push((m, value.clone()));
                            }
                        }
                    }
                }
            }
            out
        });
        match vars.get(name).map(Vec::as_slice) {
            Some([(vm, v)]) => self.resolve_d(*vm, v, d + 1),
            _ => Resolved::Opaque,
        }
    }

    /// What the awilix container `container` resolves `name` to (github.com/jeffijoe/awilix:
    /// `container.resolve(name)`, `container.cradle[name]`): the value of the one resolver the
    /// project registers under that name. The container is one the code shows is awilix's (made
    /// by its `createContainer` or declared an `AwilixContainer`), or one it cannot show at all in
    /// a package that depends on awilix (awilix-express's per-request `req.container`). None when
    /// the name is registered with no resolver or with several that differ.
    fn awilix_resolved(&self, m: ModId, container: &Val, name: &str, d: usize) -> Option<Resolved> {
        let regs = self.awilix.get_or_init(|| self.awilix_registrations());
        let [(rm, resolver)] = regs.get(name)?.as_slice() else {
            return None;
        };
        match self.resolve_d(m, container, d + 1) {
            Resolved::Package { spec, .. } if is_awilix(&spec) => {}
            Resolved::Opaque if self.declares(m, &["awilix".to_string()]) => {}
            _ => return None,
        }
        let r = self.awilix_value(*rm, resolver, d + 1);
        (!matches!(r, Resolved::Opaque)).then_some(r)
    }

    /// The service an Effect generator gets for `yield* tag` (effect.website/docs/requirements-
    /// management/layers): the implementation of a class made by `Effect.Service` (its `effect`,
    /// `scoped`, `sync` or `succeed` option), else what the one layer of the project that
    /// provides the tag makes (`Layer.succeed(Tag, impl)`, `Layer.sync(Tag, () => impl)`,
    /// `Layer.effect(Tag, Effect.gen(function* () { .. return impl }))`). Layers of test code
    /// (a module under a folder or named for tests, fakes or mocks) are left aside; a tag
    /// several other layers provide stays not known.
    fn effect_service(&self, m: ModId, tag: &Val, d: usize) -> Resolved {
        // (not while the layers are being read: a tag written as `yield* ..` itself would
        // ask for them again)
        if d > MAX_DEPTH || READING_EFFECT_LAYERS.with(|r| r.get()) {
            return Resolved::Opaque;
        }
        let Resolved::Class(cm, c) = self.resolve_d(m, tag, d) else {
            return Resolved::Opaque;
        };
        if let Some(Val::Call(_, args)) = &self.modules[cm].classes[c].extends
            && let [Val::Str(_), Val::Obj(options), ..] = args.as_slice()
        {
            for (k, v) in options {
                let made = match k.as_str() {
                    "effect" | "scoped" | "sync" => {
                        Val::Call(std::sync::Arc::new(v.clone()), vec![])
                    }
                    "succeed" => v.clone(),
                    _ => continue,
                };
                return self.resolve_d(cm, &made, d + 1);
            }
        }
        let layers = self.effect_layers.get_or_init(|| {
            READING_EFFECT_LAYERS.with(|r| r.set(true));
            let layers = self.effect_layer_registrations();
            READING_EFFECT_LAYERS.with(|r| r.set(false));
            layers
        });
        let [(lm, op, made)] = layers.get(&(cm, c)).map(Vec::as_slice).unwrap_or_default() else {
            return Resolved::Opaque;
        };
        let made = match (op.as_str(), made) {
            // `Layer.succeed(Tag, Tag.of({ .. }))`
            ("succeed", Val::Call(callee, args))
                if matches!(callee.as_ref(), Val::Member(_, of) if of == "of")
                    && args.len() == 1 =>
            {
                args[0].clone()
            }
            ("succeed", v) => v.clone(),
            (_, v) => Val::Call(std::sync::Arc::new(v.clone()), vec![]),
        };
        self.resolve_d(*lm, &made, d + 1)
    }

    /// Every layer of a package that depends on `effect` that provides a tag class of the
    /// project, by the class: (module, `succeed`/`sync`/`effect`/`scoped`, what it is given).
    fn effect_layer_registrations(&self) -> EffectLayers {
        let mut out = EffectLayers::default();
        let effect = ["effect".to_string()];
        for (m, module) in self.modules.iter().enumerate() {
            let lower = module.file.to_ascii_lowercase();
            if module.is_test
                || ["test", "fake", "mock", "stub"]
                    .iter()
                    .any(|w| lower.contains(w))
                || !self.declares(m, &effect)
            {
                continue;
            }
            for cs in module.functions.iter().flat_map(|f| &f.calls) {
                let Some(op) = cs.path.last() else { continue };
                if !matches!(op.as_str(), "succeed" | "sync" | "effect" | "scoped") {
                    continue;
                }
                let [tag, made, ..] = cs.args.as_slice() else {
                    continue;
                };
                let Resolved::Package { spec, name, path } = self.resolve(m, &cs.callee) else {
                    continue;
                };
                let layer = (spec == "effect" && name.as_deref() == Some("Layer"))
                    || (spec == "effect/Layer")
                    || (spec == "effect" && path.first().is_some_and(|p| p == "Layer"));
                if !layer {
                    continue;
                }
                if let Resolved::Class(cm, c) = self.resolve(m, tag) {
                    let list = out.entry((cm, c)).or_default();
                    if list.len() < 8 && !list.iter().any(|(_, _, v)| v == made) {
                        list.push((m, op.clone(), made.clone()));
                    }
                }
            }
        }
        out
    }

    /// Every registration of an awilix container in a package that depends on awilix, by name.
    fn awilix_registrations(&self) -> FxHashMap<String, Vec<(ModId, Val)>> {
        let mut out: FxHashMap<String, Vec<(ModId, Val)>> = FxHashMap::default();
        for (m, module) in self.modules.iter().enumerate() {
            if module.is_test || !self.declares(m, &["awilix".to_string()]) {
                continue;
            }
            for cs in module.functions.iter().flat_map(|f| &f.calls) {
                let Val::Member(_, register) = &cs.callee else {
                    continue;
                };
                if register != "register" {
                    continue;
                }
                let named: Vec<(&str, &Val)> = match cs.args.as_slice() {
                    [Val::Obj(fields)] => fields.iter().map(|(k, v)| (k.as_str(), v)).collect(),
                    [Val::Str(k), v] => vec![(k.as_str(), v)],
                    _ => continue,
                };
                for (k, v) in named {
                    let resolvers = out.entry(k.to_string()).or_default();
                    if resolvers.len() < 8 && !resolvers.iter().any(|(_, r)| r == v) {
                        resolvers.push((m, v.clone()));
                    }
                }
            }
        }
        out
    }

    /// What an awilix resolver makes: `asClass(C)` an instance of `C`, `asFunction(f)` what `f`
    /// returns, `asValue(v)` the value; each with its lifetime and options chained
    /// (`.singleton()`, `.scoped()`, `.inject(..)`). A project's helper around them
    /// (`asSingletonWithLogger(UserService, logger)`) makes an instance of the class it is given.
    fn awilix_value(&self, m: ModId, resolver: &Val, d: usize) -> Resolved {
        let mut v = resolver;
        while let Val::Call(callee, _) = v
            && let Val::Member(inner, option) = callee.as_ref()
            && matches!(
                option.as_str(),
                "singleton"
                    | "scoped"
                    | "transient"
                    | "setLifetime"
                    | "inject"
                    | "disposer"
                    | "proxy"
                    | "classic"
                    | "setInjectionMode"
            )
        {
            v = inner;
        }
        let Val::Call(maker, args) = v else {
            return Resolved::Opaque;
        };
        let Some(first) = args.first() else {
            return Resolved::Opaque;
        };
        if let Resolved::Package { spec, name, .. } = self.resolve_d(m, maker, d)
            && is_awilix(&spec)
        {
            return match name.as_deref() {
                Some("asFunction") => {
                    self.resolve_d(m, &Val::Call(std::sync::Arc::new(first.clone()), vec![]), d)
                }
                Some("asClass") => match self.resolve_d(m, first, d) {
                    Resolved::Class(cm, c) => self.instance(cm, c),
                    _ => Resolved::Opaque,
                },
                Some("asValue") => self.resolve_d(m, first, d),
                _ => Resolved::Opaque,
            };
        }
        args.iter()
            .take(4)
            .find_map(|a| match self.resolve_d(m, a, d) {
                Resolved::Class(cm, c) => Some(self.instance(cm, c)),
                _ => None,
            })
            .unwrap_or(Resolved::Opaque)
    }

    /// A static of the Mongoose model `v` names (`mongoose.model('Discussion', schema)`, here or
    /// imported): a static method of a class the schema loads (`schema.loadClass(C)`,
    /// mongoosejs.com/docs/advanced_schemas.html) or one it declares
    /// (`schema.static('add', fn)`, `schema.statics.add = fn`).
    fn model_static(&self, m: ModId, v: &Val, prop: &str, d: usize) -> Option<Resolved> {
        if d > MAX_DEPTH {
            return None;
        }
        let (t, made) = self.written_value(m, v);
        let Val::Call(callee, args) = &made else {
            return None;
        };
        let models = matches!(
            self.resolve_d(t, callee, d + 1),
            Resolved::Package { spec, name, path }
                if spec == "mongoose" && path.last().or(name.as_ref()).is_some_and(|n| n == "model")
        );
        let schema = args.get(1).filter(|_| models)?;
        if let Some((_, _, f)) = self.modules[t]
            .statics
            .iter()
            .find(|(holder, name, _)| holder == schema && name == prop)
        {
            return Some(self.resolve_d(t, f, d + 1));
        }
        for facts in &self.modules[t].functions {
            for cs in &facts.calls {
                let Val::Member(on, method) = &cs.callee else {
                    continue;
                };
                if on.as_ref() != schema {
                    continue;
                }
                match (method.as_str(), cs.args.as_slice()) {
                    ("loadClass", [class, ..]) => {
                        if let Resolved::Class(cm, c) = self.resolve_d(t, class, d + 1) {
                            let r = self.class_member(cm, c, prop, d + 1);
                            if matches!(r, Resolved::Func(..)) {
                                return Some(r);
                            }
                        }
                    }
                    ("static", [Val::Str(name), f, ..]) if name == prop => {
                        return Some(self.resolve_d(t, f, d + 1));
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// The call a parameter's declared type names the result of (`repo: OrgRepo` with `type
    /// OrgRepo = ReturnType<typeof createOrgRepo>`, here or imported; `{ repo }: { repo: OrgRepo
    /// }`): `createOrgRepo()`, in the module that declares the alias.
    fn typed_param_made(&self, m: ModId, v: &Val, d: usize) -> Option<(ModId, Val)> {
        if d > MAX_DEPTH {
            return None;
        }
        let mut path = Vec::new();
        let mut cur = v;
        let (f, i) = loop {
            match cur {
                Val::Param(f, i) => break (*f, *i),
                Val::Member(inner, p) if path.len() < 4 => {
                    path.push(p.as_str());
                    cur = inner;
                }
                _ => return None,
            }
        };
        let (_, declared) = self.modules[m]
            .functions
            .get(f)?
            .param_types
            .iter()
            .find(|(k, _)| *k == i)?;
        let (mut tm, mut t) = (m, declared.clone());
        for p in path.iter().rev() {
            (tm, t) = self.type_field(tm, &t, p, 0)?;
        }
        let Val::TypeRef(named) = t else {
            return None;
        };
        self.alias_made(tm, &named)
    }

    /// The fields of parameter `index` of `(m, f)` by its declared type, at `path` within it
    /// (`args: TeamCreateArgs` at `data`: the fields of `TeamCreateInput`): a class's declared
    /// fields (a DTO, with those of the classes it extends), or an interface's or object type's.
    /// None where the type is not in view.
    pub fn param_fields(
        &self,
        m: ModId,
        f: FnId,
        index: usize,
        path: &[String],
    ) -> Option<Vec<String>> {
        let (_, t) = self.modules[m]
            .functions
            .get(f)?
            .param_types
            .iter()
            .find(|(k, _)| *k == index)?;
        let (mut tm, mut t) = (m, t.clone());
        for seg in path {
            (tm, t) = self.field_type(tm, &t, seg)?;
        }
        self.fields_of_type(tm, &t, 0)
    }

    /// The class a type annotation names, then the classes it extends (see
    /// [`Self::class_chain`]).
    fn type_classes(&self, m: ModId, t: &Val) -> Vec<(ModId, ClassId)> {
        let Val::TypeRef(inner) = t else {
            return Vec::new();
        };
        match self.resolve(m, inner) {
            Resolved::Class(cm, c) => self.class_chain(cm, c).collect(),
            _ => Vec::new(),
        }
    }

    /// The declared type of field `p` of a value of type `t`: a class's field, or as
    /// [`Self::type_field`] reads an interface or object type.
    fn field_type(&self, m: ModId, t: &Val, p: &str) -> Option<(ModId, Val)> {
        let classes = self.type_classes(m, t);
        if classes.is_empty() {
            return self.type_field(m, t, p, 0);
        }
        classes.iter().find_map(|&(cm, c)| {
            self.modules[cm].classes[c]
                .fields
                .iter()
                .rev()
                .find(|(n, t)| n == p && matches!(t, Val::TypeRef(_) | Val::Obj(_)))
                .map(|(_, t)| (cm, t.clone()))
        })
    }

    /// The module that declares the interface or object type a type annotation names (written
    /// in `m`), and its name: where the import leads, through re-exports of that name and
    /// `export *`.
    fn shape_named(&self, m: ModId, named: &Val) -> Option<(ModId, String)> {
        match named {
            Val::Global(n) => Some((m, n.clone())),
            v @ Val::Import { name: Some(n), .. } => {
                let (sm, _) = self.written_value(m, v);
                let target = match v {
                    Val::Import { spec, .. } if sm == m => self.resolve_spec(m, spec)?,
                    _ => sm,
                };
                Some((self.shape_module(target, n, 0)?, n.clone()))
            }
            _ => None,
        }
    }

    /// The names of the fields a value of type `t` carries (see [`Self::param_fields`]).
    fn fields_of_type(&self, m: ModId, t: &Val, d: usize) -> Option<Vec<String>> {
        if d > 8 {
            return None;
        }
        let classes = self.type_classes(m, t);
        if !classes.is_empty() {
            let mut out: Vec<String> = Vec::new();
            for (cm, c) in classes {
                for (n, _) in &self.modules[cm].classes[c].fields {
                    if !out.contains(n) {
                        out.push(n.clone());
                    }
                }
            }
            return (!out.is_empty()).then_some(out);
        }
        match t {
            Val::Obj(fields) => Some(fields.iter().map(|(k, _)| k.clone()).collect()),
            Val::TypeRef(named) => {
                let (sm, name) = self.shape_named(m, named)?;
                let mut out: Vec<String> = Vec::new();
                for part in self.modules[sm].type_shape(&name)? {
                    for n in self.fields_of_type(sm, part, d + 1).unwrap_or_default() {
                        if !out.contains(&n) {
                            out.push(n);
                        }
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            _ => None,
        }
    }

    /// The type a value is declared with, where the code says it: a type annotation itself, a
    /// field of `this` declared with one, a parameter's type.
    fn declared_type(&self, m: ModId, v: &Val) -> Option<(ModId, Val)> {
        match v {
            Val::TypeRef(_) => Some((m, v.clone())),
            // a field of the class or of a class it extends
            Val::Member(this, f) => match this.as_ref() {
                Val::This(Some(c)) => {
                    let (mut cm, mut cc) = (m, *c);
                    for _ in 0..8 {
                        let class = &self.modules[cm].classes[cc];
                        if let Some((_, t)) = class
                            .fields
                            .iter()
                            .rev()
                            .find(|(n, t)| n == f && matches!(t, Val::TypeRef(_)))
                        {
                            return Some((cm, t.clone()));
                        }
                        match class.extends.as_ref().map(|e| self.resolve(cm, e)) {
                            Some(Resolved::Class(m2, c2)) => (cm, cc) = (m2, c2),
                            _ => return None,
                        }
                    }
                    None
                }
                _ => None,
            },
            Val::Param(f, i) => self.modules[m]
                .functions
                .get(*f)?
                .param_types
                .iter()
                .find(|(k, t)| k == i && matches!(t, Val::TypeRef(_)))
                .map(|(_, t)| (m, t.clone())),
            _ => None,
        }
    }

    /// The declared type of field `p` of a value of type `t` (written in module `m`): a field
    /// of an object type, or of an interface or object type alias `t` names (`modules: Modules`
    /// with `interface Modules { orders: OrdersModule }`), here or imported, through the types
    /// it extends or intersects.
    fn type_field(&self, m: ModId, t: &Val, p: &str, d: usize) -> Option<(ModId, Val)> {
        if d > 8 {
            return None;
        }
        match t {
            // (a field whose type is not read says nothing of its members)
            Val::Obj(fields) => fields
                .iter()
                .find(|(k, v)| k == p && !matches!(v, Val::Unknown))
                .map(|(_, v)| (m, v.clone())),
            Val::TypeRef(named) => {
                let (sm, name) = self.shape_named(m, named)?;
                let parts = self.modules[sm].type_shape(&name)?;
                parts
                    .iter()
                    .find_map(|part| self.type_field(sm, part, p, d + 1))
            }
            _ => None,
        }
    }

    /// The module, `m` or one it re-exports whole (`export * from './modules'`), that declares
    /// the type shape `name`.
    fn shape_module(&self, m: ModId, name: &str, d: usize) -> Option<ModId> {
        if self.modules[m].type_shape(name).is_some() {
            return Some(m);
        }
        if d > 4 {
            return None;
        }
        self.star_subs(m)
            .iter()
            .find_map(|&t| self.shape_module(t, name, d + 1))
    }

    /// The modules `m` re-exports whole (`export * from '..'`), resolved once.
    fn star_subs(&self, m: ModId) -> &[ModId] {
        self.star_mods[m].get_or_init(|| {
            self.modules[m]
                .star_exports
                .iter()
                .filter_map(|spec| self.resolve_spec(m, spec))
                .filter(|sub| *sub != m)
                .collect()
        })
    }

    /// The call a type alias stands for (`ReturnType<typeof f>` is recorded as `f()`): the alias
    /// itself, or the one a module exports under an imported name.
    fn alias_made(&self, m: ModId, v: &Val) -> Option<(ModId, Val)> {
        let (t, made) = self.written_value(m, v);
        matches!(made, Val::Call(..)).then_some((t, made))
    }

    /// tRPC's server-side caller (https://trpc.io/docs/server/server-side-calls): `callee` is
    /// `t.createCallerFactory(appRouter)` (or a name it is bound to) or v10's
    /// `appRouter.createCaller`, so its call is the router, each procedure a function of it:
    /// `createCaller(ctx).notes.create(input)` runs that procedure's resolver.
    fn trpc_caller(&self, m: ModId, callee: &Val, d: usize) -> Option<Vec<(String, Part)>> {
        if d > MAX_DEPTH {
            return None;
        }
        if let Val::Member(router, p) = callee
            && p == "createCaller"
        {
            return self.trpc_router_parts(m, router, 0);
        }
        let (t, made) = self.written_value(m, callee);
        let Val::Call(factory, args) = &made else {
            return None;
        };
        let named = |v: &Val| matches!(v, Val::Member(_, p) | Val::Import { name: Some(p), .. } if p == "createCallerFactory");
        if !named(factory) {
            return None;
        }
        self.trpc_router_parts(t, args.first()?, 0)
    }

    /// A tRPC router's fields, each nested router an object of its own: a call of a router
    /// function (`router({..})`, `t.router({..})`, `createTRPCRouter({..})`) on an object, or a
    /// plain object of procedures (v11).
    fn trpc_router_parts(&self, m: ModId, v: &Val, depth: usize) -> Option<Vec<(String, Part)>> {
        if depth > 8 {
            return None;
        }
        let (t, made) = self.written_value(m, v);
        let fields = match &made {
            Val::Call(callee, args) => {
                let router_fn = match callee.as_ref() {
                    Val::Member(_, p) | Val::Import { name: Some(p), .. } => p,
                    Val::Global(p) => p,
                    _ => return None,
                };
                if !router_fn.to_ascii_lowercase().contains("router") {
                    return None;
                }
                match args.as_slice() {
                    [Val::Obj(fields)] => fields,
                    _ => return None,
                }
            }
            Val::Obj(fields) if depth > 0 => fields,
            _ => return None,
        };
        Some(
            fields
                .iter()
                .take(256)
                .map(|(k, fv)| {
                    let part = match self.trpc_router_parts(t, fv, depth + 1) {
                        Some(inner) => Part::Obj(inner),
                        None => Part::Val(t, fv.clone()),
                    };
                    (k.clone(), part)
                })
                .collect(),
        )
    }

    /// A value through the imports that name it: the module and the value as written there (an
    /// import of a module whole is its default export, or what it exports whole).
    pub fn written_value(&self, m: ModId, v: &Val) -> (ModId, Val) {
        let (mut t, mut made) = (m, v.clone());
        for _ in 0..MAX_DEPTH {
            let next = match &made {
                Val::Import {
                    spec,
                    name: Some(name),
                } => self
                    .resolve_spec(t, spec)
                    .and_then(|target| self.named_export(target, name, 0)),
                Val::Import { spec, name: None } => self.resolve_spec(t, spec).and_then(|target| {
                    let module = &self.modules[target];
                    Some((
                        target,
                        module
                            .export("default")
                            .or(module.cjs_whole.as_ref())?
                            .clone(),
                    ))
                }),
                _ => None,
            };
            match next {
                Some(n) => (t, made) = n,
                None => break,
            }
        }
        (t, made)
    }

    /// What module `m` exports as `name`, as written there: its own export, or one a module it
    /// re-exports whole exports (`export * from './module/configureOrdersModule.ts'`).
    fn named_export(&self, m: ModId, name: &str, d: usize) -> Option<(ModId, Val)> {
        let module = &self.modules[m];
        if let Some(v) = module.export(name) {
            return Some((m, v.clone()));
        }
        if d > 4 || module.star_exports.is_empty() {
            return None;
        }
        self.star_subs(m)
            .iter()
            .find_map(|&sub| self.named_export(sub, name, d + 1))
    }

    /// An object of functions only, at least two (`{ saveOrganization, getOrganizationById }`):
    /// a table of methods, which a package it is handed wraps or registers rather than runs.
    pub fn function_table(
        &self,
        m: ModId,
        v: &Val,
        d: usize,
    ) -> Option<(ModId, Vec<(String, Val)>)> {
        if d > MAX_DEPTH {
            return None;
        }
        let Resolved::Obj(om, fields) = self.resolve_d(m, v, d + 1) else {
            return None;
        };
        let table = (2..=MAX_TABLE_FUNCTIONS).contains(&fields.len())
            && fields.iter().all(|(k, fv)| {
                k != crate::program::SPREAD
                    && matches!(self.resolve_d(om, fv, d + 1), Resolved::Func(..))
            });
        table.then_some((om, fields))
    }

    /// The table a Drizzle table value names: `pgTable("users", {..})` itself, or a binding of one
    /// imported by name (`import { users }`) or through a namespace (`schema.users`).
    pub fn table_name(&self, m: ModId, v: &Val) -> Option<String> {
        self.table_name_d(m, v, 0)
    }

    /// The SQL name of the Drizzle table a module of the project exports as `name`: a table
    /// reached through a namespace the code was handed (`schema.users`, with `schema` a
    /// parameter) goes by its export's name.
    pub fn drizzle_table_named(&self, name: &str) -> Option<&String> {
        self.drizzle_tables
            .get_or_init(|| {
                let mut out = FxHashMap::default();
                for (m, module) in self.modules.iter().enumerate() {
                    if module.is_test {
                        continue;
                    }
                    for (n, v) in &module.exports {
                        if let Some(t) = self.table_name_d(m, v, 0) {
                            out.entry(n.clone()).or_insert(t);
                        }
                    }
                }
                out
            })
            .get(name)
    }

    fn table_name_d(&self, m: ModId, v: &Val, d: usize) -> Option<String> {
        if d > MAX_DEPTH {
            return None;
        }
        match v {
            Val::Call(callee, args) => {
                let name = match callee.as_ref() {
                    Val::Import { name: Some(n), .. } | Val::Global(n) | Val::Member(_, n) => n,
                    _ => return None,
                };
                match (name.as_str(), args.first()) {
                    ("pgTable" | "mysqlTable" | "sqliteTable", Some(Val::Str(t))) => {
                        Some(t.clone())
                    }
                    _ => None,
                }
            }
            Val::Import {
                spec,
                name: Some(name),
            } => {
                let target = self.resolve_spec(m, spec)?;
                let v = self.modules[target].export(name)?;
                self.table_name_d(target, v, d + 1)
            }
            Val::Member(inner, prop) => match inner.as_ref() {
                Val::Import { spec, name: None } => {
                    let target = self.resolve_spec(m, spec)?;
                    let v = self.modules[target].export(prop)?;
                    self.table_name_d(target, v, d + 1)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The npm package a value comes from, if it does: an import of it, `new X()` of it, a value a
    /// call on it returned, or an instance of a class that extends one of its classes.
    pub fn origin(&self, m: ModId, v: &Val) -> Option<(String, Option<String>, Vec<String>)> {
        // A model's instance from an inherited factory comes from that call (`findOne`: a
        // loaded row), as the package sees it.
        if let Val::Call(callee, _) = v
            && self.model_factory(m, callee, 0).is_some()
            && let Resolved::Package { spec, name, path } = self.resolve(m, callee)
        {
            return Some((spec, name, path));
        }
        match self.resolve(m, v) {
            Resolved::Package { spec, name, path } => Some((spec, name, path)),
            Resolved::Instance(m2, c) | Resolved::Class(m2, c) => {
                let mut cur = (m2, c);
                for _ in 0..8 {
                    let ext = self.modules[cur.0].classes[cur.1].extends.clone()?;
                    match self.resolve(cur.0, &ext) {
                        Resolved::Package { spec, name, path } => return Some((spec, name, path)),
                        Resolved::Class(m3, c3) => cur = (m3, c3),
                        _ => return None,
                    }
                }
                None
            }
            _ => None,
        }
    }
}

/// Node's `util.promisify` (`util.promisify`, `import { promisify } from 'node:util'`).
fn promisify(r: &Resolved) -> bool {
    match r {
        Resolved::Package { spec, name, path } => {
            matches!(spec.as_str(), "util" | "node:util")
                && name
                    .iter()
                    .filter(|n| *n != "default")
                    .chain(path.iter())
                    .map(String::as_str)
                    .eq(["promisify"])
        }
        _ => false,
    }
}

/// The first string a value is made of: itself, a call's first string argument
/// (`resolve(__dirname, './x')`), or that of the `new` it makes (`new URL('./x', import.meta.url)`,
/// whose arguments are the module's call at that line).
fn first_string(module: &Module, v: &Val, depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    match v {
        Val::Str(s) => Some(s.clone()),
        Val::Call(_, args) => args.iter().find_map(|a| first_string(module, a, depth + 1)),
        Val::New(_, line) => module
            .functions
            .iter()
            .flat_map(|f| &f.calls)
            .find(|c| c.is_new && c.line == *line)
            .and_then(|c| {
                c.args
                    .iter()
                    .find_map(|a| first_string(module, a, depth + 1))
            }),
        _ => None,
    }
}

/// Is folder `dir` (relative to the root) `folder` or inside it (`""` is the root)?
fn in_folder(dir: &str, folder: &str) -> bool {
    folder.is_empty()
        || dir == folder
        || dir.strip_prefix(folder).is_some_and(|r| r.starts_with('/'))
}
