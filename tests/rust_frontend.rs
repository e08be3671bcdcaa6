//! The Rust front end's crate model and router semantics, each on a small tree built here and
//! audited through the binary.

mod common;

use std::fs;
use std::path::Path;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    dir
}

/// (method, path, line, handler, sorted effect kinds, sorted mechanism kinds).
type Row = (String, String, u64, String, Vec<String>, Vec<String>);

/// The endpoints of the tree, sorted.
fn inventory(root: &Path) -> Vec<Row> {
    let report = common::json_report(root);
    let kinds = common::kinds;
    let mut out: Vec<_> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap().to_string(),
                e["path"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
                e["handler"].as_str().unwrap().to_string(),
                kinds(&e["side_effects"]),
                kinds(&e["mechanisms"]),
            )
        })
        .collect();
    out.sort();
    out
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const AXUM_TOML: &str = "[package]\nname = \"svc\"\nversion = \"0.1.0\"\n\n[dependencies]\naxum = \"0.8\"\nsqlx = \"0.8\"\n";

#[test]
fn modules_paths_and_uses_resolve() {
    let dir = tree(&[
        ("Cargo.toml", AXUM_TOML),
        (
            "src/main.rs",
            "mod api;\n#[path = \"odd/place.rs\"]\nmod place;\nmod inline {\n    pub mod deeper {\n        pub async fn made() { sqlx::query(\"INSERT INTO t VALUES (1)\").execute(&p).await; }\n    }\n}\nuse axum::Router;\n\nfn app() -> Router {\n    Router::new()\n        .nest(\"/v1\", api::router())\n        .merge(place::router())\n}\n",
        ),
        (
            "src/api/mod.rs",
            "mod notes;\npub use self::notes::router;\n",
        ),
        (
            "src/api/notes.rs",
            "use axum::routing::{self as r, on, MethodFilter};\nuse axum::Router;\nuse super::super::inline::deeper::made as create;\nuse crate::place::*;\n\npub fn router() -> Router {\n    Router::new()\n        .route(\"/notes/:id/*rest\", r::post(create))\n        .route(\"/notes\", on(MethodFilter::PUT, helper))\n        .route(\"/closure\", r::delete(|| async { sqlx::query!(\"delete from t\").execute(&p).await }))\n}\n",
        ),
        (
            "src/odd/place.rs",
            "use axum::{routing::any, Router};\npub async fn helper() {}\npub fn router() -> Router {\n    Router::new().route(\"/anything\", any(helper))\n}\n",
        ),
    ]);
    let inv = inventory(dir.path());
    let got: Vec<(String, String, u64, String)> = inv
        .iter()
        .map(|e| (e.0.clone(), e.1.clone(), e.2, e.3.clone()))
        .collect();
    // `any(helper)` answers every method: one endpoint, POST.
    let want = vec![
        ("DELETE", "/v1/closure", 10, "closure"),
        ("POST", "/anything", 4, "helper"),
        ("POST", "/v1/notes/{id}/{rest}", 8, "made"),
        ("PUT", "/v1/notes", 9, "helper"),
    ];
    let want: Vec<(String, String, u64, String)> = want
        .into_iter()
        .map(|(m, p, l, h)| (m.to_string(), p.to_string(), l, h.to_string()))
        .collect();
    assert_eq!(got, want);
    let made = inv.iter().find(|e| e.3 == "made").unwrap();
    assert_eq!(made.4, strs(&["db_create"]));
    let closure = inv.iter().find(|e| e.3 == "closure").unwrap();
    assert_eq!(closure.4, strs(&["db_delete"]));
}

#[test]
fn axum_layers_cover_the_routes_added_before_them() {
    let dir = tree(&[
        ("Cargo.toml", AXUM_TOML),
        (
            "src/main.rs",
            "use axum::{middleware, routing::post, Router, extract::Request, middleware::Next, response::Response};\n\nasync fn keyed(req: Request, next: Next) -> Response {\n    let _ = req.headers().get(\"Idempotency-Key\");\n    next.run(req).await\n}\nasync fn pay() { stripe::Charge::create(&c, p).await; }\n\nfn app() -> Router {\n    Router::new()\n        .route(\"/a\", post(pay))\n        .layer(middleware::from_fn(keyed))\n        .route(\"/b\", post(pay))\n}\n",
        ),
    ]);
    let inv = inventory(dir.path());
    assert_eq!(inv.len(), 2);
    assert_eq!(inv[0].1, "/a");
    assert_eq!(inv[0].5, strs(&["header_key"]));
    assert_eq!(inv[1].1, "/b");
    assert!(inv[1].5.is_empty());
    let report = common::json_report(dir.path());
    let rules: Vec<(&str, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    // `/a` is keyed, its charge passes no key to Stripe (RS007), and no test sends it one key
    // twice (RS020).
    assert_eq!(rules, vec![("RS001", 13), ("RS007", 11), ("RS020", 11)]);
}

#[test]
fn workspace_crates_configure_each_other() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"bin\", \"routes\"]\n\n[workspace.dependencies]\nweb-routes = { path = \"routes\" }\n",
        ),
        (
            "bin/Cargo.toml",
            "[package]\nname = \"bin\"\nversion = \"0.1.0\"\n\n[dependencies]\nactix-web = \"4\"\nweb-routes = { workspace = true }\n",
        ),
        (
            "bin/src/main.rs",
            "use actix_web::{App, HttpServer, web};\n\n#[actix_web::main]\nasync fn main() {\n    HttpServer::new(|| App::new().service(web::scope(\"/api\").configure(|cfg| web_routes::config(cfg))))\n        .bind(\"0:80\").unwrap().run().await.unwrap();\n}\n",
        ),
        (
            "routes/Cargo.toml",
            "[package]\nname = \"web-routes\"\nversion = \"0.1.0\"\n\n[dependencies]\nactix-web = \"4\"\nlettre = \"0.11\"\n",
        ),
        (
            "routes/src/lib.rs",
            "use actix_web::{web, post};\nmod mail;\n\npub fn config(cfg: &mut web::ServiceConfig) {\n    cfg.service(invite)\n        .service(web::resource(\"/items/{id}\").guard(actix_web::guard::Delete()).to(drop_item));\n}\n\n#[post(\"/invite\")]\nasync fn invite() { mail::send().await; }\n\nasync fn drop_item() {}\n",
        ),
        (
            "routes/src/mail.rs",
            "use lettre::{AsyncTransport, AsyncSmtpTransport, Tokio1Executor};\npub async fn send() {\n    let t = AsyncSmtpTransport::<Tokio1Executor>::unencrypted_localhost();\n    t.send(m).await.unwrap();\n}\n",
        ),
    ]);
    let inv = inventory(dir.path());
    let got: Vec<(&str, &str, &str)> = inv
        .iter()
        .map(|e| (e.0.as_str(), e.1.as_str(), e.3.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("DELETE", "/api/items/{id}", "drop_item"),
            ("POST", "/api/invite", "invite")
        ]
    );
    assert_eq!(inv[1].4, strs(&["email"]));
}

#[test]
fn rocket_mounts_and_request_guards() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package]\nname = \"lib\"\nversion = \"0.1.0\"\n\n[dependencies]\nrocket = \"0.5\"\ndiesel = \"2\"\n",
        ),
        (
            "src/main.rs",
            "#[macro_use] extern crate rocket;\nmod guard;\nmod items;\n\n#[launch]\nfn rocket() -> _ {\n    rocket::build()\n        .mount(\"/\", routes![items::add])\n        .mount(\"/v2\", items::all())\n}\n",
        ),
        (
            "src/guard.rs",
            "use rocket::request::{FromRequest, Outcome, Request};\npub struct Key;\n#[rocket::async_trait]\nimpl<'r> FromRequest<'r> for Key {\n    type Error = ();\n    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, ()> {\n        let _ = req.headers().get_one(\"X-Idempotency-Key\");\n        Outcome::Success(Key)\n    }\n}\n",
        ),
        (
            "src/items.rs",
            "use rocket::Route;\nuse crate::guard::Key;\n\npub fn all() -> Vec<Route> { routes![add, keyed] }\n\n#[post(\"/items?<draft>\", data = \"<body>\")]\npub fn add(draft: bool, body: String) { diesel::insert_into(items::table).values(&body).execute(&mut c); }\n\n#[route(PUT, uri = \"/items/<id>/<rest..>\")]\npub fn keyed(id: i32, rest: std::path::PathBuf, _k: Key) { diesel::insert_into(items::table).values(&id).execute(&mut c); }\n",
        ),
    ]);
    let inv = inventory(dir.path());
    let got: Vec<(&str, &str, &[String])> = inv
        .iter()
        .map(|e| (e.0.as_str(), e.1.as_str(), e.5.as_slice()))
        .collect();
    let none: &[String] = &[];
    let key = strs(&["header_key"]);
    assert_eq!(
        got,
        vec![
            ("POST", "/items", none),
            ("POST", "/v2/items", none),
            ("PUT", "/v2/items/{id}/{rest}", key.as_slice()),
        ]
    );
}

#[test]
fn typed_headers_and_key_constants() {
    let dir = tree(&[
        ("Cargo.toml", AXUM_TOML),
        (
            "src/main.rs",
            "mod key;\nuse axum::{routing::post, Router};\nuse axum_extra::TypedHeader;\n\nasync fn typed(TypedHeader(k): TypedHeader<key::IdemKey>) { sqlx::query(\"insert into t values (1)\").execute(&p).await; }\nasync fn by_const(headers: axum::http::HeaderMap) { let _ = headers.get(key::KEY); sqlx::query(\"insert into t values (1)\").execute(&p).await; }\nasync fn writes_downstream() { reqwest::Client::new().post(\"https://psp.example.com/charges\").header(\"Idempotency-Key\", \"k\").send().await; }\n\nfn app() -> Router {\n    Router::new()\n        .route(\"/typed\", post(typed))\n        .route(\"/const\", post(by_const))\n        .route(\"/downstream\", post(writes_downstream))\n}\n",
        ),
        (
            "src/key.rs",
            "use axum::http::HeaderName;\npub static KEY: HeaderName = HeaderName::from_static(\"idempotency-key\");\npub struct IdemKey(pub String);\nimpl headers::Header for IdemKey {\n    fn name() -> &'static HeaderName {\n        &KEY\n    }\n    fn decode<'i, I>(values: &mut I) -> Result<Self, headers::Error> { todo!() }\n    fn encode<E: Extend<axum::http::HeaderValue>>(&self, values: &mut E) {}\n}\n",
        ),
    ]);
    let inv = inventory(dir.path());
    let got: Vec<(&str, &[String], &[String])> = inv
        .iter()
        .map(|e| (e.1.as_str(), e.4.as_slice(), e.5.as_slice()))
        .collect();
    let create = strs(&["db_create"]);
    let external = strs(&["external_call"]);
    let key = strs(&["header_key"]);
    let none: &[String] = &[];
    assert_eq!(
        got,
        vec![
            ("/const", create.as_slice(), key.as_slice()),
            ("/downstream", external.as_slice(), none),
            ("/typed", create.as_slice(), key.as_slice()),
        ]
    );
}

#[test]
fn rust_output_is_the_same_whatever_the_thread_count() {
    let root = common::fixture("actix-forum");
    let run = |threads: &str| {
        let out = common::json_check(&root)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        out.stdout
    };
    let one = run("1");
    assert_eq!(one, run("4"));
    assert_eq!(one, run("4"));
}

/// (rule, line) of every finding in `file`, sorted.
fn findings_in(root: &Path, file: &str) -> Vec<(String, u64)> {
    let report = common::json_report(root);
    let mut out: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == file)
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn unique_violations_handled_around_rust_creates() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package]\nname = \"svc\"\nversion = \"0.1.0\"\n\n[dependencies]\naxum = \"0.8\"\nsea-orm = \"1\"\nsqlx = \"0.8\"\ndiesel = \"2\"\nnanoid = \"0.4\"\n",
        ),
        (
            "src/main.rs",
            "mod entity;\nmod handlers;\nmod schema;\nuse axum::{routing::post, Router};\n\nfn app() -> Router {\n    Router::new()\n        .route(\"/a\", post(handlers::by_match))\n        .route(\"/b\", post(handlers::by_if_let))\n        .route(\"/c\", post(handlers::uncaught))\n        .route(\"/d\", post(handlers::sqlx_caught))\n        .route(\"/e\", post(handlers::sqlx_uncaught))\n        .route(\"/f\", post(handlers::diesel_caught))\n        .route(\"/g\", post(handlers::fresh_key))\n}\n",
        ),
        ("src/entity/mod.rs", "pub mod tag;\n"),
        (
            "src/entity/tag.rs",
            "use sea_orm::entity::prelude::*;\n\n#[derive(Clone, Debug, DeriveEntityModel)]\n#[sea_orm(table_name = \"tags\")]\npub struct Model {\n    #[sea_orm(primary_key)]\n    pub id: i32,\n    #[sea_orm(unique)]\n    pub name: String,\n    #[sea_orm(unique)]\n    pub token: String,\n    pub note: String,\n}\n\nimpl ActiveModelBehavior for ActiveModel {}\n",
        ),
        (
            "src/schema.rs",
            "diesel::table! {\n    labels (id) {\n        id -> Int4,\n        name -> Text,\n    }\n}\n",
        ),
        (
            "migrations/0001_labels.sql",
            "create table labels (id serial primary key, name text not null unique);\n",
        ),
        (
            "src/handlers.rs",
            r#"use axum::http::StatusCode;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::prelude::*;
use sea_orm::{ActiveModelTrait, DatabaseConnection, Set, SqlErr};

use crate::entity::tag;
use crate::schema::labels;

pub async fn by_match(db: DatabaseConnection, name: String) -> StatusCode {
    let res = tag::ActiveModel { name: Set(name), ..Default::default() }.insert(&db).await;
    match res {
        Ok(_) => StatusCode::CREATED,
        Err(e) if matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_))) => StatusCode::CONFLICT,
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub async fn by_if_let(db: DatabaseConnection, name: String) -> StatusCode {
    let mut row = tag::ActiveModel::new();
    row.name = Set(name);
    if let Err(e) = row.insert(&db).await {
        if let Some(SqlErr::UniqueConstraintViolation(_)) = e.sql_err() {
            return StatusCode::CONFLICT;
        }
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    StatusCode::CREATED
}

pub async fn uncaught(db: DatabaseConnection, name: String) -> StatusCode {
    tag::ActiveModel { name: Set(name), ..Default::default() }.insert(&db).await.unwrap();
    StatusCode::CREATED
}

pub async fn sqlx_caught(pool: sqlx::PgPool, name: String) -> StatusCode {
    match sqlx::query("insert into labels (name) values ($1)").bind(name).execute(&pool).await {
        Ok(_) => StatusCode::CREATED,
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => StatusCode::CONFLICT,
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub async fn sqlx_uncaught(pool: sqlx::PgPool, name: String) -> StatusCode {
    sqlx::query("insert into labels (name) values ($1)").bind(name).execute(&pool).await.unwrap();
    StatusCode::CREATED
}

pub fn diesel_caught(mut conn: PgConnection, name: String) -> StatusCode {
    match diesel::insert_into(labels::table).values(labels::name.eq(name)).execute(&mut conn) {
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => StatusCode::CONFLICT,
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
        Ok(_) => StatusCode::CREATED,
    }
}

/// The only unique column written is a fresh token: nothing stops a second row.
pub async fn fresh_key(db: DatabaseConnection, note: String) -> StatusCode {
    let token = nanoid::nanoid!();
    tag::ActiveModel { token: Set(token), note: Set(note), ..Default::default() }.insert(&db).await.unwrap();
    StatusCode::CREATED
}
"#,
        ),
    ]);
    let inv = inventory(dir.path());
    let mechanisms: Vec<(String, Vec<String>)> =
        inv.iter().map(|e| (e.1.clone(), e.5.clone())).collect();
    let constraint = || strs(&["unique_constraint"]);
    assert_eq!(
        mechanisms,
        vec![
            ("/a".into(), constraint()),
            ("/b".into(), constraint()),
            ("/c".into(), constraint()),
            ("/d".into(), constraint()),
            ("/e".into(), constraint()),
            ("/f".into(), constraint()),
            ("/g".into(), vec![]),
        ]
    );
    assert_eq!(
        findings_in(dir.path(), "src/main.rs"),
        vec![
            ("RS003".into(), 14),
            ("RS012".into(), 10),
            ("RS012".into(), 12),
        ]
    );
}

/// An actix `App` built in a `macro_rules!` body is read where the macro is invoked, even in a
/// function that builds nothing else; a recursive macro ends; a path function's `let`, `replace`
/// and `{name:regex}` parameters are evaluated (its argument a local of the macro body); an arm
/// that is not code is a diagnostic naming the macro.
#[test]
fn actix_apps_built_by_macros() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package]\nname = \"svc\"\nversion = \"0.1.0\"\n\n[dependencies]\nactix-web = \"4\"\nsqlx = \"0.8\"\n",
        ),
        (
            "src/main.rs",
            r#"use actix_web::{web, App};

const ID: &str = r"\d+";

fn item_path(kind: &str) -> String {
    let path = "/items/{id}".to_string();
    let path = path.replace("items", kind).replace("{id}", &format!("{{id:{}}}", ID));
    format!("/v1{}", path.as_str())
}

async fn add() { sqlx::query("INSERT INTO t (a) VALUES (1)").execute(&p).await; }

macro_rules! make_app {
    () => { make_app!() };
    ($db:expr) => {{
        let kind = "notes";
        App::new()
            .app_data($db)
            .service(web::resource(&item_path(kind)).route(web::post().to(add)))
    }};
}

macro_rules! broken {
    ($h:ident) => { .service(web::resource("/b").route(web::post().to($h))) };
}

fn app() -> impl Sized {
    make_app!(1)
}

fn other() -> impl Sized {
    make_app!();
    broken!(add)
}

macro_rules! again {
    ($x:expr) => { App::new().service(again!($x)) };
}

fn third() -> impl Sized {
    again!(2)
}
"#,
        ),
    ]);
    let inv = inventory(dir.path());
    let rows: Vec<(String, String, u64)> = inv
        .iter()
        .map(|e| (e.0.clone(), e.1.clone(), e.2))
        .collect();
    assert_eq!(rows, vec![("POST".into(), "/v1/notes/{id}".into(), 19)]);
    let report = common::json_report(dir.path());
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("the body of macro `broken!` (src/main.rs:23) could not be read")),
        "{messages:?}"
    );
}

/// tokio-postgres runs a prepared statement given to the client (`client.execute(&stmt,
/// &[..])`, `client.query_one(&stmt, ..)`): the SQL given to `prepare` is judged there, with the
/// values bound after the statement; a statement nothing is seen running is judged where it was
/// prepared.
#[test]
fn tokio_postgres_prepared_statements_run_where_they_are_given() {
    let dir = tree(&[
        (
            "Cargo.toml",
            "[package]\nname = \"svc\"\nversion = \"0.1.0\"\n\n[dependencies]\naxum = \"0.8\"\ntokio-postgres = \"0.7\"\nuuid = \"1\"\n",
        ),
        (
            "src/main.rs",
            r#"use axum::{extract::State, routing::{post, put}, Router};
use std::sync::Arc;
use tokio_postgres::Client;

async fn create(State(client): State<Arc<Client>>, name: String) {
    let stmt = client.prepare("INSERT INTO teams (id, name) VALUES ($1, $2)").await.unwrap();
    client.execute(&stmt, &[&uuid::Uuid::new_v4(), &name]).await.unwrap();
}

async fn rename(State(client): State<Arc<Client>>, name: String) {
    let stmt = client.prepare("UPDATE teams SET name = $1 WHERE id = $2").await.unwrap();
    let _ = client.query_opt(&stmt, &[&name, &1i64]).await;
}

async fn count(State(client): State<Arc<Client>>) {
    let stmt = client.prepare("SELECT count(*) FROM teams").await.unwrap();
    let _ = client.query_one(&stmt, &[]).await;
}

async fn kept(State(client): State<Arc<Client>>, name: String) {
    let stmt = client.prepare("INSERT INTO audit (name) VALUES ($1)").await.unwrap();
    run_later(stmt, name);
}

fn run_later(_stmt: tokio_postgres::Statement, _name: String) {}

fn app(client: Arc<Client>) -> Router {
    Router::new()
        .route("/teams", post(create))
        .route("/teams/rename", put(rename))
        .route("/teams/count", post(count))
        .route("/audit", post(kept))
        .with_state(client)
}
"#,
        ),
    ]);
    let rows = inventory(dir.path());
    let effects = |path: &str| {
        rows.iter()
            .find(|r| r.1 == path)
            .map(|r| r.4.clone())
            .unwrap_or_default()
    };
    assert_eq!(effects("/teams"), strs(&["db_create"]));
    assert_eq!(effects("/teams/rename"), strs(&["db_update"]));
    assert_eq!(effects("/teams/count"), Vec::<String>::new());
    assert_eq!(effects("/audit"), strs(&["db_create"]));
    // the create is judged where it runs, not where it was prepared
    let report = common::json_report(dir.path());
    let line_of = |path: &str| {
        report["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == path)
            .map(|e| e["side_effects"][0]["line"].as_u64().unwrap())
    };
    assert_eq!(line_of("/teams"), Some(7));
    assert_eq!(line_of("/audit"), Some(21));
}

/// A call graph deeper than the call depth, where every function is reached by many paths (two
/// functions per level, each calling both of the next level: 2^n paths to level n). Followed
/// once per function and depth left, it is audited at once; followed once per path, it would
/// not finish. The cut at the depth bound is still reported, and what lies above it is found.
#[test]
fn a_deep_call_graph_of_many_paths_is_followed_once_per_function() {
    let mut code = String::from(
        "use axum::{extract::State, routing::post, Router};\nuse sqlx::PgPool;\n\nasync fn create(State(db): State<PgPool>) {\n    a1(&db).await;\n    b1(&db).await;\n}\n\n",
    );
    let levels = 64;
    for i in 1..=levels {
        for f in ["a", "b"] {
            code.push_str(&format!("async fn {f}{i}(db: &PgPool) {{\n"));
            if i == 1 && f == "a" {
                code.push_str("    sqlx::query(\"INSERT INTO notes (body) VALUES ('x')\").execute(db).await.unwrap();\n");
            }
            if i < levels {
                code.push_str(&format!(
                    "    a{}(db).await;\n    b{}(db).await;\n",
                    i + 1,
                    i + 1
                ));
            }
            code.push_str("}\n\n");
        }
    }
    code.push_str("fn app(db: PgPool) -> Router {\n    Router::new().route(\"/notes\", post(create)).with_state(db)\n}\n");
    let dir = tree(&[("Cargo.toml", AXUM_TOML), ("src/main.rs", &code)]);
    let report = common::json_report(dir.path());
    let endpoint = &report["endpoints"].as_array().unwrap()[0];
    assert_eq!(
        common::kinds(&endpoint["side_effects"]),
        strs(&["db_create"])
    );
    assert!(
        common::mentions_diagnostic(&report, "calls were followed 48 deep"),
        "{:#?}",
        report["diagnostics"]
    );
}
