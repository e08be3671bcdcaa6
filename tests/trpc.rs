//! tRPC: where each adapter serves its router, procedures no adapter serves, and routers that
//! nest themselves or are not what they should be. (The full apps are the `trpc-next` and
//! `trpc-express` fixtures.)

mod common;

use serde_json::Value;
use std::fs;
use std::path::Path;

/// The tRPC setup and router every tree below serves: one mutation creating a Prisma row through
/// the context, one query.
const TRPC: &str = "import { initTRPC } from '@trpc/server';\n\
import { PrismaClient } from '@prisma/client';\n\
const prisma = new PrismaClient();\n\
export const createContext = async () => ({ db: prisma });\n\
const t = initTRPC.context<typeof createContext>().create();\n\
export const router = t.router;\n\
export const publicProcedure = t.procedure;\n";

const ROUTER: &str = "import { z } from 'zod';\n\
import { publicProcedure, router } from './trpc';\n\
export const appRouter = router({\n\
  post: router({\n\
    create: publicProcedure.input(z.object({ title: z.string() })).mutation(({ ctx, input }) =>\n\
      ctx.db.post.create({ data: { title: input.title } }),\n\
    ),\n\
    list: publicProcedure.query(({ ctx }) => ctx.db.post.findMany()),\n\
  }),\n\
});\n";

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    dir
}

fn app(server: (&str, &str)) -> tempfile::TempDir {
    tree(&[("src/trpc.ts", TRPC), ("src/router.ts", ROUTER), server])
}

/// `METHOD path protocol framework [effects]` of every endpoint.
fn inventory(root: &Path) -> (Vec<String>, Vec<String>) {
    let report = common::json_report(root);
    let endpoints = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {} {:?}",
                e["method"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["protocol"].as_str().unwrap(),
                e["framework"].as_str().unwrap(),
                common::kinds(&e["side_effects"]),
            )
        })
        .collect();
    let diagnostics = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect();
    (endpoints, diagnostics)
}

fn one(framework: &str, path: &str) -> Vec<String> {
    vec![format!("POST {path} trpc {framework} [\"db_create\"]")]
}

#[test]
fn fetch_adapter_in_an_app_router_route_serves_at_its_endpoint() {
    let dir = app((
        "src/app/api/trpc/[trpc]/route.ts",
        "import { fetchRequestHandler } from '@trpc/server/adapters/fetch';\n\
         import { appRouter } from '../../../../router';\n\
         import { createContext } from '../../../../trpc';\n\
         const handler = (req: Request) =>\n\
           fetchRequestHandler({ endpoint: '/api/trpc', req, router: appRouter, createContext });\n\
         export { handler as GET, handler as POST };\n",
    ));
    // The route file is the adapter's: no REST `POST /api/trpc/{trpc}`.
    assert_eq!(
        inventory(dir.path()).0,
        one("nextjs", "/api/trpc/post.create")
    );
}

#[test]
fn hono_adapter_serves_at_its_endpoint_or_trpc() {
    let server = |opts: &str| {
        format!(
            "import {{ Hono }} from 'hono';\n\
             import {{ trpcServer }} from '@hono/trpc-server';\n\
             import {{ appRouter }} from './router';\n\
             const app = new Hono();\n\
             app.use('/trpc/*', trpcServer({{ router: appRouter{opts} }}));\n\
             export default app;\n"
        )
    };
    let dir = app(("src/index.ts", &server("")));
    assert_eq!(inventory(dir.path()).0, one("hono", "/trpc/post.create"));
    let dir = app(("src/index.ts", &server(", endpoint: '/api/trpc'")));
    assert_eq!(
        inventory(dir.path()).0,
        one("hono", "/api/trpc/post.create")
    );
    // an endpoint that is not static is the path the adapter is mounted at, and said so
    let mounted = server(", endpoint: withBase('/api/trpc')").replace("'/trpc/*'", "'/api/trpc/*'");
    let dir = app(("src/index.ts", &mounted));
    let (endpoints, diagnostics) = inventory(dir.path());
    assert_eq!(endpoints, one("hono", "/api/trpc/post.create"));
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("listed under the path it is mounted at, `/api/trpc`")),
        "{diagnostics:?}"
    );
}

#[test]
fn a_rest_route_that_hands_over_to_the_fetch_adapter_is_replaced_by_the_procedures() {
    let dir = app((
        "src/index.ts",
        "import { Hono } from 'hono';\n\
         import { fetchRequestHandler } from '@trpc/server/adapters/fetch';\n\
         import { appRouter } from './router';\n\
         const app = new Hono();\n\
         app.all('/rpc/*', (c) => fetchRequestHandler({ endpoint: '/rpc', req: c.req.raw, router: appRouter }));\n\
         app.post('/upload', async (c) => c.text('ok'));\n\
         export default app;\n",
    ));
    let (endpoints, _) = inventory(dir.path());
    assert_eq!(
        endpoints,
        vec![
            "POST /rpc/post.create trpc hono [\"db_create\"]".to_string(),
            "POST /upload rest hono []".to_string(),
        ]
    );
}

#[test]
fn standalone_server_serves_at_the_root_or_its_base_path() {
    let server = |opts: &str| {
        format!(
            "import {{ createHTTPServer }} from '@trpc/server/adapters/standalone';\n\
             import {{ appRouter }} from './router';\n\
             import {{ createContext }} from './trpc';\n\
             createHTTPServer({{ router: appRouter, createContext{opts} }}).listen(3000);\n"
        )
    };
    let dir = app(("src/server.ts", &server("")));
    assert_eq!(inventory(dir.path()).0, one("trpc", "/post.create"));
    let dir = app(("src/server.ts", &server(", basePath: '/rpc/'")));
    assert_eq!(inventory(dir.path()).0, one("trpc", "/rpc/post.create"));
}

#[test]
fn fastify_plugin_serves_under_its_prefix() {
    let dir = app((
        "src/server.ts",
        "import Fastify from 'fastify';\n\
         import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';\n\
         import { appRouter } from './router';\n\
         import { createContext } from './trpc';\n\
         const server = Fastify();\n\
         server.register(async (api) => {\n\
           api.register(fastifyTRPCPlugin, { prefix: '/trpc', trpcOptions: { router: appRouter, createContext } });\n\
         }, { prefix: '/v1' });\n\
         server.listen({ port: 3000 });\n",
    ));
    assert_eq!(
        inventory(dir.path()).0,
        one("fastify", "/v1/trpc/post.create")
    );
}

#[test]
fn procedures_no_adapter_serves_are_listed_under_trpc_with_a_diagnostic() {
    // Only a server-side caller: no URL serves the router. The context still comes from
    // `initTRPC.context<typeof createContext>()`, so the Prisma create is found.
    let dir = app((
        "src/caller.ts",
        "import { appRouter } from './router';\n\
         import { createContext } from './trpc';\n\
         export const caller = async () => appRouter.createCaller(await createContext());\n",
    ));
    let (endpoints, diagnostics) = inventory(dir.path());
    assert_eq!(endpoints, one("trpc", "trpc:post.create"));
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("served by no adapter") && d.contains("trpc:<procedure path>")),
        "{diagnostics:?}"
    );
    let report = common::json_report(dir.path());
    assert_eq!(report["findings"][0]["endpoint"], "POST trpc:post.create");
    assert_eq!(report["endpoints"][0]["handler"], "post.create");
    assert_eq!(report["endpoints"][0]["file"], "src/router.ts");
    assert_eq!(report["endpoints"][0]["line"], 5);
}

#[test]
fn an_endpoint_that_is_not_static_keeps_the_procedures_under_trpc() {
    let dir = app((
        "src/worker.ts",
        "import { fetchRequestHandler } from '@trpc/server/adapters/fetch';\n\
         import { appRouter } from './router';\n\
         export default {\n\
           fetch(req: Request) {\n\
             return fetchRequestHandler({ endpoint: process.env.TRPC_PATH, req, router: appRouter });\n\
           },\n\
         };\n",
    ));
    let (endpoints, diagnostics) = inventory(dir.path());
    // No `createContext` given: the context is the one `initTRPC.context<typeof ..>()` names.
    assert_eq!(endpoints, one("trpc", "trpc:post.create"));
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("`fetchRequestHandler`") && d.contains("`endpoint`")),
        "{diagnostics:?}"
    );
}

#[test]
fn routers_that_contain_themselves_end_and_repeat_byte_for_byte() {
    let mut files: Vec<(String, String)> = vec![
        ("src/trpc.ts".into(), TRPC.into()),
        (
            "src/a.ts".into(),
            "import { publicProcedure, router } from './trpc';\n\
             import { bRouter } from './b';\n\
             export const aRouter = router({\n\
               b: bRouter,\n\
               make: publicProcedure.mutation(({ ctx }) => ctx.db.thing.create({ data: {} })),\n\
             });\n"
                .into(),
        ),
        (
            "src/b.ts".into(),
            "import { router } from './trpc';\n\
             import { aRouter } from './a';\n\
             export const bRouter = router({ a: aRouter });\n"
                .into(),
        ),
    ];
    // Thirty files, each merging the previous one's router with itself: a billion paths if
    // nothing bounded the walk.
    files.push((
        "src/t.ts".into(),
        "import { initTRPC } from '@trpc/server';\nexport const t = initTRPC.create();\n".into(),
    ));
    files.push((
        "src/m0.ts".into(),
        "import { t } from './t';\nexport const r = t.router({ op: t.procedure.mutation(() => 1) });\n"
            .into(),
    ));
    for i in 1..=30 {
        files.push((
            format!("src/m{i}.ts"),
            format!(
                "import {{ t }} from './t';\nimport {{ r as p }} from './m{}';\nexport const r = t.mergeRouters(p, p);\n",
                i - 1
            ),
        ));
    }
    files.push((
        "src/server.ts".into(),
        "import { createHTTPServer } from '@trpc/server/adapters/standalone';\n\
         import { aRouter } from './a';\n\
         import { r as big } from './m30';\n\
         createHTTPServer({ router: aRouter }).listen(3000);\n\
         createHTTPServer({ router: big, basePath: '/big/' }).listen(3001);\n"
            .into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = tree(&refs);
    let run = || common::json_check(dir.path()).output().unwrap();
    let (first, second) = (run(), run());
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(first.stdout, second.stdout, "output differs between runs");
    let (endpoints, diagnostics) = inventory(dir.path());
    // `a.b.a` is where the cycle closes: not walked again.
    assert_eq!(
        endpoints,
        vec![
            "POST /big/op trpc trpc []".to_string(),
            "POST /make trpc trpc [\"db_create\"]".to_string(),
        ]
    );
    assert!(
        diagnostics.iter().any(|d| d.contains("contains itself")),
        "{diagnostics:?}"
    );
    assert!(
        diagnostics.iter().any(|d| d.contains("visited more than")),
        "{diagnostics:?}"
    );
}

#[test]
fn what_is_not_a_router_or_a_procedure_is_a_diagnostic() {
    let dir = tree(&[
        ("src/trpc.ts", TRPC),
        (
            "src/router.ts",
            "import { publicProcedure, router } from './trpc';\n\
             import { helpers } from 'some-lib';\n\
             export const empty = router();\n\
             export const odd = router(42);\n\
             export const appRouter = router({\n\
               broken: publicProcedure.mutation(),\n\
               helper: helpers.thing,\n\
               ok: publicProcedure.mutation(() => 1),\n\
             });\n",
        ),
        (
            "src/server.ts",
            "import { createHTTPServer } from '@trpc/server/adapters/standalone';\n\
             import { appRouter } from './router';\n\
             createHTTPServer();\n\
             createHTTPServer(undefined);\n\
             createHTTPServer({ router: appRouter }).listen(3000);\n",
        ),
    ]);
    let (endpoints, diagnostics) = inventory(dir.path());
    assert_eq!(endpoints, vec!["POST /ok trpc trpc []".to_string()]);
    for needle in ["`broken`", "`helper`", "options the audit cannot read"] {
        assert!(
            diagnostics.iter().any(|d| d.contains(needle)),
            "no diagnostic mentions {needle}: {diagnostics:?}"
        );
    }
    let _: Value = common::json_report(dir.path());
}

#[test]
fn a_context_field_that_shows_nothing_is_matched_by_its_name() {
    // `db` comes from the request (set by other middleware): nothing shows what it is, so
    // `ctx.db.post.create(..)` is read like `db.post.create(..)`.
    let dir = tree(&[
        (
            "src/trpc.ts",
            "import { initTRPC } from '@trpc/server';\n\
             import type { CreateExpressContextOptions } from '@trpc/server/adapters/express';\n\
             export const createContext = ({ req }: CreateExpressContextOptions) => ({ db: req.app.locals.db });\n\
             const t = initTRPC.context<typeof createContext>().create();\n\
             export const router = t.router;\n\
             export const publicProcedure = t.procedure;\n",
        ),
        ("src/router.ts", ROUTER),
        (
            "src/app.ts",
            "import express from 'express';\n\
             import { createExpressMiddleware } from '@trpc/server/adapters/express';\n\
             import { appRouter } from './router';\n\
             import { createContext } from './trpc';\n\
             const app = express();\n\
             app.use('/trpc', createExpressMiddleware({ router: appRouter, createContext }));\n\
             app.listen(3000);\n",
        ),
    ]);
    assert_eq!(inventory(dir.path()).0, one("express", "/trpc/post.create"));
}

#[test]
fn an_express_adapter_made_in_one_file_is_served_where_another_mounts_it() {
    let dir = app((
        "src/trpc-middleware.ts",
        "import * as trpcExpress from '@trpc/server/adapters/express';\n\
         import { appRouter } from './router';\n\
         import { createContext } from './trpc';\n\
         export const trpcMiddleware = trpcExpress.createExpressMiddleware({ router: appRouter, createContext });\n",
    ));
    fs::write(
        dir.path().join("src/app.ts"),
        "import express from 'express';\n\
         import { trpcMiddleware } from './trpc-middleware';\n\
         const app = express();\n\
         const v2 = express.Router();\n\
         v2.use('/rpc', trpcMiddleware);\n\
         app.use('/v2', v2);\n\
         app.listen(3000);\n",
    )
    .unwrap();
    assert_eq!(
        inventory(dir.path()).0,
        one("express", "/v2/rpc/post.create")
    );
}

/// A procedure defined in a file of its own and only named in the router is located at its
/// `.mutation(..)`, where a fix goes; one written in the router, at its key.
#[test]
fn a_procedure_of_its_own_file_is_located_where_it_is_defined() {
    let dir = tree(&[
        ("src/trpc.ts", TRPC),
        (
            "src/procedures/create-post.ts",
            "import { z } from 'zod';\n\
             import { publicProcedure } from '../trpc';\n\
             export const createPostRoute = publicProcedure\n\
               .input(z.object({ title: z.string() }))\n\
               .mutation(({ ctx, input }) => ctx.db.post.create({ data: { title: input.title } }));\n",
        ),
        (
            "src/router.ts",
            "import { publicProcedure, router } from './trpc';\n\
             import { createPostRoute } from './procedures/create-post';\n\
             export const appRouter = router({\n\
               post: router({\n\
                 create: createPostRoute,\n\
                 touch: publicProcedure.mutation(({ ctx }) => ctx.db.post.create({ data: { title: 'x' } })),\n\
               }),\n\
             });\n",
        ),
        (
            "src/index.ts",
            "import { createHTTPServer } from '@trpc/server/adapters/standalone';\n\
             import { appRouter } from './router';\n\
             createHTTPServer({ router: appRouter }).listen(3000);\n",
        ),
    ]);
    let report = common::json_report(dir.path());
    let mut at: Vec<String> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}:{}",
                e["path"].as_str().unwrap(),
                e["file"].as_str().unwrap(),
                e["line"]
            )
        })
        .collect();
    at.sort();
    assert_eq!(
        at,
        [
            "/post.create src/procedures/create-post.ts:5",
            "/post.touch src/router.ts:6"
        ]
    );
}
