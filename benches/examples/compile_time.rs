//! Times `CompiledQuery::compile` on pathological query shapes (the hardening
//! issue's compile-time cases): `cargo run --release --example compile_time`.
use ceql_engine::{CompileOptions, CompiledQuery};
use std::time::Instant;

fn time(label: &str, q: &str) {
    let t = Instant::now();
    let r = CompiledQuery::compile(q, None, CompileOptions::default());
    let what = match r {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("{}: {}", e.code(), e.diagnostic.message),
    };
    println!("{label:<28} {:>9.3}s  {what}", t.elapsed().as_secs_f64());
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(999);
    if std::env::args().nth(2).is_some() {
        time("A ; A ; ...", &format!("SELECT * FROM S WHERE {}", vec!["A"; n].join(" ; ")));
        return;
    }
    time("A + ... (postfix)", &format!("SELECT * FROM S WHERE A{}", "+".repeat(n)));
    time("A ; A ; ...", &format!("SELECT * FROM S WHERE {}", vec!["A"; n].join(" ; ")));
    time("A OR A OR ...", &format!("SELECT * FROM S WHERE {}", vec!["A"; n].join(" OR ")));
    time("A : A : ...", &format!("SELECT * FROM S WHERE {}", vec!["A"; n].join(" : ")));
    let terms = (0..n).map(|i| format!("x > {i}")).collect::<Vec<_>>();
    time("x > 0 OR x > 1 ...", &format!("SELECT * FROM S WHERE A FILTER A[{}]", terms.join(" OR ")));
    time("x + x + ...", &format!("SELECT * FROM S WHERE A FILTER A[{} > 1]", vec!["x"; n].join(" + ")));
    let filters = (0..n / 2).map(|i| format!("A[x > {i}]")).collect::<Vec<_>>();
    time("FILTER A[..] AND A[..] ...", &format!("SELECT * FROM S WHERE A FILTER {}", filters.join(" AND ")));
    let d = 255;
    time("parens 255", &format!("SELECT * FROM S WHERE {}A{}", "(".repeat(d), ")".repeat(d)));
    time(
        "pred parens 254",
        &format!("SELECT * FROM S WHERE A FILTER A[{}x > 1{}]", "(".repeat(d - 1), ")".repeat(d - 1)),
    );
    time("unclosed pred parens 254", &format!("SELECT * FROM S WHERE A FILTER A[{}x > 1", "(".repeat(d - 1)));
    time("NOT NOT ... x > 1", &format!("SELECT * FROM S WHERE A FILTER A[{}x > 1]", "NOT ".repeat(n)));
    let seqs = (0..n / 4).map(|i| format!("(A{i} ; B{i})+")).collect::<Vec<_>>();
    time("(Ai ; Bi)+ ; ...", &format!("SELECT * FROM S WHERE {}", seqs.join(" ; ")));
}
