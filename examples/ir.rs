//! Prints what the TS front end keeps of one file (a debugging aid).
fn main() {
    let path = std::env::args().nth(1).expect("usage: ir FILE");
    let text = std::fs::read_to_string(&path).unwrap();
    let lang =
        retrysafe::discover::Lang::from_path(std::path::Path::new(&path)).expect("a TS/JS file");
    let file = retrysafe::discover::SourceFile {
        rel: path.clone(),
        lang,
        text,
    };
    let catalog = retrysafe::catalog::Catalog::builtin().unwrap();
    let (module, diags) = retrysafe::frontend::ts::analyze_file(&file, &catalog);
    println!("{:#?}\n{:#?}\n{:#?}", module.routers, module.exports, diags);
    println!("foreign {:#?}", module.foreign_items);
    for c in &module.classes {
        println!(
            "class {} extends {:?} fields {:?} methods {:?} router {:?}",
            c.name, c.extends, c.fields, c.methods, c.router
        );
    }
    for (i, f) in module.functions.iter().enumerate() {
        println!(
            "fn {i} {} line {} param_items {:?} checks {:?} returns {:?}",
            f.name, f.line, f.param_items, f.method_checks, f.returns
        );
        for c in &f.calls {
            println!(
                "    call {} line {} callee {:?} args {:?} root {:?} path {:?}",
                c.text, c.line, c.callee, c.args, c.root, c.path
            );
        }
    }
}
