-- search: rank sections for any text: bm25 plus exact-token, heading and path evidence.
-- params:  :q (required) the user's text, any characters (it is never passed to MATCH as is);
--          :limit rows to return, default 10
-- returns: rank, id, path, heading, trail (JSON array), anchor, level, start_line, end_line,
--          score (higher is better), snippet, body; best first, ties by id. No rows when the
--          text has no usable term.
-- How: the text is split on spaces (json_each); each term becomes a quoted FTS5 phrase, so no
-- input can raise. Stop words are dropped. Candidates are the bm25 top 30 over the cheapest
-- phrases (by rows they can match, within a budget, so common words cost little on a large
-- index) plus the 30 strongest exact-token sections. Each candidate is scored
-- on: bm25 (normalised to the best); exact tokens (case-exact, rare and defining ones count
-- more; one that only names the document counts not); the share of the query its document
-- (path, title) and trail explain; the share its heading explains beyond the document; and
-- the share of its file name the query names. Words match by a five-letter stem prefix
-- ("rolling back" finds "Rollback") and through mdfts_synonyms (env ~ environment).
-- Layout: the steps form a chain, each reading the step before it and at most one or two
-- small ones (the query's words): SQLite copies a common table expression's tree into every
-- place that names it, so a web of references would multiply the time to compile this.
with
q(s) as (
  select substr(replace(replace(replace(cast(coalesce(:q, '') as text),
         char(9), ' '), char(10), ' '), char(13), ' '), 1, 2000)
),
raw(pos, v) as (
  select cast(key as integer), value
  from q, json_each('[' || replace(json_quote(q.s), ' ', '","') || ']')
  where value <> ''
  limit 64
),
-- A term as written, trimmed of quotes, brackets and trailing punctuation (the same rule as
-- mdfts.tokens.normalize), its ASCII lower-case form, and whether it is an exact identifier in
-- the index (anything but a kebab name or a plain code span).
term(pos, t, n, strong) as materialized (
  select pos, t, n, exists (
    select 1 from tokens as tk where tk.norm = n and tk.kind not in ('name', 'code'))
  from (
    select min(pos) as pos, max(t) as t, lower(t) as n
    from (select pos, rtrim(ltrim(v, '"''`([{<'), '"''`)]}>.,:;!?') as t from raw)
    where t <> '' group by lower(t))
),
-- The words of each term as FTS5 sees them (PAYMENTS_DB_URL → payments, db, url).
part(pos, t, n, strong, w, np) as materialized (
  select term.pos, term.t, term.n, term.strong, lower(p.value), count(*) over (partition by term.pos)
  from term, json_each('["' || replace(replace(replace(replace(replace(replace(replace(replace(
      replace(replace(replace(replace(json_quote(term.t), '"', ''), '\', ''),
      ',', '","'), '-', '","'), '_', '","'), '.', '","'), '/', '","'), ':', '","'), '@', '","'),
      '=', '","'), '+', '","'), '#', '","') || '"]') as p
  where p.value <> ''
),
-- Each distinct word: plain (a term of its own, not part of an identifier); docw (may name
-- the document: it comes from a term that is not an exact identifier, as PAYMENTS_DB_URL asks
-- for that token, not for payments.md); a stop word?; df and idf; and its stem: a crude
-- stemmer that drops one plural or verb ending and keeps at most five letters ("variables" →
-- varia, "rolling" → roll). derive.sql stems mdfts_synonyms with the same expression at build
-- time: keep the two equal.
word(w, plain, docw, stop, df, idf, stem, any_content) as materialized (
  select w, plain, docw, stop, df, idf, stem, max(not stop) over ()
  from (
    select w, max(np = 1) as plain, max(not strong) as docw,
      w in (select word from mdfts_stopwords) as stop,
      coalesce((select df from term_df where term = w), 1) as df,
      coalesce((select idf from term_df where term = w), 8.0) as idf,
      substr(case
      when length(w) > 5 and w like '%ies' then substr(w, 1, length(w) - 3)
      when length(w) > 5 and w like '%ing' then substr(w, 1, length(w) - 3)
      when length(w) > 4 and w like '%ed' then substr(w, 1, length(w) - 2)
      when length(w) > 4 and w like '%es' then substr(w, 1, length(w) - 2)
      when length(w) > 3 and w like '%s' and w not like '%ss' then substr(w, 1, length(w) - 1)
      else w end, 1, 5) as stem
    from part group by w)
),
-- Words that carry meaning: not stop words (unless the query is only stop words), with the
-- query's total idf.
key(w, plain, docw, df, idf, stem, total) as materialized (
  select w, plain, docw, df, idf, stem, sum(idf) over ()
  from word where not stop or not any_content
),
-- The forms a key word may take: its stem, and the stems of its synonyms (mdfts_synonyms).
form(w, f, plain, docw, df, idf, total) as materialized (
  select distinct k.w, coalesce(s2.stem, k.stem), k.plain, k.docw, k.df, k.idf, k.total
  from key as k
  left join mdfts_synonyms as s1 on k.plain and s1.stem = k.stem
  left join mdfts_synonyms as s2 on s2.grp = s1.grp
),
-- The FTS5 expression: each useful term as a quoted phrase, plus stem prefixes and synonyms,
-- ORed. Each phrase's cost is the number of sections it can match (from term_df); phrases are
-- taken cheapest first while the total stays within a budget, so a query over a large index
-- never scores half of it for a word like "service". Common words still count as evidence
-- below; they just do not pick candidates.
phrase(p, cost) as (
  select '"' || replace(part.t, '"', '""') || '"', min(k.df)
  from part join (select distinct w, df from form) as k using (w)
  group by part.pos
  union all
  select '"' || f || '"' || case when length(f) >= 4 then '*' else '' end,
    case when length(f) >= 4 then (select coalesce(sum(df), 1) from term_df where term >= f and term < f || '{')
         else coalesce((select df from term_df where term = f), 1) end
  from (select distinct f from form)
  where f not glob '*[^a-z0-9]*' and (length(f) >= 4 or f not in (select w from form))
),
m(expr) as materialized (
  select coalesce(group_concat(p, ' OR '), '""') from (
    select p, cost, sum(cost) over (order by cost, p rows unbounded preceding) as cum
    from (select p, min(cost) as cost from phrase group by p))
  where cum - cost < 2000 + 0.01 * (select cast(value as integer) from mdfts_meta where key = 'sections')
),
fts(id, bm) as materialized (
  select rowid, bm25(sections_fts, 2.0, 2.0, 4.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
  from sections_fts
  where sections_fts match (select expr from m)
  order by 2
  limit 30
),
-- Sections that hold a query term as an exact token, per term; a case-exact match counts
-- double, a rare token more than a common one, and a section that defines the token (in a
-- heading, the first column of a table, or the code span opening an item) more than one
-- that mentions it.
exact_t(id, pos, ev) as materialized (
  select tk.section_id, term.pos,
    max(coalesce(d.idf, 8.0) * (1 + (tk.token = term.t)) * (1 + 0.5 * (tk.source in ('heading', 'definition'))))
  from term
  join tokens as tk on tk.norm = term.n
  left join token_df as d on d.norm = term.n
  where term.n not in (select word from mdfts_stopwords)
  group by tk.section_id, term.pos
),
-- Candidates: the bm25 top 30 and the 30 strongest exact-token sections, with bm25
-- normalised to the best (1.0).
cand(id, bm_n) as materialized (
  select id, coalesce(min(bm) / nullif(min(min(bm)) over (), 0), 0)
  from (
    select id, bm from fts
    union all
    select id, null from (select id from exact_t group by id order by sum(ev) desc, id limit 30))
  group by id
),
-- Each candidate's words, lower-case and space padded, punctuation as spaces: its heading,
-- its trail (ancestors and heading), its document (path and title) and its file name.
feat(id, bm_n, hw, tw, dw, fw, nfile) as materialized (
  select id, bm_n, hw, tw, dw, fw, length(trim(fw)) - length(replace(trim(fw), ' ', ''))
  from (
    select c.id, c.bm_n,
      ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        s.heading, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as hw,
      ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        s.trail, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as tw,
      ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        d.path || ' ' || d.title, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as dw,
      ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        substr(d.path, length(rtrim(d.path, replace(d.path, '/', ''))) + 1), '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as fw
    from cand as c
    join sections as s on s.id = c.id
    join documents as d on d.id = s.document_id)
),
-- Which key word (in any form) each candidate's document, heading, trail and file name hold.
match(id, w, plain, docw, idf, total, bm_n, nfile, in_doc, in_head, in_trail, in_file) as materialized (
  select feat.id, form.w, max(form.plain), max(form.docw), max(form.idf), max(form.total),
    max(feat.bm_n), max(feat.nfile),
    max(instr(dw, ' ' || form.f) > 0), max(instr(hw, ' ' || form.f) > 0),
    max(instr(tw, ' ' || form.f) > 0), max(instr(fw, ' ' || form.w || ' ') > 0)
  from feat, form
  group by feat.id, form.w
),
-- Evidence, as shares of the query's idf: explained by the document or the trail at all
-- (cover); by the heading beyond what the document explains (head); and the share of the file
-- name's words that the query names (file: payments.md is all of "payments",
-- payments-worker.md half of it; the score squares it, so a half match is weak evidence).
evidence(id, bm_n, cover, head, file) as materialized (
  select id, max(bm_n),
    coalesce(sum(case when (docw and in_doc) or (plain and in_trail) then idf end), 0) / nullif(max(total), 0),
    coalesce(sum(case when plain and in_head and not in_doc then idf end), 0) / nullif(max(total), 0),
    coalesce(sum(docw and in_file), 0) * 1.0 / max(nfile)
  from match
  group by id
),
-- A term the document explains (all its words in the path or title, like `search-api` in
-- search-api.md) says which document, not which section: its exact matches do not count.
ex(id, ev) as materialized (
  select d.id, sum(e.ev)
  from (select match.id, part.pos, min(match.in_doc) as in_doc
        from match join part on part.w = match.w
        group by match.id, part.pos) as d
  join exact_t as e on e.id = d.id and e.pos = d.pos
  where not d.in_doc
  group by d.id
),
-- The heading's own words (beyond stop words and the document's words), and the share of them
-- the query names: a heading the query spells out in full beats one it half matches.
hprec(id, prec) as materialized (
  select feat.id, avg(exists (select 1 from form where substr(j.value, 1, length(form.f)) = form.f))
  from feat, json_each('[' || replace(json_quote(trim(feat.hw)), ' ', '","') || ']') as j
  where j.value <> '' and j.value not in (select word from mdfts_stopwords)
    and not instr(feat.dw, ' ' || j.value || ' ')
  group by feat.id
),
ranked(id, score) as (
  select v.id,
    round(1.5 * v.bm_n + 1.0 * coalesce(e.ev / nullif(max(e.ev) over (), 0), 0)
          + 0.5 * v.cover + 0.5 * v.head + 0.5 * coalesce(h.prec, 0) + 1.5 * min(v.file, 1.0) * min(v.file, 1.0), 6)
  from evidence as v
  left join ex as e on e.id = v.id
  left join hprec as h on h.id = v.id
  order by 2 desc, 1
  limit coalesce(nullif(:limit, ''), 10)
)
select
  row_number() over (order by r.score desc, r.id) as rank,
  s.id, s.path, s.heading, s.trail, s.anchor, s.level, s.start_line, s.end_line, r.score,
  coalesce(
    (select snippet(sections_fts, 3, '[', ']', '…', 16) from sections_fts
     where sections_fts match (select expr from m) and rowid = s.id),
    substr(s.text, 1, 120)) as snippet,
  s.body
from ranked as r
join sections as s on s.id = r.id
order by r.score desc, r.id;
