//! The OpenAPI file documents exactly the routes the router serves: every
//! `.route(path, method(..))` in `src/routes/` is in `openapi.yaml` with the
//! same methods, and the file documents no route the router lacks.

use std::collections::BTreeSet;
use std::path::Path;

fn routes_in_source() -> BTreeSet<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/routes");
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(".route(") {
            // rustfmt may break the line after `.route(`.
            rest = rest[i + 7..].trim_start();
            let Some(r) = rest.strip_prefix('"') else {
                continue;
            };
            rest = r;
            let end = rest.find('"').unwrap();
            let path = rest[..end].to_string();
            // The route expression runs to the parenthesis that closes `.route(`.
            let mut depth = 1;
            let mut stop = rest.len();
            for (k, c) in rest.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            stop = k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let expr = &rest[end..stop];
            for method in ["get", "post", "put", "delete", "patch"] {
                let at_start =
                    expr.contains(&format!(" {method}(")) || expr.contains(&format!("\n{method}("));
                if at_start || expr.contains(&format!(".{method}(")) {
                    found.insert((path.clone(), method.to_string()));
                }
            }
            rest = &rest[stop..];
        }
    }
    found
}

fn routes_in_openapi() -> BTreeSet<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found = BTreeSet::new();
    for (p, item) in doc["paths"].as_mapping().expect("paths").iter() {
        for (m, _) in item.as_mapping().unwrap() {
            found.insert((
                p.as_str().unwrap().to_string(),
                m.as_str().unwrap().to_string(),
            ));
        }
    }
    found
}

#[test]
fn openapi_matches_the_router() {
    let src = routes_in_source();
    let doc = routes_in_openapi();
    assert!(
        src.len() > 30,
        "found only {} routes in the source: {src:?}",
        src.len()
    );
    let undocumented: Vec<_> = src.difference(&doc).collect();
    let phantom: Vec<_> = doc.difference(&src).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from openapi.yaml: {undocumented:?}"
    );
    assert!(
        phantom.is_empty(),
        "openapi.yaml documents routes the router lacks: {phantom:?}"
    );
}

#[test]
fn openapi_refs_resolve() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    for line in text.lines() {
        if let Some(i) = line.find("$ref: '#/components/") {
            let r = &line[i + 20..];
            let r = &r[..r.find('\'').unwrap()];
            let mut node = &doc["components"];
            for part in r.split('/') {
                node = &node[part];
            }
            assert!(!node.is_null(), "unresolved $ref #/components/{r}");
        }
    }
}
