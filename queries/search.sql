-- search: rank sections for any text: stemmed bm25, coverage of the query, exact tokens, heading, file name and phrase evidence.
-- params:  :q (required) the user's text, any characters (it is never passed to MATCH as is);
--          :limit rows to return, default 10; :explain 1 to fill the explain column;
--          :prefix only the documents whose path starts with it ("runbooks/"), default all
-- returns: rank, id, path, heading, trail (JSON array), anchor, level, start_line, end_line,
--          score (higher is better), snippet (prose below the heading, links read as their
--          text, the first key word [marked]), body, exact (1 when the query names no identifier
--          or the section holds one of them exactly, else 0), explain (JSON when :explain:
--          each signal's value, weight and share of the score, and how each query term
--          matched); best first, ties by id. No rows when the text has no usable term.
-- How: the text is split on spaces (json_each); each term becomes a quoted FTS5 phrase, so no
-- input can raise, and sections_fts (porter-stemmed) matches its word forms. Stop words are
-- dropped. Candidates are the bm25 top 25 over the cheapest phrases (rows they can match,
-- within a budget, so common words cost little on a large index), the top 15 holding every
-- key term, the 10 strongest exact-token sections, the Solution beside a Symptoms (or
-- Investigation) section found, and the sections whose file name and heading the query names
-- on the pages of the three best; every one of these steps works through at most a few
-- budgets of rows (`m`), however large the index. Each candidate is then looked up once per
-- key term in sections_fts (a rowid seek) and in tokens (a primary key), so every signal below
-- counts terms by the same stemmer, and scored on the signals in `signal`. The
-- snippet is cut from the section's first 20,000 characters around the first key word found
-- there: its cost is bounded whatever the section holds. A section of over 100,000 characters
-- (`big`, see cand and hit) is looked up by column filters, never by highlight(), which makes
-- FTS5 read the whole row through sections_indexed and compute its text, once a lookup: a 20 MB
-- one cost a search 0.9-2.2 s and ~600 MB; its text's first 20,000 characters come from its
-- first 40,000.
-- Layout: the steps form a chain, each naming the step before it once and otherwise only small
-- ones (q, term, key, m): SQLite copies a common table expression's tree into every place that
-- names it, copies included, so each extra name of a big step multiplies the time to compile
-- this (a step naming cand, termhit or base twice took it from ~30 ms to ~450 ms). Even key
-- (part and term inside it) costs ~1 ms per name: what a later step needs of key or term
-- rides along on the rows it already reads (part carries term's columns, hit key's, base the
-- query's describes and key terms (kt), asks the query's role tests, rolex the role words asked
-- for, pool the stop words for cand, key's aw the with/using/via for feature; cue reads the
-- terms from raw, not term, and holds each pair of neighbouring terms for feature's phrasal test). A materialized step named inside a subquery of
-- another (`(select ... from key) as k`) may be computed a second time: name it directly. A view
-- is copied into each place that names it as well, and term (with its token lookups) is copied
-- into every copy of part and key: so the steps read token_norms and token_rows, not the view
-- tokens, and sections and documents, not sections_full (the views cost 13% of the compile). Each
-- distinct window (partition, order, frame) of a select becomes a subquery over every column
-- and expression that select carries: windows go in steps of few columns (the rank is numbered
-- in ranked, not beside the snippet in the last select). Likewise
-- a derived column used twice is computed twice once SQLite flattens its subquery: `limit -1
-- offset 0` keeps such a subquery whole. And an AND or OR that is a value (not a WHERE
-- condition) computes both sides, whatever the first one says: a costly test goes behind a CASE
-- (`case when a then b else 0 end`), which stops at the first branch that holds.
with
-- The text: tabs and line breaks read as spaces, a typographic apostrophe as ' (don’t is the
-- stop word don't), at most 2,000 characters.
q(s, lim, explain) as (
  select substr(replace(replace(replace(replace(cast(coalesce(:q, '') as text),
         char(9), ' '), char(10), ' '), char(13), ' '), char(8217), ''''), 1, 2000),
    coalesce(nullif(:limit, ''), 10), :explain
),
-- The sections under :prefix, as a range of ids (lo, hi): documents are numbered in path order
-- and a document's sections follow on from its first, so the documents whose path starts with
-- the prefix hold one run of ids, found by two seeks in the path index and two in
-- sections_document (an empty file is a document with no sections: the run's ends are the first
-- and last sections of any of those documents, not of the first and last). Every way in to the
-- candidates (the FTS5 passes, the exact-token rows) reads only that range; the sections
-- around a candidate are on its own page. No prefix (NULL or ''): every id. A prefix no path
-- starts with: no rows. (The paths that start with p sort from p up to `e`: p less any trailing
-- U+10FFFF, the last code point, with its last character one code point on, "runbooks/" up to
-- "runbooks0"; a p of nothing but U+10FFFF has no bound, a blob, which sorts after all text. A
-- bound of p and U+10FFFF left out the paths that go on with that character, and one of invalid
-- UTF-8 broke EXPLAIN's listing of this statement in drivers that decode it.)
scope(lo, hi) as materialized (
  select case when x.p = '' then 0
              else coalesce((select s.id from sections as s where s.document_id between x.a and x.z
                             order by s.document_id, s.ordinal limit 1), 1) end,
    case when x.p = '' then 9223372036854775807
         else coalesce((select s.id from sections as s where s.document_id between x.a and x.z
                        order by s.document_id desc, s.ordinal desc limit 1), 0) end
  from (select p,
          (select d.id from documents as d where d.path >= p and d.path < e order by d.path limit 1) as a,
          (select d.id from documents as d where d.path >= p and d.path < e order by d.path desc limit 1) as z
        from (select p, case when r = '' then x''
                             else substr(r, 1, length(r) - 1)
                                  || char(case unicode(substr(r, -1)) when 55295 then 57344  -- (past the surrogates)
                                          else unicode(substr(r, -1)) + 1 end) end as e
              from (select p, rtrim(p, char(1114111)) as r from (select cast(coalesce(:prefix, '') as text) as p))
              limit -1 offset 0)
        limit -1 offset 0) as x
),
-- (tool: the word is with, using or via, after which a question names the tool to use: "...,
-- using git archive", "with cargo install, how do I ...")
raw(pos, v, tool) as (
  select cast(key as integer), value, lower(value) in ('with', 'using', 'via')
  from q, json_each('[' || replace(json_quote(q.s), ' ', '","') || ']')
  where value <> ''
  limit 64
),
-- A term as written, trimmed of quotes, brackets and trailing punctuation (the same rule as
-- mdfts.tokens.normalize) and of a possessive 's (my app's logs: the docs write "app", and
-- FTS5 reads app's as the phrase "app s"), its ASCII lower-case form; strong: it is an exact identifier in the
-- index (anything but a plain code span or a kebab name of one or two parts: a kebab name of
-- three or more, like a feature flag, is as specific as any identifier, and so is a key and
-- its value, alertmanager=main or -mhe=on, see mdfts.tokens); ident: it is one, or is shaped like
-- one though no section holds it (camelCase, snake_case, a --flag, dotted.name with a part of
-- two letters or more: e.g and i.e abbreviate words, as mdfts.tokens reads them, letters with
-- digits): a hit that holds none of the query's identifiers is flagged (`exact` = 0), but a
-- word of two letters or more with a version number (HTTP/2, TLS1.2, IPv6, python3: `ver`) is
-- none: it names a protocol or a release, a common word of the field that the docs write in
-- prose and apart ("HTTP 2"), not one thing, so the page whose code block holds it as a token
-- is not the page about it; it keeps its weight as a token (strong) but matches by its words,
-- while one letter and a number (E1693, x509, v2), letters run into a number (AUTH401, sha256)
-- or a number of four digits or a leading zero (KB4012212, ORA-01555) stays a code; stop: a
-- stop word; tok: some section holds it as an exact token (else the per-candidate token lookups
-- below are skipped); allstop: every term is a stop word; prv, nxt: the lower-case terms
-- written just before and after it (NULL when there is none), for compounds.
term(pos, t, n, strong, ident, stop, tok, allstop, prv, nxt, asksym) as materialized (
  select pos, t, n, strong,
    not ver and (strong or t glob '*[a-z][A-Z]*' or t glob '*[A-Za-z0-9]_[A-Za-z0-9]*' or t glob '--[A-Za-z]*'
      or t glob '*[A-Za-z][A-Za-z].[A-Za-z]*' or t glob '*[A-Za-z].[A-Za-z][A-Za-z]*'
      or (t glob '*[A-Za-z]*' and t glob '*[0-9]*' and length(t) >= 4)),
    stop, strong or exists (select 1 from token_norms as tn join token_rows as tk on tk.token_id = tn.id where tn.norm = n), min(stop) over (),
    case when lag(pos) over (order by pos) = pos - 1 then lag(n) over (order by pos) end,
    case when lead(pos) over (order by pos) = pos + 1 then lead(n) over (order by pos) end,
    max(sym) over ()
  from (
    select pos, t, n, ver,
      -- (token_df says it for a token of two sections or more; else its rows are few)
      coalesce((select strong from token_df where norm = n),
               exists (select 1 from token_norms as tn join token_rows as tk on tk.token_id = tn.id
                      where tn.norm = n and tk.kind_source / 5 in (0, 1, 2, 3, 4, 5, 6, 8, 9)))
        or ((n glob '*?-?*-?*' or n glob '*?=?*') and exists (select 1 from token_norms as tn join token_rows as tk on tk.token_id = tn.id where tn.norm = n)) as strong,
      -- (a stop word written after with, using or via that is a page's whole file name, see
      -- mdfts_stopwords.page, is the tool the query names: "... in 5 minutes with at" for
      -- at.md, "using which")
      n in (select word from mdfts_stopwords)
        and not (n in (select word from mdfts_stopwords where page = 1)
                 and exists (select 1 from raw as r where r.pos = x.pos - 1 and r.tool)) as stop,
      n in (select cue from mdfts_roles where cue like 'symptom%') as sym
    from (
      select *,
        -- (ver: a word of two letters or more, then a version number written as one: after a
        -- slash, after a v, or with a dot (HTTP/2, IPv6, TLS1.2), whose first part has one to
        -- three digits and no leading zero; letters run into digits are a code (AUTH401, ERR404,
        -- node1), as are ORA-01555 and KB4012212)
        n glob '*[0-9]' and length(rtrim(rtrim(n, '0123456789.'), '/-')) >= 2
          and rtrim(rtrim(n, '0123456789.'), '/-') not glob '*[^a-z]*'
          and substr(n, length(rtrim(n, '0123456789.')) + 1) not glob '0*'
          and not substr(n, length(rtrim(n, '0123456789.')) + 1) glob '[0-9][0-9][0-9][0-9]*'
          and (rtrim(n, '0123456789.') glob '*/' or rtrim(n, '0123456789.') glob '*[a-z]v'
               or substr(n, length(rtrim(n, '0123456789.')) + 1) glob '*[0-9].[0-9]*') as ver
      from (
      select min(pos) as pos, max(t) as t, lower(t) as n
      from (select pos, case when t glob '*[A-Za-z]''[sS]' then substr(t, 1, length(t) - 2) else t end as t
            -- (a slash before a name of one part, '/www.example.org', is no path to the
            -- builder, which needs two parts: it indexes the name, so the term is the name)
            from (select pos, case when t glob '/?*' and substr(t, 2) not glob '*/*' then substr(t, 2) else t end as t
                  from (select pos, rtrim(ltrim(v, '"''`([{<'), '"''`)]}>.,:;!?') as t from raw)))
      where t <> '' group by lower(t))) as x
    -- (an OFFSET keeps SQLite from flattening this into the select above, which would copy
    -- the token lookups into each place that names `strong`)
    limit -1 offset 0)
),
-- The role cues the query writes (mdfts_roles): each term, and each pair of neighbouring terms,
-- for the cues of two words ("stops working" asks what a problem does; "working" alone does not:
-- "working from home").
cue(n) as materialized (
  select distinct j.value
  -- (the terms as term reads them, worked out again from raw: four steps name cue, and each
  -- name of term copied its whole tree into the statement, ~0.5 ms of its compile. Each place
  -- a word is written, not only its first as in term: "what has to be down for X to fire?"
  -- writes "to fire")
  from (select n, case when lag(pos) over (order by pos) = pos - 1 then lag(n) over (order by pos) end as prv
        from (select pos, lower(t) as n
              from (select pos, case when t glob '*[A-Za-z]''[sS]' then substr(t, 1, length(t) - 2) else t end as t
                    from (select pos, rtrim(ltrim(v, '"''`([{<'), '"''`)]}>.,:;!?') as t from raw))
              where t <> '')) as x,
    json_each(json_array(x.n, x.prv || ' ' || x.n)) as j
  where j.value is not null
),
-- The role words those cues ask for, as one FTS5 expression ("mitigation" OR "workaround" ...);
-- NULL when the query writes no cue (then `role` looks nothing up).
rolex(e, words) as materialized (
  select group_concat('"' || r.word || '"', ' OR '), json_group_array(r.word)
  from mdfts_roles as r where r.cue in (select n from cue)
),
-- The words of each term as FTS5 sees them (PAYMENTS_DB_URL → payments, db, url), each with
-- the document frequency of its own porter stem. term_df holds the stems (of words in two
-- sections or more), and SQL cannot stem a word, so the stem is searched for: a prefix of the
-- word down to three letters (two for a three-letter word: ops → op, one → on), that prefix
-- with an e (pricing → price, scaling → scale: porter puts back the e it took off), or with a
-- final y as i (keys → kei, policy → polici), at most 33 primary key lookups. Several of them
-- can be stems ("status" is the stem of statuses; that of status is statu), so the one found is
-- the one whose df is what FTS5 counts for the word itself (a bounded count, at most 50 rows:
-- the df when fewer, else any candidate holding 50 or more): the longest such. A word FTS5
-- finds in one section has df 1 (term_df does not list it; potter is not pot); a word in no
-- section keeps the longest prefix's weight, as does a word none of whose candidates agrees
-- with the count (it matches nothing, or too little to be told apart: at the weight of the
-- rarest word it would shrink every candidate's share of the query alike).
part(pos, w, df, idf, wide, pw, t, n, strong, ident, tok, prv, nxt, asksym, cnt) as materialized (
  select pos, w,
    case when pw then json_extract(d, '$[4]') when ok or cnt <> 1 then coalesce(json_extract(d, '$[0]'), 1) else 1 end,
    case when pw then json_extract(d, '$[5]') when ok or cnt <> 1 then coalesce(json_extract(d, '$[1]'), 8.0) else 8.0 end,
    case when ok or cnt <> 1 then coalesce(json_extract(d, '$[2]'), 0) else 0 end,
    pw, t, n, strong, ident, tok, prv, nxt, asksym, cnt
  from (
  select pos, w, cnt, d, coalesce(json_extract(d, '$[3]'), 0) as ok,
    -- (pw: the word's stem is a path word, term_df.tdf, and no path writes the word itself,
    -- mdfts_pathwords: "contention" for content/, "MDS" for .md; not "storage" for
    -- Storage-Configuration/, which names the folder: then its path counts, at its whole df)
    case when json_extract(d, '$[4]') is not null
         then not exists (select 1 from mdfts_pathwords
                          where word in (w, w || 's', case when w glob '*s' then substr(w, 1, length(w) - 1) end))
         else 0 end as pw,
    t, n, strong, ident, tok, prv, nxt, asksym
  from (
    select pos, w, cnt, (
        -- (candidates: v 0 the prefix, 1 with an e, 2 with its final y as i; ok: its df agrees
        -- with the count; otherwise only a plain prefix, as before, may stand in)
        select json_array(df, idf, wide, ok, tdf, tidf) from (
        select d.df, d.idf, d.wide, d.tdf, d.tidf, d.df = cnt or (cnt >= 50 and d.df >= 50) as ok, c0.k, c0.v, c0.short
        from (select k, v, stem, length(stem) < case when length(w) = 3 then 2 else min(3, length(w)) end as short
              from (select k.value as k, v.value as v, substr(w, length(w) - k.value + 1) as sfx,
                           substr(w, 1, length(w) - k.value) as pre,
                           case v.value when 0 then substr(w, 1, length(w) - k.value)
                                        when 1 then substr(w, 1, length(w) - k.value) || 'e'
                                        else substr(w, 1, length(w) - k.value - 1) || 'i' end as stem
                    from json_each('[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]') as k, json_each('[2, 0, 1]') as v
                    where length(w) - k.value >= min(2, length(w)))
              -- (porter's own rules: an e or a y made i only where it took off -s, -ed or
              -- -ing; after -ed or -ing a double consonant is made single: added → ad)
              where case v when 1 then sfx in ('ed', 'ing')
                           when 2 then pre glob '*y' and (k = 0 or sfx in ('s', 'ed', 'ing'))
                           else not (sfx in ('ed', 'ing') and substr(pre, -1) = substr(pre, -2, 1)
                                     and substr(pre, -1) glob '[bcdfghjkmnpqrtv]') end) as c0
        join term_df as d on d.term = c0.stem
        where d.df = cnt or (cnt >= 50 and d.df >= 50) or (not c0.short and (c0.v = 0 or (c0.v = 2 and c0.k = 0))))
        order by ok desc, k, v = 1, v = 0
        limit 1) as d, t, n, strong, ident, tok, prv, nxt, asksym
    from (
      select term.pos, lower(p.value) as w,
        (select count(*) from (select 1 from sections_fts
                               where sections_fts match '"' || replace(lower(p.value), '"', '""') || '"'
                               limit 50)) as cnt,
        -- (the term's own columns ride along: key names part alone, see Layout above)
        term.t, term.n, term.strong, term.ident, term.tok, term.prv, term.nxt, term.asksym
      from term, json_each('["' || replace(replace(replace(replace(replace(replace(replace(replace(
          replace(replace(replace(replace(json_quote(term.t), '"', ''), '\', ''),
          ',', '","'), '-', '","'), '_', '","'), '.', '","'), '/', '","'), ':', '","'), '@', '","'),
          '=', '","'), '+', '","'), '#', '","') || '"]') as p
      where p.value <> '' and (not term.stop or term.allstop)
      limit -1 offset 0)  -- (not flattened: the FTS5 count would run once per use of cnt)
    limit -1 offset 0)  -- (nor this: the stem search would run once per use of d)
  limit -1 offset 0)
),
-- Key terms: the query's terms minus stop words (unless it is only stop words): the 8 rarest,
-- then up to 4 more, the commonest of which are dropped only while together they weigh at most
-- a tenth of the idf of the 12 rarest (a cap by weight, not count: past the eighth, words that
-- weigh little go, but "remove" in a question whose rarest words are "everything", "along" and
-- "first" stays; the cap bounds the lookups per candidate; the two terms right after with,
-- using or via stay whatever their weight: they name the tool to use, "..., using git archive",
-- where "git" is the commonest word of a long question, "with aws logs, how do I ..."), each
-- with its idf (of its rarest
-- word: a phrase is as rare as its rarest word; an identifier the index holds, of its token:
-- it matches only as written), its
-- FTS5 expression (the quoted term, ORed with its synonyms' words - a plural finds its
-- singular's group, a singular its plural's: check finds the group of checks, as porter makes
-- them one word - with the compound it makes with a neighbour, when the index holds it: "roll
-- back" finds Rollback, "set up" finds setup - and, for a phrasal verb's verb and particle,
-- with the single verbs the docs write instead: "turn off" finds disable, by each of its two
-- words, as a compound does; mdfts_phrasal - and with the docs' terms for a plain word, one
-- way: "machine" finds node, "node" does not find machine; mdfts_plain) and the query's total
-- idf; nparts: how many words the term has; jw: 1, or 1/2 for each of two words making such a
-- compound; wide: more than half of the sections hold each of its words in their own text, not
-- only in their path (term_df.wide: a product's own name in its docs, not a folder's), unless
-- every key term is wide. A CamelCase term is also the phrase of its words (OutOfSync → "Out Of
-- Sync", split as the build splits a heading's CamelCase words, so the two sides meet): hexpr,
-- the expression the candidates' own lookups use (`hit`, hprec), always holds it; expr, which
-- picks candidates and feeds bm25, only when no section holds the term as an exact token (else
-- "OpenShift" would add every "open" to bm25) or the name has three words or more: "Out Of
-- Sync" is the name written apart, where two words are often just two words (an FAQ heading
-- that writes `Out Of Sync` holds no OutOfSync token, and bm25's pools missed it); multi: the
-- term is a phrase of several words (a kebab or CamelCase term, or a compound the docs may
-- write as two words: setup names all of "Get set up", one span; see hprec); split: a CamelCase
-- term with such a phrase. A word whose stem is a path word (pw, see part) is matched outside
-- the path, each of its phrases behind `- {path} :`, as its df counts it there.
key(pos, t, n, strong, ident, df, idf, expr, hexpr, total, nparts, jw, tok, wide, multi, split, asksym,
    describes, kt, hx, cut, aexpr, fexpr, aw, comp) as materialized (
  select pos, t, n, strong, ident, df, idf,
    expr || case when tok and length(camel) - length(replace(camel, ' ', '')) < 2 then '' else camelx end,
    expr || camelx || coalesce(hapart, ''),
    sum(idf) over (), nparts,
    1.0 / (1 + coalesce(length(comp) - length(replace(comp, ' ', '')) + 1, 0)), tok,
    wide and not min(wide) over (), nparts > 1 or camel is not null or apart0 is not null, camel is not null, asksym,
    -- (the query describes something: two or more words that are not identifiers, and it does
    -- not ask for symptoms, see `answer`; kt: every key term as [pos, t, n, ident, hexpr, the
    -- prefixes of its words the snippet looks for (sws)], for close's word pairs and the
    -- snippet; these two ride along on every candidate's rows to base and ranked, so neither
    -- names key or part: see Layout above)
    sum(not ident) over () >= 2 and not asksym,
    json_group_array(json_array(pos, t, n, ident, expr || camelx || coalesce(hapart, ''), json(sws))) over (),
    -- (hx: every key term's hexpr ORed, for hprec; cut: see mx)
    group_concat('(' || expr || camelx || coalesce(hapart, '') || ')', ' OR ') over (),
    (select t2.section_id from token_norms as tn join token_rows as t2 on t2.token_id = tn.id, scope
     where tn.norm = n and t2.section_id between scope.lo and scope.hi order by t2.section_id limit 1 offset 500), aexpr,
    -- (fexpr: hexpr without the synonyms, for a term that has some: a synonym says what a
    -- section is about, but a file name that only a synonym names is another tool's page:
    -- "schedule" finds cron, and cron.md is not named by "crontab schedule"; see hit)
    case when syn <> '' then replace(e0, syn, '') || camelx end,
    -- (aw: the term is written right after with, using or via, see fwith in feature)
    aw,
    -- (comp: its compounds, for whole in termhit)
    comp
  from (
  select *, case when pw and nparts = 1 then '- {path} : ' || replace(e0, '" OR "', '" OR - {path} : "') else e0 end as expr
  from (
  select *, '"' || replace(t, '"', '""') || '"' || syn || coalesce(' OR "' || replace(comp, ' ', '" OR "') || '"', '')
              || coalesce(' OR ' || case when apartok then apart0 end, '') as e0,
    case when not apartok then ' OR ' || apart0 end as hapart,
    coalesce(' OR "' || replace(camel, '"', '""') || '"', '') as camelx,
    -- (aexpr: see m; NULL when the term stands as it is)
    case when nparts > 1 and not strong and df > 20000
         then '"' || replace(rw, '"', '""') || '"' || syn || coalesce(' OR "' || replace(comp, ' ', '" OR "') || '"', '') end as aexpr
  from (
    -- (nth: the term's place by rarity; tail: the idf of it and every commoner term)
    select * from (select *, row_number() over (order by df, pos) as nth,
      sum(idf) over (order by df desc, pos desc rows unbounded preceding) as tail, sum(idf) over () as tot
    from (
    select part.pos, part.t, part.n, part.strong, part.ident, part.tok, part.asksym,
      coalesce(part.prv in ('with', 'using', 'via'), 0) as aw,
      -- (aw2: the second word after with, using or via: a tool's name of two words, "with cargo
      -- install", "using git archive", is kept whole; see the WHERE below)
      exists (select 1 from raw as r where r.tool and r.pos = part.pos - 2) as aw2,
      -- (an identifier the index holds matches only as written: it is as rare as that token)
      case when part.strong then min(min(part.df), coalesce((select df from token_df where norm = part.n), 1))
           else min(part.df) end as df,
      case when part.strong then max(max(part.idf), coalesce((select idf from token_df where norm = part.n), 8.0))
           else max(part.idf) end as idf,
      count(*) as nparts, min(part.wide) as wide, max(part.pw) as pw, substr(min(printf('%012d', part.df) || part.w), 13) as rw,
      -- (sws: see snip_at)
      json_group_array(substr(part.w, 1, max(3, min(length(part.w), length(part.w) - 2)))) filter (where length(part.w) >= 3) as sws,
      coalesce((
        select group_concat(' OR "' || w || '"', '') from (
          select s2.word as w
          from mdfts_synonyms as s1 join mdfts_synonyms as s2 on s2.grp = s1.grp and s2.word <> s1.word
          where s1.word in (part.n, rtrim(part.n, 's'), part.n || 's')
          union all
          select p.term from mdfts_plain as p where p.word in (part.n, rtrim(part.n, 's'), part.n || 's')
          union all
          -- (a phrasal verb, mdfts_phrasal: the verb, in a regular form, then its particle, and
          -- each of the two finds the single verbs, as both words of a compound find it; the
          -- verb or the particle alone finds nothing more: "the mons are up")
          select distinct ph.word
          from (select part.n as v, part.nxt as p union all select part.prv, part.n) as x
          join mdfts_phrasal as ph on ph.verb = x.v and ph.particle = x.p
          where ph.word <> part.n
          union all
          -- (an acronym the docs define, mdfts_acronyms: written as they write it, "VMs", it also
          -- finds its long form, as a phrase, "virtual machine"; and each word of a long form the
          -- query writes out, "virtual machines", also finds the acronym, as both words of a
          -- compound find it; hyphens or spaces, as FTS5 reads both: "high availability" for HA,
          -- high-availability)
          select a.long from mdfts_acronyms as a
          where a.short in (part.t, case when part.t glob '*?s' then substr(part.t, 1, length(part.t) - 1) end)
          union all
          select lower(a.short) from mdfts_acronyms as a, q
          where a.word in (part.n, case when part.n glob '*?s' then substr(part.n, 1, length(part.n) - 1) end)
            and instr(' ' || replace(lower(q.s), '-', ' '), ' ' || replace(a.long, '-', ' ')) > 0)), '') as syn,
      -- (the compounds, space-separated: letters and digits only)
      (select group_concat(j.w, ' ')
       from (select part.prv || part.n as w union all select part.n || part.nxt) as j
       where j.w not glob '*[^a-z0-9]*' and exists (select 1 from term_df as d where d.term = j.w)) as comp,
      -- (apart0: a compound as the two words the docs may write instead, as a phrase: filesystem
      -- → "file system", healthcheck → "health check", cleanup → "clean up"; each half a word
      -- the index holds (its stem in term_df: itself, or less a final s, e or es), of three
      -- letters or more and no stop word, or the particle up, in, on or off after the first
      -- (five letters are enough for that: setup → "set up", login → "log in"); NULL when no
      -- split holds. The reverse of comp. It goes into expr (apartok) only when the index holds
      -- the compound itself in one section at most (part's count): where the docs write it as
      -- one word, "clean up" would dilute what "cleanup" finds in bm25. Else it goes into hexpr
      -- only (`hapart`): the candidates' own lookups (hit) see "Rolling back a migration",
      -- "Setting up rbenv" and "Pre-requisites" hold what "rollback", "setup" and
      -- "prerequisites" ask for - porter's stems meet the verb's forms - while what picks the
      -- candidates and feeds bm25 stays as it was)
      case when not part.ident and length(part.n) >= 5 and part.n not glob '*[^a-z]*'
                then (
        select group_concat('"' || substr(part.n, 1, k.i) || ' ' || substr(part.n, k.i + 1) || '"', ' OR ')
        from (with recursive c(i) as (select 3 union all select i + 1 from c where i < length(part.n) - 2)
              select i from c) as k
        where substr(part.n, 1, k.i) not in (select word from mdfts_stopwords)
          and exists (select 1 from term_df as d
                      where d.term in (substr(part.n, 1, k.i), rtrim(substr(part.n, 1, k.i), 'e')))
          and ((length(part.n) >= 6 and length(part.n) - k.i >= 3 and substr(part.n, k.i + 1) not in (select word from mdfts_stopwords)
                and exists (select 1 from term_df as d
                            where d.term in (substr(part.n, k.i + 1), rtrim(substr(part.n, k.i + 1), 's'),
                                             rtrim(substr(part.n, k.i + 1), 'e'),
                                             case when part.n glob '*es' then substr(part.n, k.i + 1, length(part.n) - k.i - 2) end)))
               or substr(part.n, k.i + 1) in ('up', 'in', 'on', 'off'))) end as apart0, part.cnt <= 1 as apartok,
      -- (a CamelCase term as the words it is made of, "Out Of Sync" for OutOfSync, split where
      -- the build splits a heading's and a file name's (mdfts.words.camel_parts): so it finds a
      -- heading that writes them apart, as "out of sync" finds a heading OutOfSync; NULL when it
      -- does not split)
      case when part.t glob '*[a-z0-9][A-Z]*' or part.t glob '*[A-Z][A-Z][a-z]*' then (
        with recursive c(i, o) as (
          select 1, ''
          union all
          select i + 1, o || case when i > 1 and substr(part.t, i, 1) glob '[A-Z]'
                                       and (substr(part.t, i - 1, 1) glob '[a-z0-9]'
                                            or (substr(part.t, i - 1, 1) glob '[A-Z]' and substr(part.t, i + 1, 1) glob '[a-z]'
                                                -- (a plural acronym, OSDs, is one word)
                                                and substr(part.t, i + 1) <> 's'))
                                  then ' ' else '' end || substr(part.t, i, 1)
          from c where i <= length(part.t))
        -- (nor an acronym with a small letter, QoS: no part of one letter)
        select case when ' ' || o || ' ' glob '* ? *' then null else nullif(o, part.t) end
        from c order by i desc limit 1) end as camel
    from part
    group by part.pos
    order by df, part.pos
    limit 12 offset 0))  -- (not flattened: comp is used twice)
    where nth <= 8 or tail > 0.1 * tot or aw or aw2
    order by df, pos))
  limit -1 offset 0)  -- (nor this: expr is used twice)
),
-- The FTS5 expression: the key terms ORed, cheapest first, admitted only while the running
-- total of rows they can match fits a budget (2,000 rows, whatever the index's size: what bm25
-- may score stays bounded however large the index grows; a budget growing with the index, up
-- to 5,000, cost 16% of a search at 100k sections and 44% at 1M for the same top 10s), so a
-- query over a large index never scores half of it for a word like "service"; the cheapest
-- term always gets in. Common words still count as evidence below; they just do not pick
-- candidates.
budget(n) as (select 2000),
m(expr, all_, kx, fits) as materialized (
  -- (each phrase of the OR once: bm25 sums over the expression's phrases, so a single verb or a
  -- compound that both words of a pair find, "turn off" → disable, "roll back" → rollback,
  -- would count twice, and a rare one outweigh the query's own words; the AND below keeps it in
  -- each term's group, as each group must match: ("turn" OR "disable") AND ("off" OR "disable"))
  select coalesce((select group_concat(p.value, ' OR ')
                   from (select distinct j.value
                         from json_each('[' || replace(json_quote(x.expr), '\" OR \"', '\"","\"') || ']') as j) as p),
                  '""'), x.all_, x.kx, x.fits
  from (
  select group_concat(k.expr, ' OR ') as expr,
    -- (the AND of every key term, common ones too: bm25 scores at most `cap` of its rows, and
    -- counting a word's rows for bm25's idf is cheap, ~14 ns a row; none for one term: then
    -- it is the OR. A phrase's rows cost ten times that, its words' positions matched, 17 ms
    -- for "billing-exporter" in 125k of 1M sections: so a phrase of plain words whose rarest
    -- word is in more than ten budgets of rows stands in the AND as that word, aexpr in key;
    -- an identifier still must match as written)
    case when max(k.nkey) = 1 then '""' else coalesce(max(k.all_), '""') end as all_,
    max(k.kx) as kx,
    -- (fits: even the cheapest key term is within the budget, for mx's file-name lookup)
    min(k.cum) <= max(b.budget) as fits
  from (
    select expr, df, sum(df) over (order by df, pos rows unbounded preceding) as cum,
      row_number() over (order by df, pos) as nth, count(*) over () as nkey,
      group_concat('(' || coalesce(aexpr, expr) || ')', ' AND ') over (
        order by df, pos rows between unbounded preceding and unbounded following) as all_,
      -- (kx: every key term, for mx)
      json_group_array(json_array(pos, n, t, printf('%!.17g', idf), cut)) over (
        order by df, pos rows between unbounded preceding and unbounded following) as kx
    from key) as k,
    (select n as budget from budget) as b
  where nth = 1 or cum <= b.budget) as x
),
-- cap: the rows bm25 may score in each of fts's passes: the budget when even the cheapest key
-- term is over it, else four times it, as synonyms and compounds match rows their term's df
-- does not count. Worked out from part (the least df of any key term: key holds the rarest, and
-- a term's df is as in key), not in m: a LIMIT cannot read a column of the row it runs for, so
-- the passes name this small step instead.
mcap(cap) as materialized (
  select case when count(*) = 0 then null when min(df) > max(b.n) then max(b.n) else 4 * max(b.n) end
  from (select case when strong then min(min(df), coalesce((select d.df from token_df as d where d.norm = n), 1))
                    else min(df) end as df
        from part group by pos) as k, budget as b
),
-- mx: m's two expressions, and ids: the 10 strongest exact-token sections (",3,17,42,", for
-- instr in fts). Sections that hold a query term as an exact token are weighed per term; a
-- case-exact match counts double, and a section that defines the token (in a heading, the first
-- column of a table, or the code span opening an item) half as much again as one that mentions
-- it. Only a term's first 500 token rows compete (a token in 30,000 sections would otherwise be
-- weighed in all of them; 500 picks the same candidates as 2,000 on every dev-set and bench
-- query, for 13% less at p95 on 100k sections); the candidates' own evidence is looked up in
-- full below. The key terms come from m's row (kx, idf as 17 digits: see fts), so this step
-- names m alone: as a step of its own naming key, with fts naming m beside it, it copied key's
-- tree into the statement once more (~0.9 ms of its compile).
-- ids also holds the pages the query names by their whole file name ("<tool> basics" names
-- tool.md, "compliance-exporter graphs" compliance-exporter.md): of the 3 sections whose file
-- name the OR matches in full (most words first, then the shortest name), each page's 2 best
-- sections by bm25 (one FTS5 lookup in the page's range of ids). A tool's overview page loses
-- the bm25 pools to its dozens of subcommand pages (tool-sub.md), each shorter and holding the
-- tool's name as often, and a service's page to the many sections that mention the service
-- and the query's common words; named, they are candidates, and the file and heading signals
-- weigh them. Looked up only when even the cheapest key term fits the budget, and in the first
-- 200 rows whose file name holds a key term, so the cost stays bounded (~4% of p50 at 10k).
mx(expr, all_, ids) as materialized (
  select m.expr, m.all_, (
    select ',' || group_concat(id, ',') || ',' from (
      select id from (
      select id from (
        select tk.section_id as id, k.pos,
          max(k.idf * (1 + ((case tk.written when '' then tn.norm when '^' then upper(tn.norm) else tk.written end) = k.t)) * (1 + 0.5 * (tk.kind_source % 5 in (0, 1)))) / 3.0 as ev
        from (select json_extract(j.value, '$[0]') as pos, json_extract(j.value, '$[1]') as n,
                json_extract(j.value, '$[2]') as t, cast(json_extract(j.value, '$[3]') as real) as idf,
                json_extract(j.value, '$[4]') as cut
              from json_each(m.kx) as j) as k
        join scope
        join token_norms as tn on tn.norm = k.n
        join token_rows as tk on tk.token_id = tn.id and tk.section_id between scope.lo and coalesce(k.cut, scope.hi)
        group by tk.section_id, k.pos)
      group by id order by sum(ev) desc, id limit 10)
      union
      select best.value from (
        select id from (
          -- (h: the file name's words, before the folder's, each match the query makes between
          -- char(1) and char(2), neighbouring matches joined: a phrase, compliance-exporter, is
          -- one match of two words; it names every word when one match spans the whole name)
          select id, replace(substr(h, 1, instr(h || ' /', ' /') - 1), char(2) || ' ' || char(1), ' ') as h
          from (
            select rowid as id, highlight(sections_fts, 1, char(1), char(2)) as h
            from sections_fts
            where m.fits and sections_fts match '{file_words} : (' || m.expr || ')'
              and rowid between (select lo from scope) and (select hi from scope)
            limit 200))
        where h glob char(1) || '*' || char(2) and instr(substr(h, 2), char(1)) = 0
        order by length(h) - length(replace(h, ' ', '')) desc, length(h), id limit 3) as n
      join sections as ns on ns.id = n.id
      join json_each((
        select json_group_array(id) from (
          select rowid as id from sections_fts
          where sections_fts match m.expr
            and rowid between (select min(o.id) from sections as o where o.document_id = ns.document_id)
                          and (select max(o.id) from sections as o where o.document_id = ns.document_id)
          -- (the column weights of fts's passes: a test holds the three lists equal)
          order by bm25(sections_fts, 1.0, 3.0, 2.0, 4.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
          limit 2))) as best))
  from m
),
-- The two bm25 passes, as one row (j: a JSON array of [id, bm25, pass, x]; bm25 as text of 17
-- digits, which reads back as the same number, where JSON's own 15 do not): mx named once, in
-- its FROM, and read by the passes as that row's columns. Each name of a step copies the tree
-- of every step it names into the statement SQLite compiles (see Layout above): as two steps,
-- each naming m, and pool naming the exact-token sections again, compiling this took ~2 ms
-- more of ~15. Column weights (text, file_words, title, head, trail, path, then the eleven token
-- columns): words in the heading and the file name say most about what a section is.
-- Pass 1, the key terms ORed (mx.expr): bm25 scores at most `cap` rows (FTS5 computes bm25
-- lazily, a row at a time, so the inner limit caps the work): when even the cheapest term is
-- over the budget, only the first `budget` rows it matches compete, so the cost is capped, not
-- the index. Kept: the top 35, the strongest exact-token sections among the rows scored first
-- (x), so such a section outside the top 25 still gets its bm25 from this one pass (a bm25()
-- per candidate would count every row holding each term again, once per candidate).
-- Pass 2, every key term ANDed (mx.all_), the bm25 top 15 (coordination at retrieval: the one
-- section naming a rare service and all the other words is not lost among thousands that hold
-- the common words). Pass 3: the 10 strongest exact-token sections (mx.ids), no bm25.
fts(j) as materialized (
  select (
    select json_group_array(json_array(id, printf('%!.17g', bm), pass, x)) from (
      select * from (
        select * from (
          select rowid as id, bm25(sections_fts, 1.0, 3.0, 2.0, 4.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5) as bm,
            1 as pass, instr(mx.ids, ',' || rowid || ',') > 0 as x
          from sections_fts
          where sections_fts match mx.expr
            and rowid between (select lo from scope) and (select hi from scope)
          limit coalesce((select cap from mcap), 0))
        order by x desc, bm
        limit 35)
      union all
      select * from (
        select * from (
          select rowid as id, bm25(sections_fts, 1.0, 3.0, 2.0, 4.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5) as bm,
            2 as pass, 0 as x
          from sections_fts
          where sections_fts match mx.all_
            and rowid between (select lo from scope) and (select hi from scope)
          limit coalesce((select cap from mcap), 0))
        order by bm
        limit 15)
      union all
      select j.value, null, 3, 0 from json_each('[' || trim(mx.ids, ',') || ']') as j))
  -- (mx's ids are ",3,17,42,", for instr: an IN over a column of the outer row would be
  -- worked out again for every row the pass scores)
  from mx
),
-- The pools: the bm25 top 25 and the top 15 holding every key term (inbm), and the 10
-- strongest exact-token sections, each with its bm25 from the pools when it is in one, else
-- from the OR's pass (NULL past the rows scored). qk: the query's words as keys (below); doc:
-- for the OR's three best rows, the row's page (else NULL); fs: the page's file name's words
-- as keys, when the query names every one of them (else NULL): cand looks for the page's
-- named sections there (see `named`).
-- A word's key is the word, lower case, less a final s, so a plural names its singular and back
-- ("charts" names chart.md); a query term's kebab or snake parts count apart ("rook-ceph" names
-- ceph.md). A plain test of words, not FTS5's stems: it picks and credits sections by their
-- names, so it must hold word for word (by stems, "configure" would name every Configuration).
pool(id, bm, inbm, doc, qk, fs, sw) as materialized (
  select id, bm, inbm, doc, qk,
    case when doc is not null then (
      select case when sum(instr(qk, ' ' || k || ' ') = 0) = 0 then ' ' || group_concat(k, ' ') || ' ' end
      from (select case when f.value glob '*?s' then substr(f.value, 1, length(f.value) - 1) else f.value end as k
            from documents as d,
              json_each('[' || replace(json_quote(trim(substr(d.file_words, 1, instr(d.file_words || ' /', ' /') - 1))),
                                       ' ', '","') || ']') as f
            where d.id = x.doc and f.value <> '')) end, sw
  from (
  select id, coalesce(min(case when inbm then bm end), min(bm)) as bm, max(inbm) as inbm,
    case when max(top) then (select s.document_id from sections as s where s.id = u.id) end as doc
  from (
    select id, bm, case pass when 1 then nth <= 25 when 2 then 1 else 0 end as inbm, pass = 1 and nth <= 3 as top
    from (select id, bm, pass, x, row_number() over (partition by pass order by bm) as nth
          from (select json_extract(j.value, '$[0]') as id, cast(json_extract(j.value, '$[1]') as real) as bm,
                  json_extract(j.value, '$[2]') as pass, json_extract(j.value, '$[3]') as x
                from fts, json_each(fts.j) as j
                limit -1 offset 0))
    where pass <> 1 or nth <= 25 or x) as u
  group by id) as x,
  -- (qk: space-separated, with a space at each end, for instr; sw: the stop words the query
  -- writes, unless it writes nothing else, for cand's nstop: term read once, here)
  (select ' ' || group_concat(case when not term.stop and w.value <> ''
                                   then case when w.value glob '*?s' then substr(w.value, 1, length(w.value) - 1)
                                             else w.value end end, ' ') || ' ' as qk,
     json_group_array(term.n) filter (where term.stop and not term.allstop) as sw
   from term, json_each('[' || replace(json_quote(replace(replace(term.n, '-', ' '), '_', ' ')), ' ', '","') || ']') as w) as q
),
-- Candidates: the pools, and the answer beside a Symptoms or Investigation section in the bm25
-- pools (see `answer` below; found by the document's key within a few sections of it: a fix or
-- check heading, or the role the query's cues ask for, its Impact for "what stops working"), bm25
-- normalised to the best (1.0); an exact-token section outside the bm25 pools has its own
-- bm25 (else it would count as 0 against the sections holding only the query's common words).
-- And the sections the query names (`named`) on the pages of the three best bm25 rows, when
-- it names the page's file name: a long section (a table of settings) that holds every word
-- once ranks below the short ones around it that repeat them, so bm25's pools can miss it;
-- its bm25 is NULL (0) here, unless the pools scored it, and the signals decide (see bm).
-- Per candidate, what the signals need of the section: fw, the file name's words (before the
-- folder's), nw how many, nhead the heading's words (stop words aside), nstop how many of the
-- file name's words are stop words the query writes ("about" in tool-about.md); named: the
-- query names the section: every word of its file name and of its heading (stop words aside,
-- by their keys, see pool), and the heading names more than the file name does (the file
-- name names the system, the heading the task: "<system> <task>"; a page's title that repeats
-- its file name is no such section).
cand(id, document_id, bm_n, fw, nw, nhead, nstop, named, big) as materialized (
  select id, document_id, coalesce(bm / nullif(min(bm) over (), 0), 0), fw,
    max(1, length(fw) - length(replace(fw, ' ', '')) + 1), nhead,
    (select count(*) from json_each('[' || replace(json_quote(fw), ' ', '","') || ']') as j
     where j.value in (select value from json_each(sw))),
    named,
    -- (big: a section of over 100,000 characters, see hit; only a file that large holds one.
    -- Looked up here, once a candidate: in the grouping below, the body would be copied whole)
    case when g.bytes > 100000 then (select length(x.body) > 100000 from sections as x where x.id = g.id) else 0 end
  from (
    select u.id, s.document_id, min(u.bm) as bm,
      trim(substr(d.file_words, 1, instr(d.file_words || ' /', ' /') - 1)) as fw,
      (select count(*) from json_each('[' || replace(json_quote(lower(s.heading)), ' ', '","') || ']') as j
       where rtrim(ltrim(j.value, '"''`([{<'), '"''`)]}>.,:;!?') not in (select word from mdfts_stopwords)
         and rtrim(ltrim(j.value, '"''`([{<'), '"''`)]}>.,:;!?') <> '') as nhead,
      max(u.named) as named, max(u.sw) as sw, d.bytes
    from (
      -- (each pool row, its page's named sections (as negative ids), then its Solution and
      -- Diagnosis siblings, and those of the role asked for: one reading of pool, see Layout above)
      select abs(j.value) as id, case when j.value = p.id then p.bm end as bm, j.value < 0 as named, p.sw
      from pool as p, json_each((
        select json_group_array(i) from (
          select p.id as i
          union all
          -- (the page's named sections, when pool found its file name named (fs); the first
          -- 500 sections of the page at most, so a huge page costs a bounded scan)
          select -a.id
          from sections as a
          where p.fs is not null and a.document_id = p.doc and a.ordinal < 500 and a.heading <> '' and (
            select count(*) > 0 and sum(instr(p.qk, ' ' || k || ' ') = 0) = 0 and sum(instr(p.fs, ' ' || k || ' ') = 0) > 0
            from (select case when v glob '*?s' then substr(v, 1, length(v) - 1) else v end as k
                  from (select rtrim(ltrim(h.value, '"''`([{<'), '"''`)]}>.,:;!?') as v
                        from json_each('[' || replace(json_quote(replace(replace(lower(a.heading), '-', ' '), '_', ' ')),
                                                      ' ', '","') || ']') as h)
                  where v <> '' and v not in (select word from mdfts_stopwords)))
          union all
          select a.id
          from sections as y
          join sections as a on a.document_id = y.document_id
            and a.ordinal between y.ordinal - 50 and y.ordinal + 50 and a.parent_id is y.parent_id and a.id <> y.id
          where y.id = p.id and p.inbm
            and lower(trim(y.heading)) in (select cue from mdfts_roles where cue like 'symptom%'
                                           union all select word from mdfts_roles
                                           where cue in ('why', 'mean', 'means', 'impact'))
            and exists (select 1 from mdfts_roles
                        where (cue in ('fix', 'check') or cue in (select n from cue))
                          and instr(' ' || lower(replace(replace(replace(replace(a.heading, ':', ' '), '?', ' '), ',', ' '), '.', ' ')) || ' ',
                                    ' ' || word || ' ') > 0)))) as j) as u
    join sections as s on s.id = u.id
    left join documents as d on d.id = s.document_id
    group by u.id) as g
),
-- One lookup per candidate and key term (FTS5 seeks the row): where the term's stem occurs,
-- as bits (NULL: nowhere): 1 anywhere (the row matches), 2 the file name, 4 the document (path,
-- file name, title), 8 the heading, 16 the trail (the heading and its parents'). highlight()
-- marks the term's matches in a short column of that one row, so the cost does not grow with the index. (Neither bm25() - it counts every row
-- that holds the term - nor a column filter - on a row that holds the term elsewhere FTS5
-- reads on through the rest of the term's rows - would.)
-- ev: the term's exact-token evidence in the candidate (NULL when it holds no such token);
-- in_page: a section of the candidate's document holds it as an exact token (both by primary
-- key lookups: the cost does not grow with how many sections hold the token).
hit(id, pos, b, ev, in_page, bm_n, fw, nw, nhead, nstop, named, t, ident, idf, total, strong, split, nparts, jw, wide, multi, hx,
    describes, kt, aw, big, comp) as materialized (
  select id, pos,
    -- (the file name bit only by the term's own forms: see fexpr in key; looked up only when
    -- the file name matched and the term has synonyms)
    b - case when fexpr is not null and coalesce(b & 2, 0) > 0
                  and case when big
                           then not exists (select 1 from sections_fts
                                            where sections_fts match '{file_words} : (' || fexpr || ')' and rowid = x.id)
                           else coalesce((select instr(highlight(sections_fts, 1, char(1), ''), char(1))
                                          from sections_fts where sections_fts match fexpr and rowid = x.id), 0) = 0 end
             then 2 else 0 end as b, ev,
    -- (a section that holds the token is a section of its page that does; a page's sections
    -- have consecutive ids, so one range seek in the token's rows, from its first to its last,
    -- not a token lookup per section of the page)
    case when ev is not null then 1
         when tok then exists (select 1 from token_norms as tn join token_rows as tk on tk.token_id = tn.id
                               where tn.norm = n and tk.section_id between
                                 (select o.id from sections as o where o.document_id = x.document_id order by o.ordinal limit 1)
                                 and (select o.id from sections as o where o.document_id = x.document_id
                                      order by o.ordinal desc limit 1))
         else 0 end,
    bm_n, fw, nw, nhead, nstop, named, t, ident, idf, total, strong, split, nparts, jw, wide, multi, hx, describes, kt, aw, big, comp
  from (
  select cand.id, key.pos, key.n, key.tok, cand.document_id, cand.big, case when not cand.big then (
    -- (the file name is part of the document: marked once, and then path and title need no look;
    -- 32 times the words of the file name's first match ride above the bits: a kebab term names
    -- as many file name words as its parts, kube-proxy two of KubeProxyDown's three, see file.
    -- Each highlight() goes behind a CASE, so a column is marked only when its bit can count:
    -- the title only when the path did not match, the trail (16) only for in_anc, a match in
    -- neither the document nor the heading, the file name a second time, for its span's end,
    -- only when it matched: three to five highlight() calls a candidate and term, not always five)
    select case when instr(highlight(sections_fts, 1, char(1), ''), char(1)) > 0
                then 7 + 32 * (select length(sp) - length(replace(sp, ' ', '')) + 1
                               from (select substr(h, i + 1, instr(substr(h, i + 1), char(2)) - 1) as sp
                                     from (select h, instr(h, char(1)) as i
                                           from (select highlight(sections_fts, 1, char(1), char(2)) as h)
                                           limit -1 offset 0)))
                     + 8 * (instr(highlight(sections_fts, 3, char(1), ''), char(1)) > 0)
                when instr(highlight(sections_fts, 5, char(1), ''), char(1)) > 0
                  or instr(highlight(sections_fts, 2, char(1), ''), char(1)) > 0
                then 5 + 8 * (instr(highlight(sections_fts, 3, char(1), ''), char(1)) > 0)
                when instr(highlight(sections_fts, 3, char(1), ''), char(1)) > 0 then 9
                else 1 + 16 * (instr(highlight(sections_fts, 4, char(1), ''), char(1)) > 0) end
    from sections_fts where sections_fts match key.hexpr and rowid = cand.id)
    -- (a big section: a highlight() reads the whole row through sections_indexed, computing its
    -- text, once a lookup. Its bits come from column filters instead, and a file name match
    -- counts one word)
    else (select case when f.fw then 39 else 1 + 4 * f.dp end + 8 * f.hd + 16 * f.tr
          from (select exists (select 1 from sections_fts
                               where sections_fts match '{file_words} : (' || key.hexpr || ')' and rowid = cand.id) as fw,
                  exists (select 1 from sections_fts
                          where sections_fts match '{path title} : (' || key.hexpr || ')' and rowid = cand.id) as dp,
                  exists (select 1 from sections_fts
                          where sections_fts match '{head} : (' || key.hexpr || ')' and rowid = cand.id) as hd,
                  exists (select 1 from sections_fts
                          where sections_fts match '{trail} : (' || key.hexpr || ')' and rowid = cand.id) as tr
                where exists (select 1 from sections_fts where sections_fts match key.hexpr and rowid = cand.id)) as f)
    end as b, key.fexpr,
    case when key.tok then
      (select max(key.idf * (1 + ((case tk.written when '' then tn.norm when '^' then upper(tn.norm) else tk.written end) = key.t)) * (1 + 0.5 * (tk.kind_source % 5 in (0, 1)))) / 3.0
       from token_norms as tn join token_rows as tk on tk.token_id = tn.id where tn.norm = key.n and tk.section_id = cand.id) end as ev,
    cand.bm_n, cand.fw, cand.nw, cand.nhead, cand.nstop, cand.named, key.t, key.ident, key.idf, key.total, key.strong,
    key.split, key.nparts, key.jw, key.wide, key.multi,
    key.hx, key.describes, key.kt, key.aw, key.comp
  -- (key's columns ride along, so termhit and feature name hit alone: see Layout above)
  from cand, key
  limit -1 offset 0) as x
),
-- Per candidate and key term: found anywhere, in the file name, in the document, in the
-- heading; ev: its exact-token evidence (0 when the document's name holds the
-- term: then it says which document, not which section); in_page: another section of the same
-- document holds it as an exact token (the page is about it); tok: the section holds it as an
-- exact token (whatever the document's name says); whole: the term spells the whole file name
-- (PaymentsGatewayDown for PaymentsGatewayDown.md), or a compound it makes with its neighbour
-- does (git config for git-config.md); how (for --explain only): exact, stem or none;
-- held: some candidate holds the term at all (see cover).
termhit(id, pos, t, ident, idf, total, bm_n, any_, in_file, in_doc, in_head, ev, in_page, tok, nparts, jw,
        wide, in_anc, whole, nw, nhead, nstop, named, multi, how, held, hx, describes, kt, aw, big) as materialized (
  select id, pos, t, ident, idf, total, bm_n, any_, in_file, in_doc, in_head, ev, in_page, tok, nparts, jw,
    wide, in_anc, whole, nw, nhead, nstop, named, multi,
    -- (a big section's text, its first 20,000 characters, from its first 40,000: text is body
    -- less ** and ` and with <br> and tabs as spaces, so the two agree but for the last few
    -- characters of the shorter, and where that still holds more than 20,000 characters that are
    -- not all trailing spaces, they are the same; else the whole text, as for every other section.
    -- The snippet and the phrase test read it the same way)
    case when (select explain from q) then
      case when tok then 'exact' when not (any_ or in_doc) then 'none'
           when (select instr(lower(substr(coalesce(case when big then (
                   select case when length(rtrim(substr(t, 1, length(t) - 10))) > 20000 then t end
                   from (select trim(replace(replace(replace(replace(substr(s.body, 1, 40000), '**', ''), '`', ''), '<br>', ' '), char(9), ' ')) as t limit -1 offset 0)) end, s.text), 1, 20000) || ' ' || s.path), lower(t))
                 from sections as s where s.id = x.id) then 'exact'
           else 'stem' end end,
    max(any_ or in_doc or in_page) over (partition by pos), hx, describes, kt, aw, big
  from (
    select hit.id, hit.pos, hit.t, hit.ident, hit.idf, hit.total, hit.bm_n, hit.hx,
      hit.describes, hit.kt, hit.aw, hit.big,
      -- an identifier the index holds counts only as written (PAYMENTS_DB_URL is not found in
      -- PAYMENTS_DB_URL_RO, though FTS5 finds its words there in a row), or, for a CamelCase
      -- one, by a heading that writes its words apart ("Door Left Open" for DoorLeftOpen); a
      -- version word (not `ident`, see term) by its words, as FTS5 finds them: HTTP 2 for HTTP/2
      case when hit.strong and hit.ident then hit.ev is not null or (hit.split and coalesce(hit.b & 8, 0) > 0)
           else hit.b is not null end as any_,
      coalesce(hit.b & 2, 0) > 0 as in_file, coalesce(hit.b & 4, 0) > 0 as in_doc,
      coalesce(hit.b & 8, 0) > 0 as in_head,
      case when coalesce(hit.b & 4, 0) > 0 then 0
           else coalesce(hit.ev, 0) end as ev,
      hit.in_page, hit.ev is not null as tok, hit.nparts,
      -- (the file name words the term names: those of its match when it spans several, see hit)
      case when hit.b >= 64 then hit.b / 32 else hit.jw end as jw, hit.wide,
      -- (in_anc: a parent heading holds it, and neither the heading nor the document: see trail)
      coalesce(hit.b & 16, 0) > 0 and coalesce(hit.b & 8, 0) = 0 and coalesce(hit.b & 4, 0) = 0 as in_anc,
      replace(hit.fw, ' ', '') = replace(replace(replace(lower(hit.t), '-', ''), '_', ''), '.', '')
        or instr(' ' || coalesce(hit.comp, '') || ' ', ' ' || replace(hit.fw, ' ', '') || ' ') > 0 as whole,
      hit.nw, hit.nhead, hit.nstop, hit.named, hit.multi
    from hit) as x
),
-- The signals, each between 0 and 1 (shares of the query's idf unless said otherwise):
--   bm     bm25 over the whole query, relative to the best candidate; a section the query
--          names (`named` in cand: its file name and heading, word for word) whose name names
--          the query too (every key term but a wide one, the product's own name, is in its
--          path, file name, title or heading: cluster-crd.md's "Cluster Settings" is no name
--          for "cluster crd network settings") and that holds every key term (cover 1) counts
--          as the best: bm25 divides by the section's length, so a long section
--          ("Configuration", a table of forty settings) that the query and it name each other
--          would lose to the short ones beside it that merely repeat its words;
--   cover  coordination: how much of the query the section or its document's name holds at
--          all (half for an identifier only another section of its page holds): half the share
--          of the query's idf, half the share of its terms squared (a term counts for its words:
--          a four-part flag name is not one word among two common ones), so a section with all four
--          terms beats a short one with three even when the missing one is a common word; a word
--          most sections hold (`wide` in key) counts only in the idf share, where its idf is
--          already small: a section that leaves out the product's name has not missed a term;
--          and both shares are of the terms some candidate holds (`held` in termhit): a word no
--          candidate holds (the question says "get rid of", the docs say "remove") tells no
--          candidate from another, so it does not shrink every candidate's coverage against
--          bm25 and the heading (bm25 is relative to the best candidate for the same reason);
--   exact  exact-token evidence: identifiers the query names, held by the section as written
--          (case-exact and defining counts more), as a share of the query, not of the best
--          candidate, so an ordinary word that is a token somewhere earns only its share;
--   hprec  the share of the heading's words (stop words aside) the query names: a heading the
--          query spells out in full ("Errors", "Breaking Changes") beats one it half matches;
--          a compound word of the heading (kebab, snake or dotted) counts in the share of its
--          parts the query names: "hosts" names half of "Host-based", though a part most
--          sections hold (`wide`: the product's name in argocd-repo-server) is no part the
--          query left out; a CamelCase word (the head column holds its parts, git-lab, after
--          the heading) is a name, of a product, a kind or an alert, and counts only when the
--          query names all of it, whole or part by part: "git" names none of GitLab, and
--          "api down" none of KubeAPIErrorsHigh; a word the query writes whole is one word
--          named, not one and its parts again. One highlight() of the heading column with
--          every key term ORed (hexpr), only for a candidate whose heading holds a compound
--          and a term, or a term of several words (a phrase: "Door Left Open" for DoorLeftOpen
--          names three words); other headings count the key terms their heading holds, as
--          before (the same share when each term names one word). It counts in the score (and in
--          --explain) times min(1, 0.5 + cover), see base: a heading is evidence of what the
--          section is about only as far as the section holds the question; one that a word or
--          two of a long question name ("Further reading" for "... so a data-fix task can read
--          it", "Cluster autoscaler" for "which cluster add-on publishes hostnames ...") in a
--          section that holds little else of it earns half; from cover 0.5 up, all of it. (Or
--          `file` instead of cover, when it is more: a page the query names by its file name,
--          the tool "... using dip" says to use, is what its heading says it is.) The tests on
--          hprec 1 (a heading named in full: empty, near, page, trail) read the share itself;
--   file   how well the file name and the query name each other: the share of the file
--          name's words the query holds, squared (a half-named file is weak evidence), times
--          the square root of the share of the query the file name holds (tool-sub.md beats
--          tool.md for "tool sub ...", and make.md wins little for "make a ..."; the root, as
--          a service's name is one word of a long question); an identifier that spells the
--          whole name (PaymentsGatewayDown for PaymentsGatewayDown.md) names all of it, and so
--          do two query words whose compound the docs write and spells the whole name written
--          apart ("git config" for git-config.md, where .gitconfig makes gitconfig a word: each
--          half of the compound counts half, as for argocd.md, and would name half); a kebab
--          term names the words its match spans (kube-proxy two of KubeProxyDown's three, as
--          "kube proxy" written apart does); two
--          query words that make one compound ("argo cd" for argocd) count as one word; a stop
--          word of the file name the query writes is named too ("tool about ..." names all of
--          tool-about.md), though it adds nothing to the query's share (a file named only by
--          stop words earns nothing); the share is at most 1 (two forms of a word, "files ...
--          file", name file.md once); a term written after "with", "using" or "via" (a stop
--          word too, see term: "with at") that is a word of the file name, when the query
--          names every word of it ("tidy up a JSON blob using jq" for jq.md), each in the
--          words right after that with (as many as the name has), names the tool the query
--          says to use, so that page gets the whole credit: the task's verb may name another
--          page (tidy.md), the tool word is what picks the page ("apply a patch with git am"
--          names git-am.md, not git-apply.md, whose apply is the task's verb); of several
--          such pages, the one of the longest name ("with terraform plan": terraform-plan.md,
--          not terraform.md, see signal);
--   phrase the whole text, two words or more, occurs as a phrase (an error message, a quoted
--          log line);
--   role   the query asks for a kind of section ("how do I fix" → Mitigation, Solution) and
--          the heading names one, or the parent's heading is one and no page title (the
--          steps under "Mitigation");
--   empty  a page title (h1) with no text of its own, or a line or two (120 characters), but
--          children below it: the answer is further down. A deeper section with a short
--          paragraph of its own (250 characters) over children counts 0.15 of that, unless the
--          query names its whole heading (`hprec` 1) or quotes its text whole (`phrase`, see
--          base: "fragmented state in etcd", a string its paragraph holds): such a lead-in
--          ("Node loss: a node went down ...") tells what its children solve, so it shares
--          their words, but a question it does not name asks for a child. (An empty
--          "## Troubleshooting" over its cases, which "X troubleshooting" names, is an answer:
--          it stays.)
--   ident  the share of the query's identifiers (`ident` in term) the section, its document's
--          name (not for a flag: a name holds no dashes before it) or another section of its
--          page holds as written: a section of the page that defines the flag or variable the
--          query names beats one that only shares its common words; an absent identifier costs
--          every hit alike.
--   near   the share of the query's neighbouring word pairs (see `close`) the section holds
--          within a word of each other, either order ("mon settings" in "Mon Settings", "wet
--          clay keeps"): words the query puts together, found together; 0 when the query names
--          identifiers and the section holds none of them (`exact`: else forty "Feature flags"
--          headings take "<flag> feature flag" from the one section that holds the flag).
--          Computed in `close`, after `base`. The text column starts with the heading line:
--          a match there whose two words sit one each side of its end ("Firing to cone" over
--          "Pack shelves ...") is no pair, unless the query names the whole heading (`hprec`
--          1: "tool about print details" for "tool about" over "Print details ...").
--   page   the share of the ten best candidates that are other sections of the same page, the
--          query's words spread over one page (computed last, in `ranked`, see there).
--   trail  the query's share (by idf) that the section's parent headings hold and its own
--          heading, file name, title and path do not, counted only when the query names its
--          heading in full (`hprec` 1, in base): "<parent> <heading>" names one of many
--          sections with the same heading ("seal configuration" for Seal > Configuration among
--          a Configuration under each tool), where bm25 prefers the shortest one that merely
--          mentions the parent's word. A child whose heading the query does not name earns
--          nothing for its parent's words, or every step under "Remove an OSD" would pass the
--          section that is the answer.
-- terms: for --explain, each key term's match, in the query's order.
feature(id, bm, cover, exact, hprec, file, fwith, fnw, ident, nexact, nident, terms, held, describes, kt, named,
        allhead, allident, anc, big) as materialized (
  select id, bm, cover, exact,
    case when nin = 0 then 0.0
         else coalesce((
           select (
          with w(i, v, inside, grp) as materialized (
            -- (the head column's space-separated words, marked; inside: the word starts in a span;
            -- grp: the word is a CamelCase word's parts, after the heading's words; none when no
            -- heading word is marked at all)
            select cast(j.key as integer), j.value,
              coalesce(sum(length(j.value) - length(replace(j.value, char(1), ''))
                           - length(j.value) + length(replace(j.value, char(2), ''))) over (
                         order by cast(j.key as integer) rows between unbounded preceding and 1 preceding), 0) > 0,
              cast(j.key as integer) >= length(s.heading) - length(replace(s.heading, ' ', '')) + 1
            from (select highlight(sections_fts, 3, char(1), char(2)) as h from sections_fts
                  where sections_fts match x.hx and rowid = s.id) as hl,
                 json_each('[' || replace(json_quote(hl.h), ' ', '","') || ']') as j
            where instr(hl.h, char(1)) > 0),
          f(grp, f) as materialized (
            -- (per word: a heading word or a CamelCase word's parts (grp), and the share of its
            -- parts, stop words and wide words aside, that lie in a marked span (a phrase, like
            -- a kebab term, is marked as one span); NULL for a stop word; a CamelCase word counts
            -- whole or by its parts: its parts are NULL when the word itself is marked, as the
            -- query's own CamelCase term marks both, DocumentDB and its phrase "Document DB")
            select w.grp,
              case when w.grp
                        and exists (select 1 from w as h
                                    where not h.grp and (h.inside or instr(h.v, char(1)) > 0)
                                      and instr(lower(replace(replace(h.v, char(1), ''), char(2), '')),
                                                replace(lower(replace(replace(w.v, char(1), ''), char(2), '')), '-', '')) > 0)
                   then null
                   when w.v not glob '*[-_./]*' then
                case when lower(rtrim(ltrim(replace(replace(w.v, char(1), ''), char(2), ''), '"''`([{<'), '"''`)]}>.,:;!?'))
                          in (select word from mdfts_stopwords union all select '') then null
                     when w.inside or instr(w.v, char(1)) > 0 or instr(w.v, char(2)) > 0 then 1.0 else 0.0 end
              else (
                -- (its parts, stop words and wide words aside, and the share of them the query
                -- names: a part that holds a span's start, or lies in a span opened before it,
                -- in an earlier part or word; for a CamelCase word's parts, all of them or none)
                select case when w.grp then sum(p.named) = count(*) else sum(p.named) * 1.0 / nullif(count(*), 0) end
                from (select lower(replace(replace(j.value, char(1), ''), char(2), '')) as part,
                        instr(j.value, char(1)) > 0
                          or w.inside + coalesce(sum(length(j.value) - length(replace(j.value, char(1), ''))
                                                     - length(j.value) + length(replace(j.value, char(2), ''))) over (
                                                   order by cast(j.key as integer) rows between unbounded preceding and 1 preceding), 0) > 0 as named
                      from json_each('[' || replace(replace(replace(replace(json_quote(w.v),
                             '-', '","'), '_', '","'), '.', '","'), '/', '","') || ']') as j) as p
                where p.part <> '' and p.part not in (select word from mdfts_stopwords)
                  and not exists (select 1 from term_df as d where d.term = p.part and d.wide)) end
            from w where w.v <> '')
          select min(1.0, coalesce(sum(f), 0) / max(sum(not grp), 1)) from f where f is not null)
           from sections as s
           where s.id = x.id and not x.big and (mh or s.heading glob '*[-_./]*' or s.heading_parts <> ''
                                  -- (a phrasal verb's two words both find its single verb: one
                                  -- heading word, "Purge" for "clean up", counted once)
                                  -- (cue holds each pair of neighbouring terms, "verb particle")
                                  or exists (select 1 from cue as c join mdfts_phrasal as p
                                               on p.verb = substr(c.n, 1, instr(c.n, ' ') - 1)
                                              and p.particle = substr(c.n, instr(c.n, ' ') + 1)
                                             where instr(c.n, ' ') > 0))), hcount) end,
    -- (a short file name, three words at most, that the query names by words it writes apart
    -- - "the kiln ... my controller" for kiln-controller.md - earns a quarter: such a name is
    -- written whole, its words together, and words strewn over a question name something else
    -- - the controller a probe sits on; unless a word of it stands in the words after with,
    -- using or via, where the query names the tool; a long name, an alert's many parts, is
    -- told part by part)
    fsh * fsh * fidf * case when fapart and not fafter and fnw <= 3 then 0.25 else 1.0 end as file,
    fwith and fsh >= 1.0 as fwith, fnw,
    ident, nexact, nident, terms, held, describes, kt, named, allhead, allident, anc, big
  from (
  select th.id, max(th.bm_n) as bm, max(th.hx) as hx,
    -- (named, see cand, and the other way round: every key term, wide ones aside, is in the
    -- section's name too, its document's (path, file name, title) or its heading; see bm)
    max(th.named) and sum(not th.wide and not (th.in_doc or th.in_head)) = 0 as named,
    max(th.describes) as describes, max(th.kt) as kt,
    -- (allhead: the heading holds every key term; allident: each is an identifier; for empty)
    sum(not th.in_head) = 0 as allhead, sum(not th.ident) = 0 as allident,
    -- (the shares are of the key terms some candidate holds: `held`, else of all of them)
    0.5 * sum(th.idf * case when th.any_ or th.in_doc then 1.0 when th.in_page then 0.5 else 0 end)
        / coalesce(nullif(sum(th.idf * th.held), 0), max(th.total))
      + 0.5 * (sum(th.nparts * (not th.wide) * case when th.any_ or th.in_doc then 1.0 when th.in_page then 0.5 else 0 end)
               / coalesce(nullif(sum(th.nparts * (not th.wide) * th.held), 0), sum(th.nparts * (not th.wide))))
            * (sum(th.nparts * (not th.wide) * case when th.any_ or th.in_doc then 1.0 when th.in_page then 0.5 else 0 end)
               / coalesce(nullif(sum(th.nparts * (not th.wide) * th.held), 0), sum(th.nparts * (not th.wide)))) as cover,
    min(sum(th.ev) / max(th.total), 1.0) as exact,
    -- (hprec's inputs, see the outer select: how many key terms the heading holds, its
    -- share by that count, and whether one of them is a phrase of several words)
    sum(th.in_head) as nin, min(1.0, sum(th.in_head) * 1.0 / max(max(th.nhead), 1)) as hcount,
    max(th.multi and th.in_head) as mh,
    -- (file, in the outer select: fsh, the file name's share the query names, squared, times
    -- fidf; fwith: a word of the file name is right after with, using or via, every word of
    -- it the query names stands in the fnw words after one of them, and with fsh 1 the query
    -- names all of it; fnw: its number of words, see signal; fafter: a word of it stands in the
    -- fnw words after with, using or via, wherever else the query writes it ("kiln ... with kiln
    -- vent"); fapart: the words of it the query names lie more than a word apart)
    min(1.0, (sum(case when not th.in_file then 0 when th.whole then th.nw else th.jw end) + max(th.nstop)) * 1.0 / max(th.nw))
      as fsh,
    sqrt(sum(th.idf * th.in_file) / max(th.total)) as fidf,
    max(th.in_file and th.aw)
      and sum(th.in_file and not exists (select 1 from raw as r where r.tool
                                          and th.pos between r.pos + 1 and r.pos + th.nw)) = 0 as fwith,
    max(th.nw) as fnw,
    -- (behind a CASE, so the raw query is read only for a term the file name holds)
    max(case when th.in_file then exists (select 1 from raw as r join raw as r2 on r2.pos between r.pos + 1 and r.pos + th.nw
                                          where r.tool
                                            and rtrim(lower(r2.v), '?.,!;:') = lower(th.t)) else 0 end) as fafter,
    max(case when th.in_file then th.pos end) - min(case when th.in_file then th.pos end) > sum(th.in_file) + 1 as fapart,
    -- (a document's name holds an identifier as written, but never a flag: git-delete-branch.md
    -- names the command git delete-branch, not --delete-branch, which only a token can hold)
    sum(case when not th.ident then 0 when th.tok or (th.in_doc and th.t not glob '-*') or th.in_page then 1.0 else 0 end)
      / max(sum(th.ident), 1) as ident,
    sum(th.ident and (th.tok or (th.in_doc and th.t not glob '-*'))) as nexact, sum(th.ident) as nident,
    sum(th.idf * th.in_anc) / max(th.total) as anc, max(th.big) as big,
    -- (group_concat skips NULLs: without --explain this costs nothing)
    '[' || group_concat(case when (select explain from q) then json_object('pos', th.pos, 'term', th.t, 'idf', th.idf,
      'identifier', json(case when th.ident then 'true' else 'false' end), 'match', th.how) end) || ']' as terms,
    -- (held: the positions of the key terms the section holds, then, negated, those its
    -- heading holds, ",1,3,-3,", for `near`)
    ',' || group_concat(case when th.any_ then th.pos end, ',') || ','
      || coalesce(group_concat(case when th.in_head then '-' || th.pos end, ',') || ',', '') as held
  from termhit as th
  group by th.id
  limit -1 offset 0) as x  -- (not flattened: the aggregates would be computed once per use)
),
signal(id, bm, cover, exact, hprec, file, phrase, role, empty, ident, nexact, nident, terms, held,
       describes, kt, trail, big) as materialized (
  select f.id, case when f.named and f.cover >= 0.9999 then 1.0 else f.bm end, f.cover, f.exact, f.hprec,
    -- (a tool the query says to use: the page whose whole name the words after with, using or
    -- via spell, the longest such, "with terraform plan" for terraform-plan.md, not terraform.md)
    case when f.fwith and f.fnw >= max(case when f.fwith then f.fnw end) over () then 1.0
         else min(f.file, 1.0) end,
    -- (phrase: a substring test over the section's first 20,000 characters, case folded; a
    -- phrase lookup in FTS5 would walk the doclists of the query's stop words. A link
    -- reference's label is markup no reader sees, so the text as a label - `[old rota][pugmill
    -- cleaning]` and its definition `[pugmill cleaning]: https://...` - is taken out first; a
    -- link's own text, `[pugmill cleaning](...)`, is seen and stays. Each label taken out holds
    -- the text, so a section whose prefix does not hold it at all is a 0 before the two replaces)
    case when (select count(*) from raw) >= 2 then
      coalesce((select case when instr(l, p) = 0 then 0
                            else instr(replace(replace(l, '][' || p || ']', ''), '[' || p || ']:', ''), p) > 0 end
                from (select lower(substr(coalesce(case when f.big then (
                   select case when length(rtrim(substr(t, 1, length(t) - 10))) > 20000 then t end
                   from (select trim(replace(replace(replace(replace(substr(s.body, 1, 40000), '**', ''), '`', ''), '<br>', ' '), char(9), ' ')) as t limit -1 offset 0)) end, s.text), 1, 20000)) as l,
                        x.p
                      from sections as s, (select lower(trim(s)) as p from q) as x where s.id = f.id
                      limit -1 offset 0)), 0)
    else 0 end,
    -- (role: no lookup at all when the query names no role cue; the role words in the heading
    -- column, by highlight() of a plain match: a column filter, `head : (...)`, on a row that
    -- holds the word elsewhere reads on through the word's rows, 2.3 ms a lookup at 1M. Else
    -- the parent's heading when it is a role word asked for, whole, as base reads a heading's
    -- role, and the parent is no page title: the steps under a Mitigation ("Mitigation >
    -- Recommended Actions") are the fix, but a page titled "Fix log" does not make every
    -- section of it one. By the sections table, not FTS5: a highlight() of another row whose
    -- rowid comes from a subquery read on through the role words' rows, 150 ms at p95 on 100k)
    (select case when x.e is null then 0
                 when case when f.big
                           then exists (select 1 from sections_fts
                                        where sections_fts match '{head} : (' || x.e || ')' and rowid = f.id)
                           else coalesce((select instr(highlight(sections_fts, 3, char(1), ''), char(1)) > 0 from sections_fts
                                          where sections_fts match x.e and rowid = f.id), 0) end then 1
                 else exists (select 1 from sections as c join sections as p on p.id = c.parent_id
                              where c.id = f.id and p.level > 1
                                and lower(trim(p.heading)) in (select value from json_each(x.words))) end
     from rolex as x),
    -- (n: the section's own text, its heading line aside; the children lookup last)
    -- (a page title that the query names alone, and whole - every key term in the heading, and
    -- hprec 1 - is asked for by its name: it is the answer, when the query writes identifiers
    -- only, "KubeletPlegDurationHigh", or the title is one word, a name: "Watchdog", or a
    -- compound the query spells out, "kubelet pleg duration high"; plain words, "clay storage"
    -- for "Clay storage", ask what its children say)
    (select case when (s.level = 1 and n <= 120
                       and not (f.allhead and f.hprec >= 0.9999
                                and (f.allident or instr(s.heading, ' ') = 0)))
                      or (s.level > 1 and n <= 250 and f.hprec < 1)
                 then coalesce((select c.parent_id from sections as c where c.id = s.next_id) = s.id, 0)
                      * case when s.level = 1 then 1.0 else 0.15 end
                 else 0 end
     from (select id, level, next_id, heading, heading_parts,
                  -- (a big section's first 40,000 characters: more than 250 of its own there are
                  -- more than 250 in the whole; else the whole is read)
                  case when f.big and n0 <= 250
                       then (select length(trim(substr(b, instr(b || char(10), char(10))), ' =-' || char(9) || char(10)))
                             from (select trim(body) as b from sections where id = f.id limit -1 offset 0))
                       else n0 end as n
           from (select id, level, next_id, heading, heading_parts,
                        length(trim(substr(b, instr(b || char(10), char(10))), ' =-' || char(9) || char(10))) as n0
                 from (select id, level, next_id, heading, heading_parts,
                              trim(case when f.big then substr(body, 1, 40000) else body end) as b
                       from sections where id = f.id))) as s),
    f.ident, f.nexact, f.nident, f.terms, coalesce(f.held, ''), f.describes, f.kt,
    -- (trail: only for a heading the query names in full, see the signals)
    case when f.hprec >= 0.9999 then f.anc else 0 end, f.big
  from feature as f
),
-- (A section's children follow it at once: it has some when the next section's parent is it.)
-- The weight of each signal: the score is their weighted sum (--explain shows each part).
weight(bm, cover, exact, hprec, file, phrase, role, empty, ident, answer, near, page, trail) as (
  select 2.0, 1.5, 1.0, 1.0, 1.5, 1.0, 0.5, -2.0, 1.5, 1.0, 1.0, 0.5, 0.5
),
-- act: the query asks what to do: "how" (not "how many", "how long", "how few", "how bad",
-- "how does", "how is": a quantity, a degree - how and a word of measure - or a working), a
-- "do" that closes the query, or does but for an adverb of time or manner ("what should I do
-- instead?", "what do I do first"), or opens its condition ("what should I do?", "what should I do
-- when ...", "what to do if ...") or a fix cue (fix, resolve, mitigate,
-- ...), unless it asks how to check; chk: a check cue (check, verify, investigate, debug,
-- diagnose, troubleshoot, inspect; or tell, see, find, find out, work out, figure out, track down
-- before an indirect question - which, if, whether, why ...: "how can I tell whether", "how can I
-- see what", "how do I find out which" ask what is the case, "work out a swap" and "find a new
-- one" do not) is the query's verb - within three words after "how"
-- ("how do I check", "how would I verify"), or anywhere when there is no "how"; or the query
-- asks where to look - see, look, find, read or view within three words after "where": "where
-- do I see the actual scrape error?" - and no fix
-- cue is (in "how do I get it accepted
-- and check it first" the question is what to do); worked out once, in a step of its own: inside
-- key, named in many places, each copy of it cost compile time; as a subquery in base's join,
-- SQLite copied it into each place base reads it (2-3 % of p50 at 10k sections); rq: the query
-- names a cue of what a problem is or does (mean, what happens, impact, affects, symptoms: see
-- `role`), so it asks for that section of a runbook-like page (see base's sym and ans); not a
-- fix or check cue (act and chk weigh those by where they stand) nor "why" (see base); wq: the
-- query names a cue whose role says what a problem is (why, mean, impact: Meaning, Impact,
-- Investigation), not a check cue nor a why that a check verb opens, so such a section is
-- asked for and is no `sym` for base (worked out here, once, not per candidate in base)
asks(act, chk, rq, wq) as materialized (
  select (select count(*) from raw as a left join raw as b on b.pos = a.pos + 1
     where (lower(a.v) = 'how'
            and coalesce(lower(rtrim(b.v, '?.,;:!')), '') not in (
              'many', 'much', 'long', 'often', 'big', 'large', 'old', 'far', 'soon', 'come', 'does', 'did', 'is', 'are', 'was',
              'few', 'fast', 'slow', 'quick', 'quickly', 'high', 'low', 'small', 'full', 'close', 'bad', 'serious', 'severe',
              'urgent', 'important', 'safe', 'likely', 'frequently', 'recent', 'recently', 'early', 'late'))
        or (lower(rtrim(a.v, '?.,;:!')) = 'do'
            and (b.pos is null or lower(rtrim(b.v, '?.,;:!')) in ('when', 'if', 'after', 'about', 'now', 'next', 'first', 'then', 'instead')))
        or lower(rtrim(a.v, '?.,;:!')) in (select cue from mdfts_roles where word = 'mitigation')) > 0
      and not chk as act, chk,
    exists (select 1 from mdfts_roles
            where cue in (select value from json_each(cues)) and cue <> 'why'
              and cue not in (select cue from mdfts_roles where word in ('mitigation', 'diagnosis'))) as rq,
    exists (select 1 from mdfts_roles as r
            where r.cue in (select value from json_each(cues))
              and r.cue not in (select cue from mdfts_roles where word = 'diagnosis')
              -- (a why the check opens, "how do I check why ...", is what it checks)
              and not (chk and r.cue = 'why')
              and r.word in (select word from mdfts_roles where cue in ('why', 'mean', 'means', 'impact'))) as wq
     from (select json_group_array(n) as cues from cue),
          (select (exists (select 1 from raw as d
                          left join raw as o1 on o1.pos = d.pos + 1 left join raw as o2 on o2.pos = d.pos + 2
                          where (lower(rtrim(d.v, '?.,;:!')) in (select cue from mdfts_roles where word = 'diagnosis')
                                 -- (the word that opens the indirect question: after a check cue
                                 -- of two words, find out, work out, track down, look into ...,
                                 -- else after tell, see or find: "tell whether" holds its own)
                                 or case when lower(d.v) || ' ' || lower(o1.v) in (select cue from mdfts_roles
                                                                                   where word = 'diagnosis' and instr(cue, ' ') > 0)
                                              and lower(o1.v) not in ('whether', 'if')
                                         then lower(rtrim(o2.v, '?.,;:!'))
                                         when lower(d.v) in ('tell', 'see', 'find') then lower(rtrim(o1.v, '?.,;:!')) end
                                    in ('which', 'what', 'why', 'who', 'whose', 'where', 'when', 'whether', 'if', 'how'))
                            and (not exists (select 1 from raw where lower(v) = 'how')
                                 or exists (select 1 from raw as h where lower(h.v) = 'how' and d.pos between h.pos + 1 and h.pos + 3)))
                  -- (where to look: "where can I see ...", "where do I look")
                  or exists (select 1 from raw as wh join raw as d on d.pos between wh.pos + 1 and wh.pos + 3
                             where lower(wh.v) = 'where' and lower(rtrim(d.v, '?.,;:!')) in ('see', 'look', 'find', 'read', 'view')))
                  and not exists (select 1 from raw
                                  where lower(rtrim(v, '?.,;:!')) in (select cue from mdfts_roles where word = 'mitigation')) as chk)
),
-- The score before `answer`; sym: where a page describes its problem, when the query describes
-- something (two or more words that are not identifiers) or asks what to do (an alert's name is
-- enough then: "what should I do when X fires?") and does not ask for symptoms: a
-- Symptoms heading, or one that diagnoses (Investigation, Cause: mdfts_roles, cue
-- 'why') or, when the query asks what to do (`act`, see asks: "how do I", "what should I do"),
-- one that says what the problem is (a runbook's Meaning, Description or Impact: cues 'mean'
-- and 'impact'), and when it asks how to check (`chk`), also one that is a fix word (its
-- Mitigation, whose steps name the things the check looks at, so it holds the question's
-- words: "how can I see what is using up the file descriptors?"),
-- unless the query asks for such a section (why, mean, impact, what happens:
-- then it asks for that section, see `role`; not a why a check verb opens), names its heading
-- in full, or quotes it whole (`phrase`: a log line pasted from it); or, when the query asks
-- for a role (`rq`, see asks: "what happens to the cluster once ...", "what does X mean"), any
-- other section whose heading
-- is a role word (its Diagnosis, Mitigation, Meaning ...); ans: a heading that is the role
-- asked for (`role` above 0: its Impact), which then takes the best of those siblings' scores,
-- as the page's words are spread over its sections and the question says which one it wants
-- (not for "why": runbooks answer it in their Meaning or Diagnosis, no Cause heading, and a
-- why question is as often about either); or, unless the query asks for another role, a
-- heading that holds a fix word (Solution,
-- Resolution, Workaround, Mitigation, Remediation, Fix: mdfts_roles, cue 'fix'; "Potential
-- resolution steps", "How to fix the problem"), or, when the query asks how to check (`chk`,
-- see asks: "how do I check whether ...", "how can I verify"), a Diagnosis or Investigation
-- heading (cue 'check'), which then takes the Meaning's or Impact's score as a Mitigation does
-- for `act`; lead: a
-- lead-in (`empty` above 0: a short paragraph over children) when the query describes
-- something and asks what to do (`act`, see asks; "what does the checklist hold" or "X errors"
-- does not: it asks for the lead-in's own list); first: the section is its parent's first
-- child (looked up only when the query asks what to do: only a lead-in's hand-off reads it).
base(id, score0, bm, cover, exact, hprec, file, phrase, role, empty, ident, nexact, nident, terms,
     document_id, parent_id, sym, ans, lead, first, held, kt, halt, trail, big) as materialized (
  select g.id, w.bm * g.bm + w.cover * g.cover + w.exact * g.exact
               -- (hprec as far as the section, or its file name, holds the question: see the signals)
               + w.hprec * g.hprec * min(1.0, 0.5 + max(g.cover, g.file))
               + w.file * g.file + w.phrase * g.phrase + w.role * g.role
               + w.empty * g.empty + w.ident * g.ident + w.trail * g.trail,
    g.bm, g.cover, g.exact, g.hprec, g.file, g.phrase, g.role, g.empty, g.ident, g.nexact, g.nident, g.terms,
    s.document_id, s.parent_id,
    (lower(trim(s.heading)) in (select cue from mdfts_roles where cue like 'symptom%')
     or (lower(trim(s.heading)) in (select word from mdfts_roles where cue in ('why', 'mean', 'means', 'impact'))
         and not g.phrase and g.hprec < 1
         and not a.wq
         and case when a.chk then lower(trim(s.heading)) not in (select word from mdfts_roles where cue = 'check')
                  else lower(trim(s.heading)) in (select word from mdfts_roles where cue = 'why') or a.act end))
      and (g.describes or a.act)
    or (a.chk and not g.phrase and g.hprec < 1
        and lower(trim(s.heading)) in (select word from mdfts_roles where cue = 'fix'))
    or (a.rq and g.role = 0 and lower(trim(s.heading)) in (select word from mdfts_roles)),
    (a.rq and g.role > 0 and lower(trim(s.heading)) in (select word from mdfts_roles))
    or ((not a.rq or g.role > 0) and exists (select 1 from mdfts_roles
            where cue = case when a.chk then 'check' else 'fix' end
              and instr(' ' || lower(replace(replace(replace(replace(s.heading, ':', ' '), '?', ' '), ',', ' '), '.', ' ')) || ' ', ' ' || word || ' ') > 0)),
    g.empty > 0 and g.describes and a.act
      and lower(trim(s.heading)) not in (select cue from mdfts_roles where cue like 'symptom%'),
    case when a.act then coalesce((select p.next_id from sections as p where p.id = s.parent_id) = s.id, 0) else 0 end,
    g.held, g.kt,
    -- (halt: the path's file extension, see `close`)
    ' OR ("' || replace(replace(s.path, rtrim(s.path, replace(s.path, '.', '')), ''), '"', '""') || '"', g.trail, g.big
  -- (a lead-in, `empty` below 1, whose own text the query quotes whole is asked for by the
  -- quote, as by its whole heading: no lead-in then, for the score nor for `lead`)
  from (select id, bm, cover, exact, hprec, file, phrase, role,
               case when phrase > 0 and empty < 1 then 0 else empty end as empty,
               ident, nexact, nident, terms, held, describes, kt, trail, big
        from signal) as g
  join sections as s on s.id = g.id, weight as w,
    asks as a
),
-- near (see the signals), for the eight best candidates by the score so far (near reorders the
-- top of the list; it does not bring rows in from below; with the five best only, a section
-- that holds the query's words together fell out of reach whenever a few sections elsewhere
-- took a little file or page credit, 1.2 % of p50 for the three more): one FTS5 lookup (a
-- rowid seek, with highlight() of the text column, to see where the heading line ends) per pair whose two words
-- the section holds, two when a synonym is tried too. The pairs: neighbouring key terms, in the
-- query's order, neither an identifier ("mon settings" in "CephCluster mon settings": an
-- identifier is weighed as written, by exact and ident), each as FTS5 expressions that find the
-- two within a word of each other, in either order: expr as written; syn by a synonym of either
-- or the docs' term for either, a plain word (mdfts_plain; NULL when neither has one), looked up
-- only when expr fails. A term's compounds are left out
-- ("argo cd" -> argocd would find the one word twice). They are worked out from the key terms
-- each row carries (kt), for each of the eight: as a step of their own, naming key, they copied
-- key's tree into the statement once more (~0.5 ms of its compile). (Looked up for every candidate, near
-- cost a third more CPU at p95 on the bench queries.) A NEAR that fails on the row asked for
-- does not stop there: FTS5 reads on to the next row where it holds, however far (3 ms a
-- lookup at 1M sections). So each NEAR is ORed with `"md" NOT (a AND b)` (b.halt: the file
-- extension of the candidate's path, then g.halt): no row that holds both terms matches it,
-- and the candidate does, but the next section of that file type that lacks one of them does,
-- and the lookup ends there. (FTS5 tests a NOT once at the index's first rows too, before it
-- seeks: its left side is a word nearly every row holds, so that test ends at once; `a NOT b`
-- read on through every row holding both, and cost more than it saved.)
close as materialized (
  select b.*,
    case when (b.nident = 0 or b.nexact > 0) and b.rk <= 8
         then coalesce((select sum(case when instr(b.held, ',' || g.a || ',') > 0 and instr(b.held, ',' || g.b || ',') > 0
                                        then coalesce((
                                          -- (as written, then by a synonym: the first form that holds)
                                          select 1 from (select g.expr || b.halt || g.halt as e union all select g.syn || b.halt || g.halt where g.syn is not null) as f
                                          where case
                                            -- (a match can straddle the end of the heading line only
                                            -- when the heading holds one of the two words)
                                            when b.hprec >= 1 or b.big or (instr(b.held, ',-' || g.a || ',') = 0
                                                                  and instr(b.held, ',-' || g.b || ',') = 0)
                                            then exists (select 1 from sections_fts where sections_fts match f.e and rowid = b.id)
                                            -- (h: the text column, each word of a NEAR match marked;
                                            -- its heading line ends at the first line break: a match
                                            -- whose two words sit one each side of it is no pair,
                                            -- unless the query names the whole heading, above: then
                                            -- it reads on from the heading into the text, as a page's
                                            -- name and its summary do)
                                            else coalesce((
                                              select nl = 0 or tm = 0 or hm >= 2 or tm - hm >= 2
                                              from (select nl, tm, length(substr(h, 1, nl)) - length(replace(substr(h, 1, nl), char(1), '')) as hm
                                                    from (select h, instr(h, char(10)) as nl, length(h) - length(replace(h, char(1), '')) as tm
                                                          from (select highlight(sections_fts, 0, char(1), '') as h from sections_fts
                                                                where sections_fts match f.e and rowid = b.id)
                                                          limit -1 offset 0))), 0) end
                                          limit 1), 0)
                                        else 0 end) * 1.0 / count(*)
                        from (
                          select a.pos as a, a.bpos as b, 'NEAR("' || replace(a.t, '"', '""') || '" "' || replace(a.bt, '"', '""') || '", 1)' as expr,
                            (select group_concat('NEAR("' || replace(x.v, '"', '""') || '" "' || replace(y.v, '"', '""') || '", 1)', ' OR ')
                             from (select a.t as v union select s2.word from mdfts_synonyms as s1
                                   join mdfts_synonyms as s2 on s2.grp = s1.grp and s2.word <> s1.word
                                   where s1.word in (a.n, rtrim(a.n, 's'), a.n || 's')
                                   union select p.term from mdfts_plain as p where p.word in (a.n, rtrim(a.n, 's'), a.n || 's')) as x,
                                  (select a.bt as v union select s2.word from mdfts_synonyms as s1
                                   join mdfts_synonyms as s2 on s2.grp = s1.grp and s2.word <> s1.word
                                   where s1.word in (a.bn, rtrim(a.bn, 's'), a.bn || 's')
                                   union select p.term from mdfts_plain as p where p.word in (a.bn, rtrim(a.bn, 's'), a.bn || 's')) as y
                             where x.v <> a.t or y.v <> a.bt) as syn,
                            ' NOT ((' || a.hx || ') AND (' || a.bhx || ')))' as halt
                          from (select pos, t, n, ident, hx, lead(pos) over w as bpos, lead(t) over w as bt, lead(n) over w as bn,
                                       lead(ident) over w as bident, lead(hx) over w as bhx
                                from (select json_extract(k.value, '$[0]') as pos, json_extract(k.value, '$[1]') as t,
                                        json_extract(k.value, '$[2]') as n, json_extract(k.value, '$[3]') as ident,
                                        json_extract(k.value, '$[4]') as hx
                                      from json_each(b.kt) as k)
                                window w as (order by pos)) as a
                          where a.bpos is not null and not a.ident and not a.bident) as g), 0)
         else 0 end as near
  -- (close carries every column of base on, so ranked reads close alone: a second reference
  -- to base would copy its whole tree into the statement SQLite compiles)
  from (select *, row_number() over (order by score0 desc, id) as rk from base) as b
),
-- answer: a Solution (Resolution, Workaround, ...) beside a Symptoms, Investigation or Meaning (`sym`) section
-- under the same heading takes the better one's score and a hair more (in score points, not
-- 0-1): a query that describes a problem matches where the page restates it (its symptoms, or
-- the status and logs its investigation shows), but it asks for the fix. Likewise a lead-in
-- (`lead`: "Node loss: when a node is lost, pods on it are stuck Terminating", over "Force
-- deleting the pod" and "Blocklisting a node") states the problem its children act on: it
-- holds the query's words, but its first child takes its score and a hair more when the query
-- asks what to do.
-- page: the share of the ten best candidates (by the score before near and answer: near only
-- reorders the eight best, so they are the same ten) that are other sections of the same page,
-- 0 to 0.9: when the question's words are spread over one page, the answer is on that page,
-- rather than in the one section elsewhere that happens to hold a few of them (passage
-- retrieval weighs a passage's document the same way). None when one of the five best (by
-- the score before near) has a heading the query names in full (`hprec` 1): the query names that
-- section, and a page that holds its words more often must not pass it.
-- (answer's window is per page, ordered by parent, its frame the peers: per page and parent,
-- as its meaning is, but in the same sort as page's count per page; a window of its own costs
-- SQLite another pass, and compile time, over every column carried here. A lead-in sorts by
-- its own id (`peer`), so its frame is that of its children, its first child among them.)
ranked(id, score, bm, cover, exact, hprec, file, phrase, role, empty, ident, answer, near, page, nexact, nident,
       terms, kt, trail, rank) as (
  select b.id, round(b.score1 + w.answer * b.answer + w.page * b.page, 6),
    b.bm, b.cover, b.exact, b.hprec, b.file, b.phrase, b.role, b.empty, b.ident, b.answer, b.near, b.page,
    b.nexact, b.nident, b.terms, b.kt, b.trail,
    -- (the rank here, over these few columns: in the last select its window would copy every
    -- column of each row, the body too, through a table of its own)
    row_number() over (order by round(b.score1 + w.answer * b.answer + w.page * b.page, 6) desc, b.id)
  from (select b.*, case when b.ans then max(0, coalesce(max(case when b.sym then b.score1 end) over (
                                  partition by b.document_id order by b.peer
                                  range between current row and current row),
                                0) + 0.001 - b.score1)
                          when b.first and not b.lead then max(0, coalesce(max(case when b.lead then b.score1 end) over (
                                  partition by b.document_id order by b.peer
                                  range between current row and current row),
                                0) + 0.001 - b.score1)
                    else 0 end as answer,
          case when max(case when b.rk <= 5 then b.hprec end) over () >= 1 then 0
               else (sum(b.rk <= 10) over (partition by b.document_id order by b.peer
                                           rows between unbounded preceding and unbounded following)
                     - (b.rk <= 10)) / 10.0 end as page
        from (select b.*, b.score0 + w.near * b.near as score1,
                case when b.lead then b.id else b.parent_id end as peer
              from close as b, weight as w) as b) as b, weight as w
  order by 2 desc, 1
  limit (select lim from q)
),
-- The snippet, in three steps over the returned rows only (`ranked` holds at most :limit): up to
-- 160 characters of prose around the first key word (by its stem's prefix) found in the first
-- 20,000 characters of the section's text below its heading, the word marked [like this]. instr
-- and substr over a bounded prefix: the cost does not grow with the section or with repeats
-- (FTS5's snippet() is quadratic in how often a term repeats within a section).
-- snip_x: the text as prose. Line breaks and tabs read as spaces, so a marked word ends at the
-- end of its line; the heading line (and a setext heading's underline) is left out (the hit
-- shows its heading already) unless nothing follows it; a block quote's markers that start a
-- line (`> `, two deep at most) go, as a reader sees the quote, not its marks, and so do those of a
-- docs site's admonition, tab or container (`!!! `, `??? `, `???+ `, `=== `, `:::`: its type and
-- title stay, the words a reader sees there); table pipes and rules are
-- blanked, runs of spaces folded. (The prefix is cut once: `limit -1 offset 0` keeps its subquery whole, not
-- copied into each use of w.)
snip_x as materialized (
  select r.*,
    (select trim(replace(replace(replace(replace(replace(replace(replace(replace(replace(
              coalesce(nullif(case when lv = 0 then w
                                   when instr(w, char(10)) > 0
                                   then (select ltrim(case when trim(substr(t, 1, instr(t || char(10), char(10)) - 1),
                                                                     '=- ' || char(13)) = ''
                                                           then substr(t, instr(t || char(10), char(10)) + 1)
                                                           else t end, char(10) || char(13) || ' ')
                                         from (select substr(w, instr(w, char(10)) + 1) as t))
                                   else '' end, ''), ltrim(w, '# ')),
              char(10), ' '), char(13), ' '), char(9), ' '), '|', ' '), '---', ''),
              '   ', ' '), '   ', ' '), '  ', ' '), '  ', ' '))
     from (select lv,
             substr(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
                      char(10) || t0, char(1), ''), char(2), ''), char(3), ''),
                      char(10) || '> >', char(10)), char(10) || '>>', char(10)), char(10) || '> ', char(10)),
                    char(10) || '>', char(10)), char(10) || '!!! ', char(10)), char(10) || '???+ ', char(10)),
                    char(10) || '??? ', char(10)), char(10) || '=== ', char(10)), char(10) || ':::', char(10)), 2) as w
           from (select s.level as lv,
                   substr(coalesce(case when (select d.bytes from documents as d where d.id = s.document_id) > 100000 then (
                     select case when length(rtrim(substr(t, 1, length(t) - 10))) > 20000 then t end
                     from (select trim(replace(replace(replace(replace(substr(s.body, 1, 40000), '**', ''), '`', ''), '<br>', ' '), char(9), ' ')) as t limit -1 offset 0)) end, s.text), 1, 20000) as t0
                 from sections as s where s.id = r.id
                 limit -1 offset 0)
           limit -1 offset 0)) as x
  from ranked as r
),
-- snip_at: where the first key word starts in that prose (`at`, 0 when none is there) and the
-- prefix of its stem that found it (`w`: the term less its last two letters, at least three;
-- `whole`: the identifier as written), as a pair from one subquery a row (a join of snip_x with
-- itself instead doubled the compile). The key terms' words come from the row (kt, see key):
-- naming part here copied its tree into the statement twice.
-- An identifier the query names, found as written (case folded), comes first: its context is
-- the most specific (`--force-with-lease`, not the `with` of its parts); then a key word that
-- starts a word (`lb`: after a space or one of - _ . / ( [ " ' : = < *): "over" is not the `ove`
-- of "above".
snip_at as materialized (
  select r.*, coalesce(json_extract(j, '$[0]'), 0) as at, json_extract(j, '$[1]') as w,
    coalesce(json_extract(j, '$[2]'), 0) as whole
  from (select r.*, (select json_array(at, w, whole) from (
          -- (a term found where it starts a word is not looked for a second time: instr scans the
          -- whole prefix when it finds nothing, and the prefix may be long)
          select case when ws > 0 then ws else instr(lx, w) end as at, ws, w, whole from (
          select t.lx, p.w as w, p.whole,
            case when p.whole then 0 else instr(t.lb, ' ' || p.w) end as ws
          from (select lx,
                  ' ' || replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
                           lx, '-', ' '), '_', ' '), '.', ' '), '/', ' '), '(', ' '), '[', ' '), '"', ' '), '''', ' '),
                           ':', ' '), '=', ' '), '<', ' '), '*', ' ') as lb
                from (select lower(r.x) as lx) limit -1 offset 0) as t,
               (select e.value as w, 0 as whole from json_each(r.kt) as k, json_each(k.value, '$[5]') as e
                union all
                select json_extract(k.value, '$[2]'), 1 from json_each(r.kt) as k
                where json_extract(k.value, '$[3]') and length(json_extract(k.value, '$[2]')) >= 3) as p
          limit -1 offset 0)
          order by at = 0, whole desc, ws = 0, at limit 1)) as j
        from snip_x as r
        limit -1 offset 0) as r
),
-- snip_c: a 600-character window of the prose around that word (from 200 before it) with the
-- markup a reader does not see taken out, so a link's address does not fill the snippet or clash
-- with the mark: a link or an image reads as its text ([text](url), [text][label], ![alt](src)).
-- The window is split at each [ (json_each, as `raw` splits the query); a piece that opens a
-- link is cut to its text, then what follows the link's end; a reference's definition
-- ([label]: url) goes, with its address; a bracket that opens no link stays. An address cut by
-- the window's end goes. A marker no piece used (an image inside a link) reads as written (the
-- text's own characters 1, 2 and 3, the markers, are dropped in snip_x). The word's place is
-- marked too (character 3, at3 once the rest is cleaned): the addresses taken out before it move
-- it; a word in an address takes its link's place (a piece that held the marker and lost it
-- starts with it). With no word (at 0) the marker leads the window, unused. Then an autolink
-- (<https://...>, <mailto:...>: the address is its text) loses its brackets, split at each < the
-- same way; a < that opens no autolink stays. A window with no [ (or no <) has no piece to
-- clean, and passes that step as it is (each step would give it back unchanged).
snip_c as materialized (
  select *, instr(c3, char(3)) as at3, replace(c3, char(3), '') as c from (
  select r.*, r.s0 + 599 < length(r.x) as more,
    (select case when instr(a, '<') = 0 then a else (
     select group_concat(case when key > 0 and e > 1 and instr(substr(v, 1, e), ' ') = 0
                                   and (l glob 'http://?*' or l glob 'https://?*' or l glob 'mailto:?*' or l glob 'ftp://?*')
                              then substr(v, 1, e - 1) || substr(v, e + 1)
                              when key > 0 then '<' || v else v end, '')
     from (select key, value as v, instr(value, '>') as e, lower(ltrim(value, char(3))) as l
           from json_each('[' || replace(json_quote(a), '<', '","') || ']')
           order by key)) end
     from (select case when instr(w, '[') = 0 then w else
    replace(replace((select group_concat(case when instr(v0, char(3)) > 0 and instr(v, char(3)) = 0
                                              then char(3) || v else v end, '') from (
      select v0, case
        when key = 0 then v0
        when d2 > 0 and (e = 0 or d2 < e) then substr(v0, 1, d2 - 1)
          || case when instr(substr(v0, d2 + 1), ')') > 0
                  then substr(v0, d2 + 1 + instr(substr(v0, d2 + 1), ')')) else '' end
        when d1 > 0 and (e = 0 or d1 < e) then substr(v0, 1, d1 - 1)
          || case when instr(substr(v0, d1 + 1), ']') > 0
                  then substr(v0, d1 + 1 + instr(substr(v0, d1 + 1), ']')) else '' end
        when e > 0 and substr(v0, e + 1, 1) = ':'
        then substr(ltrim(substr(v0, e + 2)), instr(ltrim(substr(v0, e + 2)) || ' ', ' ') + 1)
        else '[' || v0 end as v
      from (select key, value as v0, instr(value, char(2)) as d2, instr(value, char(1)) as d1,
              instr(value, ']') as e
            from json_each('[' || replace(json_quote(replace(replace(replace(w,
                   '![', '['), '](', char(2)), '][', char(1))),
                   '[', '","') || ']'))
      order by key)), char(2), ']('), char(1), '][') end as a
           from (select substr(r.x, r.s0, r.at - r.s0) || char(3) || substr(r.x, r.at, 600 - r.at + r.s0) as w)
           limit -1 offset 0)) as c3
  from (select *, case when at > 200 then at - 200 else 1 end as s0 from snip_at) as r
  limit -1 offset 0)
)
select
  r.rank,
  s.id, s.path, s.heading,
  case when s.level = 0 then '[]'
       when s.ancestors_packed is null then '[' || json_quote(s.heading) || ']'
       else '["' || replace(s.ancestors_packed, char(31), '", "') || '", ' || json_quote(s.heading) || ']' end as trail,
  s.anchor, s.level, s.start_line, s.end_line, r.score,
  -- The snippet (see snip_x above): an identifier marked where it first stands alone in the
  -- window (`lw`: space or punctuation each side: --shove is not the start of --shove-with-care),
  -- another key word where it first starts a word (as in snip_at, and after , ; ) ] > too: the
  -- window's `lw` has those blanked already; else where it starts a CamelCase part,
  -- ssl[CertificateRef]), the mark ending where the word does (at a space, a bracket or
  -- parenthesis, a quote, *, < or >; a word with no end in the next 100 characters, a blob, is
  -- marked as far as the search matched it). A key word found only inside a word or an address
  -- leaves the window unmarked.
  (select case when at2 > 0 then
            (case when r.s0 > 1 or at2 > 61 then '…' else '' end) || substr(r.c, max(1, at2 - 60), min(at2, 61) - 1)
            || '[' || substr(r.c, at2, len) || ']' || substr(r.c, at2 + len, 100)
            || (case when at2 + len + 99 < length(r.c) or r.more then '…' else '' end)
          when r.at > 0 then (case when r.s0 > 1 or r.at3 > 60 then '…' else '' end)
                             || substr(r.c, max(1, r.at3 - 60), 160)
                             || (case when r.at3 + 99 < length(r.c) or r.more then '…' else '' end)
          else substr(r.c, 1, 120) end
   from (select at2, case when instr(ww, ' ') = 0 and length(ww) = 100 then length(r.w)
                          else max(length(r.w), length(rtrim(substr(ww, 1, instr(ww || ' ', ' ') - 1), '.,:;!?}'''))) end as len
         from (select at2, replace(replace(replace(replace(replace(replace(replace(replace(
                             substr(r.c, at2, 100), ']', ' '), '[', ' '), '(', ' '), ')', ' '), '"', ' '), '*', ' '),
                             '<', ' '), '>', ' ') as ww
               from (select case when r.at = 0 then 0
                                 when r.whole then coalesce(nullif(instr(lw, ' ' || r.w || ' '), 0), instr(lc, r.w))
                                 else coalesce(nullif(instr(replace(replace(replace(replace(
                                                            lw, '-', ' '), '_', ' '), '.', ' '), '/', ' '), ' ' || r.w), 0),
                                               case when substr(r.c, instr(lc, r.w), 1) glob '[A-Z]'
                                                    then instr(lc, r.w) else 0 end) end as at2
                     from (select lc, ' ' || replace(replace(replace(replace(replace(replace(replace(
                                   replace(replace(replace(replace(replace(replace(replace(
                                   lc || ' ', '. ', '  '), ',', ' '), ';', ' '), ':', ' '), '(', ' '), ')', ' '), '[', ' '), ']', ' '), '"', ' '),
                                   '''', ' '), '<', ' '), '>', ' '), '=', ' '), '*', ' ') as lw
                           from (select lower(r.c) as lc) limit -1 offset 0)
                     limit -1 offset 0)
               limit -1 offset 0))) as snippet,
  s.body,
  (r.nident = 0 or r.nexact > 0) as exact,
  -- explain: per signal its value (0-1), weight, points (value x weight) and share of the
  -- score; per key term how it matched: exact (as written: an exact token, or the term itself
  -- in the text or path), stem (only by its stem or a synonym), or none.
  case when :explain then json_object(
    'score', r.score, 'identifiers', r.nident, 'identifiers_exact', r.nexact,
    'signals', (select json_group_object(name, json_object('value', round(v, 4), 'weight', wt,
                         'points', round(v * wt, 4), 'share', round(v * wt / nullif(r.score, 0), 4)))
                from (select 'bm25' as name, r.bm as v, w.bm as wt from weight as w
                      union all select 'cover', r.cover, w.cover from weight as w
                      union all select 'exact', r.exact, w.exact from weight as w
                      union all select 'hprec', r.hprec * min(1.0, 0.5 + max(r.cover, r.file)), w.hprec from weight as w
                      union all select 'file', r.file, w.file from weight as w
                      union all select 'phrase', r.phrase, w.phrase from weight as w
                      union all select 'role', r.role, w.role from weight as w
                      union all select 'empty', r.empty, w.empty from weight as w
                      union all select 'ident', r.ident, w.ident from weight as w
                      union all select 'answer', r.answer, w.answer from weight as w
                      union all select 'near', r.near, w.near from weight as w
                      union all select 'page', r.page, w.page from weight as w
                      union all select 'trail', r.trail, w.trail from weight as w)),
    'terms', (select json_group_array(json_remove(j.value, '$.pos'))
              from (select value from json_each(r.terms) order by json_extract(value, '$.pos')) as j)) end as explain
from snip_c as r
join sections as s on s.id = r.id
order by r.score desc, r.id;
