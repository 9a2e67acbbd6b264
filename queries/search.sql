-- search: rank sections for any text: bm25 plus exact-token, heading and path evidence.
-- params:  :q (required) the user's text, any characters (it is never passed to MATCH as is);
--          :limit rows to return, default 10
-- returns: rank, id, path, heading, trail (JSON array), anchor, level, start_line, end_line,
--          score (higher is better), snippet, body; best first, ties by id. No rows when the
--          text has no usable term.
-- How: the text is split on spaces (json_each); each term becomes a quoted FTS5 phrase, so no
-- input can raise. Stop words are dropped. Candidates are the bm25 top 100 over the cheapest
-- phrases (by rows they can match, within a budget, so common words cost little on a large
-- index) plus the sections holding a query term as an exact token. Each candidate is scored
-- on: bm25 (normalised to the best); exact tokens (case-exact, rare and defining ones count
-- more; one that only names the document counts not); the share of the query its document
-- (path, title) and trail explain; the share its heading explains beyond the document; and
-- the share of its file name the query names. Words match by a five-letter stem prefix
-- ("rolling back" finds "Rollback") and through mdfts_synonyms (env ~ environment).
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
-- mdfts.tokens.normalize), and its ASCII lower-case form.
trimmed(pos, t) as (
  select pos, rtrim(ltrim(v, '"''`([{<'), '"''`)]}>.,:;!?') from raw
),
term(pos, t, n) as materialized (
  select min(pos), max(t), lower(t) from trimmed where t <> '' group by lower(t)
),
-- The words of each term as FTS5 sees them (PAYMENTS_DB_URL → payments, db, url).
part(pos, w, np) as (
  select term.pos, lower(p.value), count(*) over (partition by term.pos)
  from term, json_each('["' || replace(replace(replace(replace(replace(replace(replace(replace(
      replace(replace(replace(replace(json_quote(term.t), '"', ''), '\', ''),
      ',', '","'), '-', '","'), '_', '","'), '.', '","'), '/', '","'), ':', '","'), '@', '","'),
      '=', '","'), '+', '","'), '#', '","') || '"]') as p
  where p.value <> ''
),
n_sections(n) as (
  select cast(value as integer) from mdfts_meta where key = 'sections'
),
-- Query words, each with its stem: a crude stemmer that drops one plural or verb ending and
-- keeps at most five letters ("variables" → varia, "rolling" → roll). derive.sql stems
-- mdfts_synonyms with the same expression at build time: keep the two equal.
stemmed(w, plain, stem) as materialized (
  select w, max(np = 1), substr(case
      when length(w) > 5 and w like '%ies' then substr(w, 1, length(w) - 3)
      when length(w) > 5 and w like '%ing' then substr(w, 1, length(w) - 3)
      when length(w) > 4 and w like '%ed' then substr(w, 1, length(w) - 2)
      when length(w) > 4 and w like '%es' then substr(w, 1, length(w) - 2)
      when length(w) > 3 and w like '%s' and w not like '%ss' then substr(w, 1, length(w) - 1)
      else w end, 1, 5)
  from part group by w
),
word(w, plain, stop, df, idf, stem) as materialized (
  select w, plain,
    w in (select word from mdfts_stopwords),
    coalesce((select df from term_df where term = w), 1),
    coalesce((select idf from term_df where term = w), 8.0),
    stem
  from stemmed
),
-- Words that carry meaning: not stop words (unless the query is only stop words). A plain
-- word was a term of its own; the parts of an identifier (PAYMENTS_DB_URL) are not plain.
key(w, plain, df, idf, stem, docw) as materialized (
  select w, plain, df, idf, stem,
    -- a word may name the document (path, title) unless it only comes from a term that is an
    -- exact identifier in the index: PAYMENTS_DB_URL asks for that token, not for payments.md
    exists (select 1 from part where part.w = word.w and not exists (
      select 1 from term join tokens as tk on tk.norm = term.n
      where term.pos = part.pos and tk.kind not in ('name', 'code')))
  from word
  where not stop or not exists (select 1 from word where not stop)
),
key_total(idf) as materialized (select coalesce(sum(idf), 0) from key),
-- The forms a key word may take: its stem, and the stems of its synonyms (mdfts_synonyms).
form(w, f) as materialized (
  select w, stem from key
  union
  select k.w, s2.stem from key as k
  join mdfts_synonyms as s1 on s1.stem = k.stem
  join mdfts_synonyms as s2 on s2.grp = s1.grp
  where k.plain
),
-- The FTS5 expression: each useful term as a quoted phrase, plus stem prefixes and synonyms,
-- ORed. Each phrase's cost is the number of sections it can match (from term_df); phrases are
-- taken cheapest first while the total stays within a budget, so a query over a large index
-- never scores half of it for a word like "service". Common words still count as evidence
-- below; they just do not pick candidates.
phrase(p, cost) as (
  select '"' || replace(term.t, '"', '""') || '"',
    (select min(key.df) from part join key using (w) where part.pos = term.pos)
  from term
  where exists (select 1 from part join key using (w) where part.pos = term.pos)
  union all
  select '"' || f || '"' || case when length(f) >= 4 then '*' else '' end,
    case when length(f) >= 4 then (select coalesce(sum(df), 1) from term_df where term >= f and term < f || '{')
         else coalesce((select df from term_df where term = f), 1) end
  from (select distinct f from form)
  where f not glob '*[^a-z0-9]*' and (length(f) >= 4 or f not in (select w from key))
),
chosen(p) as (
  select p from (
    select p, cost, sum(cost) over (order by cost, p rows unbounded preceding) as cum
    from (select p, min(cost) as cost from phrase group by p))
  where cum - cost < 2000 + 0.01 * (select n from n_sections)
),
m(expr) as materialized (
  select coalesce(group_concat(p, ' OR '), '""') from chosen
),
fts(id, bm) as materialized (
  select rowid, bm25(sections_fts, 2.0, 2.0, 4.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
  from sections_fts
  where sections_fts match (select expr from m)
  order by 2
  limit 50
),
-- Sections that hold a query term as an exact token, per term; a case-exact match counts
-- double, a rare token more than a common one, and a section that defines the token (in a
-- heading, the first column of a table, or the code span opening an item) more than one
-- that mentions it.
exact_t(id, pos, ev) as materialized (
  select tk.section_id as id, term.pos as pos,
    max(coalesce(d.idf, 8.0) * (1 + (tk.token = term.t)) * (1 + 0.5 * (tk.source in ('heading', 'definition'))))
  from term
  join tokens as tk on tk.norm = term.n
  left join token_df as d on d.norm = term.n
  where term.n not in (select word from mdfts_stopwords)
  group by tk.section_id, term.pos
  order by tk.section_id, term.pos
),
exact(id, ev) as materialized (
  select id, sum(ev) from exact_t group by id order by 2 desc, 1 limit 50
),
-- Candidates: either source, with the bm25 score normalised to the best (1.0).
cand(id, bm_n) as materialized (
  select id, coalesce(min(bm) / nullif((select min(bm) from fts), 0), 0)
  from (select id, bm from fts union all select id, null from exact)
  group by id
),
-- Each candidate's words, lower-case and space padded, punctuation as spaces: its heading
-- and its trail (ancestors and heading); then, once per document, the document's (path and
-- title) and its file name's.
feat as materialized (
  select c.id, s.document_id as doc, c.bm_n,
    ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        s.heading, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as hw,
    ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        s.trail, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as tw
  from cand as c
  join sections as s on s.id = c.id
),
docs as materialized (
  select d.id as doc,
    ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        d.path || ' ' || d.title, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as dw,
    ' ' || lower(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        substr(d.path, length(rtrim(d.path, replace(d.path, '/', ''))) + 1), '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), ')', ' '), ':', ' '), ',', ' '),
        '`', ' '), '"', ' ')) || ' ' as fw
  from documents as d
  where d.id in (select doc from feat)
),
-- Which key word (in any form) each document names, and each candidate's heading and trail.
doc_match(doc, w, in_doc, in_file) as materialized (
  select docs.doc, form.w, max(instr(dw, ' ' || form.f) > 0), max(instr(fw, ' ' || form.w || ' ') > 0)
  from docs, form
  group by docs.doc, form.w
),
match(id, w, in_doc, in_head, in_trail, in_file) as (
  select feat.id, form.w, dm.in_doc, max(instr(hw, ' ' || form.f) > 0), max(instr(tw, ' ' || form.f) > 0),
    dm.in_file
  from feat
  join form
  join doc_match as dm on dm.doc = feat.doc and dm.w = form.w
  group by feat.id, form.w
),
-- A term the document explains (all its words in the path or title, like `search-api` in
-- search-api.md) says which document, not which section: its exact matches do not count.
term_doc(id, pos, in_doc) as (
  select match.id, part.pos, min(match.in_doc)
  from match join part on part.w = match.w
  group by match.id, part.pos
),
ex(id, ev) as materialized (
  select d.id, sum(e.ev)
  from term_doc as d
  join exact_t as e on e.id = d.id and e.pos = d.pos
  where not d.in_doc
  group by d.id
),
-- The heading's own words (beyond stop words and the document's words), and the share of them
-- the query names: a heading the query spells out in full beats one it half matches.
hword(id, hw, n) as (
  select feat.id, j.value, count(*) over (partition by feat.id)
  from feat
  join docs on docs.doc = feat.doc
  join json_each('[' || replace(json_quote(trim(feat.hw)), ' ', '","') || ']') as j
  where j.value <> '' and j.value not in (select word from mdfts_stopwords)
    and not instr(docs.dw, ' ' || j.value || ' ')
),
hprec(id, prec) as materialized (
  select id, avg(exists (select 1 from form where substr(hw, 1, length(form.f)) = form.f))
  from hword group by id
),
scored as (
  select feat.id, bm_n, coalesce((select prec from hprec where hprec.id = feat.id), 0) as hprec,
    coalesce((select ev from ex where ex.id = feat.id) / nullif((select max(ev) from ex), 0), 0) as ex_n,
    coalesce(sum(case when (key.docw and in_doc) or (key.plain and in_trail) then key.idf end), 0)
      / nullif((select idf from key_total), 0) as cover,
    coalesce(sum(case when key.plain and in_head and not in_doc then key.idf end), 0)
      / nullif((select idf from key_total), 0) as head,
    coalesce(sum(key.docw and in_file), 0) * 1.0 / (length(trim(fw)) - length(replace(trim(fw), ' ', ''))) as file
  from feat
  join docs on docs.doc = feat.doc
  join match on match.id = feat.id
  join key on key.w = match.w
  group by feat.id
),
ranked as (
  select id,
    round(1.5 * bm_n + 1.0 * ex_n + 0.5 * coalesce(cover, 0) + 0.5 * coalesce(head, 0)
          + 0.5 * hprec + 1.5 * min(coalesce(file, 0), 1.0), 6) as score
  from scored
  order by score desc, id
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
