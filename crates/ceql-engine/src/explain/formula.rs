//! The formula after filter push-down (reference §5.1, §5.2), printed in CEQL
//! syntax: a filter `x[P]` moves onto every atom whose capturing transition binds
//! `x` (the same transitions the automaton construction conjoins `P` to), and
//! `ψ FILTER θ1 OR θ2` becomes `ψ[θ1] OR ψ[θ2]`.

use super::labels::{conjunction, type_label, var_name};
use crate::analyze::{AtomEdge, RCel, RFilter, VarId};
use crate::query::CompiledQuery;

/// Longest formula printed; a longer one (nested `FILTER ... OR ...` copies the
/// filtered formula) is cut with a note.
const MAX_CHARS: usize = 20_000;

/// Binding powers of §2.3 (an atom binds tightest).
const ATOM: u8 = 100;
const POSTFIX: u8 = 60;
const SEQ: u8 = 50;
const CONTIGUOUS: u8 = 40;
const AND: u8 = 35;
const OR: u8 = 30;

/// A filter of an enclosing `FILTER`, waiting for the atoms that bind its variable.
struct Pending {
    var: VarId,
    text: String,
    /// `AS` variables entered below the `FILTER` start here in `Printer::aliases`:
    /// only those are inside the filtered formula.
    aliases_from: usize,
}

struct Printer<'a> {
    q: &'a CompiledQuery,
    pending: Vec<Pending>,
    aliases: Vec<VarId>,
    chars: usize,
}

/// The normalized formula of `q`.
pub(super) fn normalized(q: &CompiledQuery) -> String {
    let mut p = Printer { q, pending: Vec::new(), aliases: Vec::new(), chars: 0 };
    let (mut text, power) = p.print(&q.plan.pattern);
    if let Some((alternatives, nanos)) = &q.plan.trailing {
        // The trailing absence is not in the automaton: the deadline queue reads it.
        let absent: Vec<String> = alternatives.iter().map(|x| p.negated(&x.edges, &x.filters)).collect();
        let absent = absent.join(" OR ");
        text = format!("{} ; ABSENT({absent}) FOR {nanos} ns", operand((text, power), SEQ + 1));
    }
    if text.chars().count() > MAX_CHARS {
        let cut: String = text.chars().take(MAX_CHARS).collect();
        return format!("{cut} … (cut at {MAX_CHARS} characters)");
    }
    text
}

/// A filter in disjunctive normal form: alternatives of conjunctions of `x[P]`.
fn dnf(f: &RFilter) -> Vec<Vec<(VarId, String)>> {
    match f {
        RFilter::Var { var, pred } => vec![vec![(*var, ceql_syntax::pred_to_string(pred))]],
        // Tested per valuation, not pushed down: TRUE here.
        RFilter::Residual => vec![Vec::new()],
        RFilter::Or(a, b) => {
            let mut out = dnf(a);
            out.extend(dnf(b));
            out
        }
        RFilter::And(a, b) => {
            let (left, right) = (dnf(a), dnf(b));
            let mut out = Vec::with_capacity(left.len() * right.len());
            for l in &left {
                for r in &right {
                    out.push(l.iter().chain(r).cloned().collect());
                }
            }
            out
        }
    }
}

/// `text` as an operand that needs binding power `min`.
fn operand((text, power): (String, u8), min: u8) -> String {
    if power < min {
        format!("({text})")
    } else {
        text
    }
}

impl Printer<'_> {
    fn print(&mut self, c: &RCel) -> (String, u8) {
        if self.chars > MAX_CHARS {
            return ("…".to_string(), ATOM);
        }
        let printed = match c {
            RCel::Atom(edges, _) => self.atom(edges, &[]),
            RCel::Not(edges, filters, _) => (format!("NOT({})", self.negated(edges, filters)), ATOM),
            RCel::As(x, v) => {
                self.aliases.push(*v);
                let inner = self.print(x);
                self.aliases.pop();
                (format!("{} AS {}", operand(inner, POSTFIX), var_name(self.q, *v)), POSTFIX)
            }
            RCel::Filter(x, f) => {
                let mut alternatives = Vec::new();
                for conj in dnf(f) {
                    let n = conj.len();
                    for (var, text) in conj {
                        self.pending.push(Pending { var, text, aliases_from: self.aliases.len() });
                    }
                    alternatives.push(self.print(x));
                    self.pending.truncate(self.pending.len() - n);
                }
                if alternatives.len() == 1 {
                    // One conjunction: its filters moved onto the atoms, nothing is left here.
                    return alternatives.pop().expect("one alternative");
                }
                // Each copy parenthesised (unless one event), so that the copies read apart.
                let parts: Vec<String> = alternatives.into_iter().map(|p| operand(p, POSTFIX)).collect();
                (parts.join(" OR "), OR)
            }
            RCel::Seq(a, b) => self.infix(a, b, " ; ", SEQ),
            RCel::SeqAbsent(a, absences, b) => {
                let mut op = String::from(" ; ");
                for x in absences {
                    op += &format!("ABSENT({}) ; ", self.negated(&x.edges, &x.filters));
                }
                self.infix(a, b, &op, SEQ)
            }
            RCel::Contiguous(a, b) => self.infix(a, b, " : ", CONTIGUOUS),
            RCel::Or(a, b, _) => self.infix(a, b, " OR ", OR),
            RCel::And(a, b, _) => self.infix(a, b, " AND ", AND),
            RCel::Plus(x, _) => (format!("{}+", operand(self.print(x), POSTFIX)), POSTFIX),
            RCel::ContiguousPlus(x, _) => (format!("{}:+", operand(self.print(x), POSTFIX)), POSTFIX),
        };
        self.counted(printed)
    }

    fn counted(&mut self, printed: (String, u8)) -> (String, u8) {
        self.chars += printed.0.len();
        printed
    }

    /// A left-associative infix operator of power `power`.
    /// The operand of `NOT(...)` or `ABSENT(...)`: the atom with its filters, one
    /// alternative per conjunction of their disjunctive normal form.
    fn negated(&mut self, edges: &[AtomEdge], filters: &[RFilter]) -> String {
        // An enclosing FILTER binds through capturing transitions only: a NOT or ABSENT
        // atom captures nothing, so the pending filters do not apply to it.
        let pending = std::mem::take(&mut self.pending);
        let text = self.negated_atom(edges, filters);
        self.pending = pending;
        text
    }

    fn negated_atom(&mut self, edges: &[AtomEdge], filters: &[RFilter]) -> String {
        let mut alternatives = vec![Vec::new()];
        for f in filters {
            let mut next = Vec::new();
            for a in &alternatives {
                for d in dnf(f) {
                    next.push([a.clone(), d].concat());
                }
            }
            alternatives = next;
        }
        let inner: Vec<String> = alternatives.iter().map(|conj| self.atom(edges, conj).0).collect();
        inner.join(" OR ")
    }

    fn infix(&mut self, a: &RCel, b: &RCel, op: &str, power: u8) -> (String, u8) {
        let left = operand(self.print(a), power);
        let right = operand(self.print(b), power + 1);
        (format!("{left}{op}{right}"), power)
    }

    /// An atom with the pending filters on its variables, plus `extra` (a `NOT`'s
    /// own filters). With several streams whose filters differ, one alternative per
    /// stream.
    fn atom(&self, edges: &[AtomEdge], extra: &[(VarId, String)]) -> (String, u8) {
        let per_edge: Vec<(String, Vec<&str>)> = edges
            .iter()
            .map(|e| {
                let mut texts: Vec<&str> = Vec::new();
                let applies = |var: VarId, from: usize| e.vars.contains(var) || self.aliases[from..].contains(&var);
                let found = self
                    .pending
                    .iter()
                    .filter(|p| applies(p.var, p.aliases_from))
                    .map(|p| p.text.as_str())
                    .chain(extra.iter().filter(|(v, _)| e.vars.contains(*v)).map(|(_, t)| t.as_str()));
                for t in found {
                    if !texts.contains(&t) {
                        texts.push(t);
                    }
                }
                (type_label(self.q, e.ty), texts)
            })
            .collect();
        let with = |name: &str, texts: &[&str]| {
            if texts.is_empty() {
                name.to_string()
            } else {
                format!("{name}[{}]", conjunction(texts))
            }
        };
        let same = per_edge.windows(2).all(|w| w[0].1 == w[1].1);
        match per_edge.as_slice() {
            [(name, texts)] => (with(name, texts), ATOM),
            [(_, texts), ..] if same => {
                let plain = &self.q.plan.schema.types[edges[0].ty as usize].name;
                (with(plain, texts), ATOM)
            }
            many => {
                let parts: Vec<String> = many.iter().map(|(n, t)| with(n, t)).collect();
                (format!("({})", parts.join(" OR ")), ATOM)
            }
        }
    }
}
