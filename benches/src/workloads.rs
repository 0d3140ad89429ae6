//! The workloads of the CORE paper's experiments (§6), defined once for the
//! criterion benches, the report binary and `bench.py`'s documentation.

use crate::Workload;

/// Events per synthetic workload.
pub const EVENTS: usize = 1_000_000;

/// A synthetic workload: a query over a seeded uniform stream.
pub struct Synthetic {
    /// Short name (`seq3_w100`, `no_output_w50`, `k3`, ...).
    pub name: String,
    /// The CEQL query.
    pub query: String,
    /// The stream.
    pub stream: Workload,
    /// Events to use when every match is enumerated (iteration makes the output
    /// exponential in the window, so K3/K5 are enumerated on a prefix).
    pub full_events: usize,
}

fn types(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

fn noise() -> Vec<String> {
    (1..=6).map(|i| format!("B{i}")).collect()
}

/// Names of every synthetic workload.
pub fn synthetic_names() -> Vec<String> {
    let mut v: Vec<String> = [3, 5, 7, 9].iter().map(|n| format!("seq{n}_w100")).collect();
    v.extend([50u64, 100, 150, 200, 10_000, 1_000_000].iter().map(|w| format!("no_output_w{w}")));
    v.extend(["k3", "k5", "d3", "d5"].iter().map(|s| s.to_string()));
    v
}

/// The synthetic workload `name`, generating only its stream.
pub fn synthetic(name: &str) -> Option<Synthetic> {
    if let Some(n) =
        name.strip_prefix("seq").and_then(|r| r.strip_suffix("_w100")).and_then(|n| n.parse::<usize>().ok())
    {
        let t = Workload::sequence_types(n);
        return Some(Synthetic {
            name: name.to_string(),
            query: crate::sequence_query(n, 100),
            stream: Workload::uniform(&types(&t), EVENTS, n as u64),
            full_events: EVENTS,
        });
    }
    if let Some(w) = name.strip_prefix("no_output_w").and_then(|w| w.parse::<u64>().ok()) {
        let t: Vec<String> = ["A1", "A2"].iter().map(|s| s.to_string()).chain(noise()).collect();
        return Some(Synthetic {
            name: name.to_string(),
            query: crate::sequence_query(3, w),
            stream: Workload::uniform(&types(&t), EVENTS, 7),
            full_events: EVENTS,
        });
    }
    iteration_and_disjunction().into_iter().find(|w| w.name == name)
}

/// `A1 ; ... ; An WITHIN 100 EVENTS` for n = 3, 5, 7, 9 over A1..An, B1..B6.
pub fn sequences() -> Vec<Synthetic> {
    [3, 5, 7, 9]
        .into_iter()
        .map(|n| {
            let t = Workload::sequence_types(n);
            Synthetic {
                name: format!("seq{n}_w100"),
                query: crate::sequence_query(n, 100),
                stream: Workload::uniform(&types(&t), EVENTS, n as u64),
                full_events: EVENTS,
            }
        })
        .collect()
}

/// `A1 ; A2 ; A3` over a stream where A3 never occurs, for several windows.
pub fn no_output() -> Vec<Synthetic> {
    let t: Vec<String> = ["A1", "A2"].iter().map(|s| s.to_string()).chain(noise()).collect();
    [50u64, 100, 150, 200, 10_000, 1_000_000]
        .into_iter()
        .map(|w| Synthetic {
            name: format!("no_output_w{w}"),
            query: crate::sequence_query(3, w),
            stream: Workload::uniform(&types(&t), EVENTS, 7),
            full_events: EVENTS,
        })
        .collect()
}

/// Iteration (K3 = `A1 ; A2+ ; A3`, K5 = `A1 ; A2+ ; A3 ; A4+ ; A5`) and
/// disjunction (D3 = `A1 ; (A2 OR A2p) ; A3`, D5 adds `(A4 OR A4p) ; A5`), W = 100.
pub fn iteration_and_disjunction() -> Vec<Synthetic> {
    let mk = |name: &str, pattern: &str, extra: &[&str], n: usize, full: usize| {
        let t: Vec<String> =
            (1..=n).map(|i| format!("A{i}")).chain(extra.iter().map(|s| s.to_string())).chain(noise()).collect();
        Synthetic {
            name: name.to_string(),
            query: format!("SELECT * FROM S WHERE {pattern} WITHIN 100 EVENTS"),
            stream: Workload::uniform(&types(&t), EVENTS, 11),
            full_events: full,
        }
    };
    vec![
        mk("k3", "A1 ; A2+ ; A3", &[], 3, 100_000),
        mk("k5", "A1 ; A2+ ; A3 ; A4+ ; A5", &[], 5, 100_000),
        mk("d3", "A1 ; (A2 OR A2p) ; A3", &["A2p"], 3, EVENTS),
        mk("d5", "A1 ; (A2 OR A2p) ; A3 ; (A4 OR A4p) ; A5", &["A2p", "A4p"], 5, EVENTS),
    ]
}

/// Q1–Q7 of the CORE paper's appendix C, 30-second windows on `stock_time`.
/// Q7 is described there only as "SELL; (BUY OR SELL)+; SELL"; here the iterated
/// events are the large (volume ≥ 5000) ORCL trades between an MSFT and an AMAT sell
/// (with every ORCL trade, the output is too large to enumerate: 2^k subsets).
pub fn stock_queries() -> Vec<(&'static str, String)> {
    let seq = "(SELL as msft; BUY as oracle; BUY as csco; SELL as amat)";
    let dis = "(SELL as msft; (BUY OR SELL) as oracle; (BUY OR SELL) as csco; SELL as amat)";
    let names = "msft[name = 'MSFT'] AND oracle[name = 'ORCL'] AND csco[name = 'CSCO'] AND amat[name = 'AMAT']";
    let prices = "msft[name = 'MSFT'] AND msft[price > 26.0] AND oracle[name = 'ORCL'] AND oracle[price > 11.14] \
                  AND csco[name = 'CSCO'] AND amat[name = 'AMAT'] AND amat[price >= 18.92]";
    let w = "WITHIN 30000 [stock_time]";
    let part = "PARTITION BY [volume] WITHIN 30000 [stock_time] CONSUME BY ANY";
    vec![
        ("q1", format!("SELECT * FROM S WHERE {seq} FILTER {names} {w}")),
        ("q2", format!("SELECT * FROM S WHERE {seq} FILTER {prices} {w}")),
        ("q3", format!("SELECT * FROM S WHERE {seq} FILTER {names} {part}")),
        ("q4", format!("SELECT * FROM S WHERE {dis} FILTER {names} {w}")),
        ("q5", format!("SELECT * FROM S WHERE {dis} FILTER {prices} {w}")),
        ("q6", format!("SELECT * FROM S WHERE {dis} FILTER {names} {part}")),
        (
            "q7",
            format!(
                "SELECT * FROM S WHERE (SELL as msft; (BUY OR SELL)+ as mid; SELL as amat) \
                 FILTER msft[name = 'MSFT'] AND mid[name = 'ORCL' AND volume >= 5000] AND amat[name = 'AMAT'] {w}"
            ),
        ),
    ]
}

/// Issue 16's queries 1, 3 and 4 (predicates between events, docs/design/correlation.md)
/// over the stock stream at windows of W = 100, 1,000 and 10,000 events (as `benches/bench.py`'s
/// `corr_*` rows): (name, query).
pub fn correlation_queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in [100, 1_000, 10_000] {
        out.push((
            format!("q1_w{w}"),
            format!(
                "SELECT * FROM S WHERE (BUY OR SELL) AS a ; (BUY OR SELL) AS b ; (BUY OR SELL) AS c \
                 FILTER a[name = 'INTC'] AND b[name = 'QQQ'] AND c[name = 'RIMM'] AND a[price < b.price] \
                 AND b[price < c.price] WITHIN {w} EVENTS"
            ),
        ));
        out.push((
            format!("q3_w{w}"),
            format!(
                "SELECT * FROM S WHERE SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER b[price > s.price] \
                 AND e[price < s.price] PARTITION BY [name] WITHIN {w} EVENTS"
            ),
        ));
        out.push((
            format!("q4_w{w}"),
            format!(
                "SELECT * FROM S WHERE (BUY AS b)+ FILTER b[price > PREV(price)] PARTITION BY [name] \
                 WITHIN {w} EVENTS"
            ),
        ));
    }
    out
}
