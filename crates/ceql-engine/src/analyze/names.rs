//! Name pass (E0200–E0205, E0208, E0209): builds the schema from the declarations
//! (or from the query when there are none), resolves event types, variables,
//! `SELECT` and `FILTER` names, and computes `types(x)` (docs/language.md#s4-1).

use super::{Absence, AtomEdge, Projection, RCel, RFilter, Resolved, VarId, VarKind, Variables};
use crate::bitset::BitSet;
use crate::schema::{Schema, StreamDef, TypeDef, TypeId};
use crate::value::AttrType;
use ceql_syntax::ast::{self, Cel, CelKind, Filter, QName, SelectList};
use ceql_syntax::{Diagnostic, Span};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

/// Runs the name pass.
pub(super) fn resolve(query: &ast::Query, decls: &[ast::StreamDecl]) -> Result<Resolved, Diagnostic> {
    let schema = if decls.is_empty() { open_schema(query) } else { declared_schema(query, decls)? };
    let aliases = collect_aliases(&query.pattern);
    for (name, span) in &aliases {
        if !schema.types_named(name).is_empty() {
            return Err(Diagnostic::error("E0205", format!("`AS {name}` reuses the name of an event type"), *span)
                .with_label("choose a name that is not an event type of the FROM streams"));
        }
    }
    let mut r = Resolver {
        schema: &schema,
        vars: Variables::default(),
        filter_vars: Vec::new(),
        ref_vars: Vec::new(),
        aliases: &aliases,
    };
    // A trailing `ABSENT(β) FOR d` (placement checked) is not part of the automaton: the
    // positive part is the chain before it, and the absence is resolved on its own.
    let chain = super::absence::seq_chain(&query.pattern);
    let (pattern, trailing) = match chain.last().map(|c| &c.kind) {
        Some(CelKind::Absent(a, Some(_))) if chain.len() > 1 => {
            let positive = r.absent_chain(&chain[..chain.len() - 1])?;
            let span = chain[chain.len() - 1].span;
            let alternatives = a.iter().map(|b| r.absence(b, span)).collect::<Result<_, _>>()?;
            (positive, Some(alternatives))
        }
        _ => (r.cel(&query.pattern)?, None),
    };
    let projection = match &query.select {
        SelectList::Star => Projection::All,
        SelectList::None(_) => Projection::Nothing,
        SelectList::Items(items) => {
            let mut set = BitSet::new();
            for item in items {
                set.insert(r.variable(&item.var)?);
            }
            Projection::Vars(set)
        }
    };
    for m in &query.measures {
        r.reference(&m.agg.var)?;
    }
    let Resolver { vars, filter_vars, ref_vars, .. } = r;
    let capturable = capturable_types(&query.pattern, &schema, &vars);
    let resolved = Resolved { schema, vars, pattern, trailing, projection, capturable, filter_vars, ref_vars };
    // NOT and ABSENT read one event: their filters cannot read other events (E0301, before attributes).
    super::correlation::check_not_filters(&query.pattern)?;
    check_filter_attributes(&query.pattern, &resolved)?;
    super::correlation::check_reference_attributes(query, &resolved)?;
    Ok(resolved)
}

/// Without declarations (docs/language.md#s1-1a): every `FROM` stream accepts every event type named
/// by an atom of the query; attribute types are only known at run time.
///
/// Without `FROM`, the query reads every event: one implicit stream (named ``""``)
/// plus one stream per qualifier `S>T` the query uses, so that `S>T` only matches
/// events whose `stream` is `S` (docs/language.md#s3-3) while `T` matches events of any stream.
fn open_schema(query: &ast::Query) -> Schema {
    let mut type_names = BTreeSet::new();
    collect_atom_names(&query.pattern, &mut type_names);
    let stream_names: Vec<String> = if query.from.is_empty() {
        let mut qualifiers = BTreeSet::new();
        collect_qualifiers(query, &mut qualifiers);
        std::iter::once(String::new()).chain(qualifiers).collect()
    } else {
        unique(query.from.iter().map(|i| i.name.clone()))
    };
    let mut streams = Vec::new();
    let mut types = Vec::new();
    for (si, sname) in stream_names.into_iter().enumerate() {
        for t in &type_names {
            types.push(TypeDef { stream: si as u32, name: t.clone(), attrs: Vec::new(), primary_time: None });
        }
        streams.push(StreamDef { name: sname });
    }
    Schema::new(false, streams, types)
}

/// Stream names used as qualifiers `S>T` anywhere in the query.
fn collect_qualifiers(query: &ast::Query, out: &mut BTreeSet<String>) {
    fn qname(q: &QName, out: &mut BTreeSet<String>) {
        if let Some(s) = &q.stream {
            out.insert(s.name.clone());
        }
    }
    fn filter(f: &Filter, out: &mut BTreeSet<String>) {
        match f {
            Filter::Var { var, .. } => qname(var, out),
            Filter::And(a, b) | Filter::Or(a, b) => {
                filter(a, out);
                filter(b, out);
            }
        }
    }
    fn cel(c: &Cel, out: &mut BTreeSet<String>) {
        match &c.kind {
            CelKind::Atom(q) => qname(q, out),
            CelKind::Not(_) | CelKind::Absent(..) => {
                for a in c.kind.atomics() {
                    qname(&a.name, out);
                    a.filters.iter().for_each(|f| filter(f, out));
                }
            }
            CelKind::Filter(x, f) => {
                cel(x, out);
                filter(f, out);
            }
            CelKind::As(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => cel(x, out),
            CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
                cel(a, out);
                cel(b, out);
            }
        }
    }
    cel(&query.pattern, out);
    if let SelectList::Items(items) = &query.select {
        items.iter().for_each(|i| qname(&i.var, out));
    }
}

fn unique(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.clone())).collect()
}

fn collect_atom_names(c: &Cel, out: &mut BTreeSet<String>) {
    match &c.kind {
        CelKind::Atom(q) => {
            out.insert(q.name.name.clone());
        }
        CelKind::Not(_) | CelKind::Absent(..) => {
            out.extend(c.kind.atomics().iter().map(|a| a.name.name.name.clone()));
        }
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            collect_atom_names(x, out)
        }
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            collect_atom_names(a, out);
            collect_atom_names(b, out);
        }
    }
}

/// With declarations: validates them (E0209), resolves `FROM` (E0200, E0208).
fn declared_schema(query: &ast::Query, decls: &[ast::StreamDecl]) -> Result<Schema, Diagnostic> {
    validate_declarations(decls)?;
    from_streams(query, decls)
}

/// E0209: duplicate streams, event types or attributes; unknown attribute types;
/// more than one `primary_time` per event type.
pub(crate) fn validate_declarations(decls: &[ast::StreamDecl]) -> Result<(), Diagnostic> {
    let mut seen_streams = HashSet::new();
    for d in decls {
        if !seen_streams.insert(d.name.name.as_str()) {
            return Err(Diagnostic::error("E0209", format!("stream `{}` is declared twice", d.name.name), d.name.span));
        }
        let mut seen_types = HashSet::new();
        for e in &d.events {
            if !seen_types.insert(e.name.name.as_str()) {
                return Err(Diagnostic::error(
                    "E0209",
                    format!("event type `{}` is declared twice in stream `{}`", e.name.name, d.name.name),
                    e.name.span,
                ));
            }
            let mut seen_attrs = HashSet::new();
            let mut times = 0;
            for a in &e.attrs {
                if let Some(d) = reserved_attribute("E0209", &a.name) {
                    return Err(d);
                }
                if !seen_attrs.insert(a.name.name.as_str()) {
                    return Err(Diagnostic::error(
                        "E0209",
                        format!("attribute `{}` is declared twice in event type `{}`", a.name.name, e.name.name),
                        a.name.span,
                    ));
                }
                match AttrType::from_decl(&a.ty.name) {
                    None => {
                        return Err(Diagnostic::error(
                            "E0209",
                            format!("unknown attribute type `{}`", a.ty.name),
                            a.ty.span,
                        )
                        .with_label(
                            "expected int, long, integer, double, float, string, str, boolean, bool or primary_time",
                        ))
                    }
                    Some(AttrType::PrimaryTime) => {
                        times += 1;
                        if times > 1 {
                            return Err(Diagnostic::error(
                                "E0209",
                                format!("event type `{}` declares more than one primary_time attribute", e.name.name),
                                a.name.span,
                            ));
                        }
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}

fn from_streams(query: &ast::Query, decls: &[ast::StreamDecl]) -> Result<Schema, Diagnostic> {
    let from: Vec<&ast::StreamDecl> = if query.from.is_empty() {
        if decls.len() != 1 {
            return Err(Diagnostic::error(
                "E0208",
                format!("FROM is omitted but {} streams are declared", decls.len()),
                query.select_span,
            )
            .with_label("name the streams to read with FROM"));
        }
        vec![&decls[0]]
    } else {
        let mut v: Vec<&ast::StreamDecl> = Vec::new();
        for f in &query.from {
            let d = decls.iter().find(|d| d.name.name == f.name).ok_or_else(|| {
                let known: Vec<&str> = decls.iter().map(|d| d.name.name.as_str()).collect();
                Diagnostic::error("E0200", format!("unknown stream `{}`", f.name), f.span)
                    .with_label(format!("declared streams: {}", known.join(", ")))
            })?;
            if !v.iter().any(|x| x.name.name == d.name.name) {
                v.push(d);
            }
        }
        v
    };
    let mut streams = Vec::new();
    let mut types = Vec::new();
    for (si, d) in from.iter().enumerate() {
        for e in &d.events {
            let attrs: Vec<(String, AttrType)> = e
                .attrs
                .iter()
                .map(|a| (a.name.name.clone(), AttrType::from_decl(&a.ty.name).expect("validated above")))
                .collect();
            let primary_time = attrs.iter().position(|(_, t)| *t == AttrType::PrimaryTime);
            types.push(TypeDef { stream: si as u32, name: e.name.name.clone(), attrs, primary_time });
        }
        streams.push(StreamDef { name: d.name.name.clone() });
    }
    Ok(Schema::new(true, streams, types))
}

fn collect_aliases(c: &Cel) -> Vec<(String, Span)> {
    fn go(c: &Cel, out: &mut Vec<(String, Span)>) {
        match &c.kind {
            CelKind::As(x, name) => {
                go(x, out);
                if !out.iter().any(|(n, _)| *n == name.name) {
                    out.push((name.name.clone(), name.span));
                }
            }
            CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => go(x, out),
            CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
                go(a, out);
                go(b, out);
            }
            // `ABSENT(B AS b ...)`: a name for the absent event (docs/language.md#s3-3a).
            CelKind::Absent(a, _) => {
                for name in a.iter().filter_map(|b| b.alias.as_ref()) {
                    if !out.iter().any(|(o, _)| *o == name.name) {
                        out.push((name.name.clone(), name.span));
                    }
                }
            }
            CelKind::Atom(_) | CelKind::Not(_) => {}
        }
    }
    let mut out = Vec::new();
    go(c, &mut out);
    out
}

struct Resolver<'a> {
    schema: &'a Schema,
    vars: Variables,
    filter_vars: Vec<(Span, VarId)>,
    ref_vars: Vec<(Span, VarId)>,
    aliases: &'a [(String, Span)],
}

impl Resolver<'_> {
    fn cel(&mut self, c: &Cel) -> Result<RCel, Diagnostic> {
        Ok(match &c.kind {
            CelKind::Atom(q) => RCel::Atom(self.atom(q)?, c.span),
            CelKind::Not(a) => {
                let edges = self.atom(&a.name)?;
                let filters = a.filters.iter().map(|f| self.filter(f)).collect::<Result<_, _>>()?;
                RCel::Not(edges, filters, c.span)
            }
            CelKind::As(x, name) => {
                let inner = self.cel(x)?;
                let v = self.vars.intern(VarKind::Alias(name.name.clone()));
                RCel::As(Box::new(inner), v)
            }
            CelKind::Filter(x, f) => {
                let inner = self.cel(x)?;
                RCel::Filter(Box::new(inner), self.filter(f)?)
            }
            CelKind::Seq(..) => {
                let chain = super::absence::seq_chain(c);
                if chain.iter().any(|e| matches!(e.kind, CelKind::Absent(..))) {
                    self.absent_chain(&chain)?
                } else {
                    self.plain_seq(c)?
                }
            }
            CelKind::Absent(..) => unreachable!("check_placement keeps ABSENT inside `;` chains"),
            CelKind::Contiguous(a, b) => RCel::Contiguous(Box::new(self.cel(a)?), Box::new(self.cel(b)?)),
            CelKind::Or(a, b) => RCel::Or(Box::new(self.cel(a)?), Box::new(self.cel(b)?), c.span),
            CelKind::And(a, b) => RCel::And(Box::new(self.cel(a)?), Box::new(self.cel(b)?), c.span),
            CelKind::Plus(x) => RCel::Plus(Box::new(self.cel(x)?), c.span),
            CelKind::ContiguousPlus(x) => RCel::ContiguousPlus(Box::new(self.cel(x)?), c.span),
        })
    }

    /// A `;` chain without `ABSENT`, resolved with the shape it was parsed with (the chain
    /// is scanned once, at its root, so a long chain costs linear time).
    fn plain_seq(&mut self, c: &Cel) -> Result<RCel, Diagnostic> {
        match &c.kind {
            CelKind::Seq(a, b) => Ok(RCel::Seq(Box::new(self.plain_seq(a)?), Box::new(self.plain_seq(b)?))),
            _ => self.cel(c),
        }
    }

    /// A `;` chain (with or without `ABSENT` elements), folded from the left: the absences between two
    /// patterns guard the gap between them (placement was checked: the chain starts and
    /// ends with a pattern).
    fn absent_chain(&mut self, chain: &[&Cel]) -> Result<RCel, Diagnostic> {
        let mut acc = self.cel(chain[0])?;
        let mut pending = Vec::new();
        for e in &chain[1..] {
            if let CelKind::Absent(a, _) = &e.kind {
                // `ABSENT(B OR C)` is `ABSENT(B) ; ABSENT(C)`: one absence per alternative.
                for b in a {
                    let absence = self.absence(b, e.span)?;
                    pending.push(absence);
                }
                continue;
            }
            let next = Box::new(self.cel(e)?);
            acc = if pending.is_empty() {
                RCel::Seq(Box::new(acc), next)
            } else {
                RCel::SeqAbsent(Box::new(acc), std::mem::take(&mut pending), next)
            };
        }
        debug_assert!(pending.is_empty(), "a chain ends with a pattern");
        Ok(acc)
    }

    /// One alternative of `ABSENT(...)` (`span`: the whole `ABSENT(...)`), resolved.
    fn absence(&mut self, a: &ast::Atomic, span: Span) -> Result<Absence, Diagnostic> {
        let edges = self.absent_edges(a)?;
        let filters = a.filters.iter().map(|f| self.filter(f)).collect::<Result<_, _>>()?;
        Ok(Absence { edges, filters, span })
    }

    /// The edges of an absent atom: as [`Resolver::atom`], and its `AS` name, if any,
    /// binds the absent event too (in its own filters only: docs/language.md#s3-3a).
    fn absent_edges(&mut self, a: &ast::Atomic) -> Result<Vec<AtomEdge>, Diagnostic> {
        let mut edges = self.atom(&a.name)?;
        if let Some(x) = &a.alias {
            let v = self.vars.intern(VarKind::Alias(x.name.clone()));
            edges.iter_mut().for_each(|e| e.vars.insert(v));
        }
        Ok(edges)
    }

    /// The `S>T` pairs an atom captures and the variables each capture binds.
    fn atom(&mut self, q: &QName) -> Result<Vec<AtomEdge>, Diagnostic> {
        let types = self.atom_types(q)?;
        let tvar = self.vars.intern(VarKind::Type(q.name.name.clone()));
        Ok(types
            .into_iter()
            .map(|ty| {
                let td = &self.schema.types[ty as usize];
                let mut vars = BitSet::new();
                vars.insert(tvar);
                let qvar = self.vars.intern(VarKind::Qualified(td.stream, td.name.clone()));
                if q.stream.is_some() {
                    self.vars.mark_written(qvar);
                }
                vars.insert(qvar);
                AtomEdge { ty, vars }
            })
            .collect())
    }

    fn atom_types(&self, q: &QName) -> Result<Vec<TypeId>, Diagnostic> {
        match &q.stream {
            None => {
                let ids = self.schema.types_named(&q.name.name);
                if ids.is_empty() {
                    return Err(Diagnostic::error("E0201", format!("unknown event type `{}`", q.name.name), q.span)
                        .with_label(format!(
                            "not declared in any stream of FROM (declared: {})",
                            self.schema.type_names().join(", ")
                        )));
                }
                Ok(ids.to_vec())
            }
            Some(s) => Ok(vec![self.qualified(s, &q.name.name, q.span)?]),
        }
    }

    fn qualified(&self, stream: &ast::Ident, name: &str, span: Span) -> Result<TypeId, Diagnostic> {
        let Some(sid) = self.schema.stream_id(&stream.name) else {
            return Err(Diagnostic::error(
                "E0202",
                format!("`{}>{name}`: stream `{}` is not in FROM", stream.name, stream.name),
                span,
            ));
        };
        self.schema.type_id(sid, name).ok_or_else(|| {
            Diagnostic::error("E0202", format!("stream `{}` does not declare event type `{name}`", stream.name), span)
        })
    }

    /// A variable named in `SELECT` or `FILTER` (E0203, E0202).
    fn variable(&mut self, q: &QName) -> Result<VarId, Diagnostic> {
        if let Some(s) = &q.stream {
            let ty = self.qualified(s, &q.name.name, q.span)?;
            let td = &self.schema.types[ty as usize];
            let v = self.vars.intern(VarKind::Qualified(td.stream, td.name.clone()));
            self.vars.mark_written(v);
            return Ok(v);
        }
        let name = &q.name.name;
        if self.aliases.iter().any(|(n, _)| n == name) {
            return Ok(self.vars.intern(VarKind::Alias(name.clone())));
        }
        if !self.schema.types_named(name).is_empty() {
            return Ok(self.vars.intern(VarKind::Type(name.clone())));
        }
        Err(Diagnostic::error("E0203", format!("unknown variable `{name}`"), q.span)
            .with_label("neither an event type of the FROM streams nor an AS name of the query"))
    }

    /// A variable read by `y.attr` or an aggregate (E0203), recorded by its span.
    fn reference(&mut self, id: &ast::Ident) -> Result<VarId, Diagnostic> {
        let v = self.variable(&QName { stream: None, name: id.clone(), span: id.span })?;
        self.ref_vars.push((id.span, v));
        Ok(v)
    }

    fn filter(&mut self, f: &Filter) -> Result<RFilter, Diagnostic> {
        Ok(match f {
            Filter::Var { var, pred, span } => {
                let v = self.variable(var)?;
                self.filter_vars.push((*span, v));
                // The variables read through `y.attr` and aggregates (E0203).
                let mut refs = Vec::new();
                pred.for_each_expr(&mut |e| match &e.kind {
                    ast::ExprKind::Ref { var, .. } => refs.push(var),
                    ast::ExprKind::Agg(a) => refs.push(&a.var),
                    _ => {}
                });
                for id in refs {
                    self.reference(id)?;
                }
                RFilter::Var { var: v, pred: Arc::new(ast::Pred::clone(pred)) }
            }
            Filter::And(a, b) => RFilter::And(Box::new(self.filter(a)?), Box::new(self.filter(b)?)),
            Filter::Or(a, b) => RFilter::Or(Box::new(self.filter(a)?), Box::new(self.filter(b)?)),
        })
    }
}

/// `types(x)` for every variable (docs/language.md#s4-1).
fn capturable_types(pattern: &Cel, schema: &Schema, vars: &Variables) -> Vec<Vec<TypeId>> {
    let mut out: Vec<BTreeSet<TypeId>> = vec![BTreeSet::new(); vars.len()];
    for (v, types) in out.iter_mut().enumerate() {
        match vars.kind(v) {
            VarKind::Type(t) => types.extend(schema.types_named(t).iter().copied()),
            VarKind::Qualified(s, t) => types.extend(schema.type_id(*s, t)),
            VarKind::Alias(_) | VarKind::Iteration(_) => {}
        }
    }
    fn atoms_outside_not(c: &Cel, schema: &Schema, acc: &mut BTreeSet<TypeId>) {
        match &c.kind {
            CelKind::Atom(q) => match &q.stream {
                None => acc.extend(schema.types_named(&q.name.name).iter().copied()),
                Some(s) => {
                    let sid = schema.stream_id(&s.name).unwrap_or(0);
                    acc.extend(schema.type_id(sid, &q.name.name));
                }
            },
            CelKind::Not(_) | CelKind::Absent(..) => {}
            CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
                atoms_outside_not(x, schema, acc)
            }
            CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
                atoms_outside_not(a, schema, acc);
                atoms_outside_not(b, schema, acc);
            }
        }
    }
    fn aliases(c: &Cel, schema: &Schema, vars: &Variables, out: &mut [BTreeSet<TypeId>]) {
        match &c.kind {
            CelKind::As(x, name) => {
                if let Some(v) = vars.find(&VarKind::Alias(name.name.clone())) {
                    let mut acc = BTreeSet::new();
                    atoms_outside_not(x, schema, &mut acc);
                    out[v].extend(acc);
                }
                aliases(x, schema, vars, out);
            }
            CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => aliases(x, schema, vars, out),
            CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
                aliases(a, schema, vars, out);
                aliases(b, schema, vars, out);
            }
            CelKind::Absent(alternatives, _) => {
                for a in alternatives {
                    if let Some(v) = a.alias.as_ref().and_then(|x| vars.find(&VarKind::Alias(x.name.clone()))) {
                        let ids: Vec<TypeId> = match &a.name.stream {
                            None => schema.types_named(&a.name.name.name).to_vec(),
                            Some(s) => schema
                                .stream_id(&s.name)
                                .and_then(|sid| schema.type_id(sid, &a.name.name.name))
                                .into_iter()
                                .collect(),
                        };
                        out[v].extend(ids);
                    }
                }
            }
            CelKind::Atom(_) | CelKind::Not(_) => {}
        }
    }
    aliases(pattern, schema, vars, &mut out);
    out.into_iter().map(|s| s.into_iter().collect()).collect()
}

/// The error for an attribute named like an input field that is not an attribute
/// (`type`, `stream`: docs/language.md#s1-2), which would otherwise read as absent and
/// never match. `code` is the clause's name error.
pub(super) fn reserved_attribute(code: &'static str, id: &ast::Ident) -> Option<Diagnostic> {
    crate::is_reserved_field(&id.name).then(|| {
        Diagnostic::error(code, format!("`{}` is not an attribute: it names the event's {}", id.name, id.name), id.span)
            .with_label(match id.name.as_str() {
                "type" => "the event type is matched by the formula itself (write `A OR B`, or `(A OR B) AS x`)",
                _ => "the stream is matched by the formula itself (write `S>T`)",
            })
    })
}

/// E0204: `type` and `stream` are not attributes; with declarations, every
/// attribute of `x[P]` must be declared by at least one type `x` can capture.
fn check_filter_attributes(pattern: &Cel, r: &Resolved) -> Result<(), Diagnostic> {
    let mut err = None;
    super::typing::for_each_filter_term(pattern, &mut |_, pred| {
        super::typing::for_each_attr(pred, &mut |id| {
            if err.is_none() {
                err = reserved_attribute("E0204", id);
            }
        });
    });
    if err.is_some() || !r.schema.declared {
        return err.map_or(Ok(()), Err);
    }
    super::typing::for_each_filter_term(pattern, &mut |span, pred| {
        if err.is_some() {
            return;
        }
        let v = r.filter_var(span);
        let types = &r.capturable[v];
        super::typing::for_each_attr(pred, &mut |id| {
            if err.is_none() && !types.iter().any(|&t| r.schema.types[t as usize].attr_type(&id.name).is_some()) {
                let names: Vec<String> = types.iter().map(|&t| r.schema.type_display(t)).collect();
                err =
                    Some(Diagnostic::error("E0204", format!("unknown attribute `{}`", id.name), id.span).with_label(
                        format!("not declared by any type this variable can capture ({})", names.join(", ")),
                    ));
            }
        });
    });
    err.map_or(Ok(()), Err)
}
