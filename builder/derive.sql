-- Tables derived from the rows at build time, for the shipped queries (see queries/search.sql).
-- idf uses mdfts_ln(), a function the builder registers, because ln() is a compile-time
-- option that many SQLite builds lack: queries read the precomputed values and need no math.

-- Document frequency and idf of every FTS term found in more than one section.
create virtual table temp.vocab using fts5vocab(main, 'sections_fts', 'row');
create virtual table temp.vocab_col using fts5vocab(main, 'sections_fts', 'col');
create table term_df (
  term text primary key,
  df   integer not null,   -- sections whose indexed columns contain the term
  idf  real not null,      -- ln(1 + (N - df + 0.5) / (df + 0.5)), N = sections, to 4 places and
                           -- at least 0.0001: a word in every one of 20,000 sections rounded
                           -- to 0, and a query of such words had no weight to share (NULL scores)
  wide integer not null,   -- 1: more than half of the sections hold it in their own words, not
                           -- only in their path (a folder's name): in one column of title,
                           -- heading, trail, text or tokens (a product's own name in its docs)
  tdf  integer,            -- a path word (more than half of the sections hold it, but most only
  tidf real                -- in their path: a folder every file sits in, the .md extension): the
                           -- df and idf of the sections that hold it in another column, which a
                           -- query word that only shares its stem is weighed by, and matched
                           -- outside the path (see mdfts_pathwords, and search.sql's part and key);
                           -- NULL for any other term
) without rowid;
insert into term_df (term, df, idf, wide)
select term, doc, max(0.0001, round(mdfts_ln(1.0 + ((select count(*) from sections) - doc + 0.5) / (doc + 0.5)), 4)),
       -- (the column count only for the few terms most sections hold at all)
       case when doc * 2 > (select count(*) from sections)
            then coalesce((select max(c.doc) from temp.vocab_col as c
                           where c.term = v.term and c.col not in ('path', 'file_words')), 0) * 2
                 > (select count(*) from sections)
            else 0 end
from temp.vocab as v where doc > 1 order by term;
-- (a path word: "contention" stems to content, and every path of a Hugo site starts content/;
-- "MDS" stems to md, the extension of every file; weighed by the df of the paths, such a word
-- counted nothing and matched every section. Its tdf sums
-- the other columns' counts, at most df: a section that holds it in two of them counts twice,
-- which errs towards the commoner; an exact count from fts5vocab's instance table read every
-- occurrence, 1.4 s of a 14 s build)
update term_df
set tdf = max(1, min(df, (select coalesce(sum(c.doc), 0) from temp.vocab_col as c
                          where c.term = term_df.term and c.col <> 'path')))
where wide = 0 and df * 2 > (select count(*) from sections);
-- (not a path word after all when most sections hold it in their own words, in different columns)
update term_df set tdf = null where tdf * 2 > (select count(*) from sections);
update term_df
set tidf = max(0.0001, round(mdfts_ln(1.0 + ((select count(*) from sections) - tdf + 0.5) / (tdf + 0.5)), 4))
where tdf is not null;
-- The words the paths write, as written, for those stems (folder and file names split at / - _ .
-- and a space, lower-case, the extension left out: .md, .html.md): a query that writes one,
-- "storage" for Storage-Configuration/, names the folder, and its path still counts; a word
-- that only shares the stem, "contention" for content/ or "MDS" for .md, does not.
create table mdfts_pathwords (
  word text primary key
) without rowid;
insert into mdfts_pathwords (word)
with recursive
-- (folder: the path up to its last /; name: the file name, less its extension, .html.md whole)
f(folder, name) as (
  select rtrim(path, replace(path, '/', '')), substr(path, length(rtrim(path, replace(path, '/', ''))) + 1)
  from documents),
p(s) as (
  select replace(replace(replace(replace(lower(folder ||
           case when lower(name) glob '*.html.md' then substr(name, 1, length(name) - 8)
                when instr(name, '.') > 0 then rtrim(rtrim(name, replace(name, '.', '')), '.')
                else name end), '-', '/'), '_', '/'), '.', '/'), ' ', '/') || '/'
  from f),
split(rest, word) as (
  select s, null from p
  union all
  select substr(rest, instr(rest, '/') + 1), substr(rest, 1, instr(rest, '/') - 1) from split where rest <> ''
),
-- (the path words' stems: a handful, so each split word is tested against a short list)
stem(term) as materialized (select term from term_df where tdf is not null)
select distinct split.word from split join stem on split.word glob stem.term || '*'
where length(split.word) >= 2
order by split.word;
drop table temp.vocab;
drop table temp.vocab_col;

-- The same for exact tokens (by lookup form) found in more than one section; strong: some
-- section holds it as a kind other than a name or a plain code span (search.sql's `strong`
-- reads it here rather than scanning every row of a common name).
create table token_df (
  norm   text primary key,
  df     integer not null,
  idf    real not null,
  strong integer not null
) without rowid;
insert into token_df
select n.norm, count(distinct r.section_id) as df,
       max(0.0001, round(mdfts_ln(1.0 + ((select count(*) from sections) - count(distinct r.section_id) + 0.5)
                                  / (count(distinct r.section_id) + 0.5)), 4)),
       max(r.kind_source / 5 not in (7, 10))  -- (kinds 7 and 10: name and code, see the view tokens)
from token_norms as n join token_rows as r on r.token_id = n.id
group by n.norm having count(distinct r.section_id) > 1 order by n.norm;

-- Words a search ignores unless the query has nothing else: English function words (the
-- common English list of NLTK, which bm25s ships as STOPWORDS_EN_PLUS, with its contractions,
-- and a few of our own: could, done, get, need, please, use, via, whats, would), so "because",
-- "same", "own" or "against" in a question weigh nothing rather than the idf of a word the docs
-- seldom write. Left out of that list: its single letters, and up, down, off, out, over, under,
-- which make another verb of the one before them or name a state in ops writing ("scale down",
-- "turn off", "the mons are up"). Added to it: the contractions of its words that it lacks
-- (what's, i'm, there's, can't, ...): "what's wrong" weighed "what's" as a word the docs
-- seldom write (search.sql reads a typographic apostrophe as '). And the fillers and modals of a
-- spoken question (actually, really, maybe, perhaps, anyway, somehow, also; may, might, must,
-- shall): the docs seldom write the fillers, so each weighed as the query's rarest word and
-- picked the one note that happens to say it. Not "whether": "check whether" is how docs word
-- a check, and a section that says it is often the one asked for.
create table mdfts_stopwords (
  word text primary key,
  page integer not null default 0   -- 1: some document's whole file name is the word (at.md,
                                    -- which.md): a query that writes it after with, using or
                                    -- via names that tool (see search.sql, term)
) without rowid;
insert into mdfts_stopwords (word) values
  ('a'), ('about'), ('above'), ('after'), ('again'), ('against'), ('ain'), ('all'), ('am'), ('an'),
  ('and'), ('any'), ('are'), ('aren'), ('aren''t'), ('as'), ('at'), ('be'), ('because'), ('been'),
  ('before'), ('being'), ('below'), ('between'), ('both'), ('but'), ('by'), ('can'), ('could'),
  ('couldn'), ('couldn''t'), ('did'), ('didn'), ('didn''t'), ('do'), ('does'), ('doesn'),
  ('doesn''t'), ('doing'), ('don'), ('don''t'), ('done'), ('during'), ('each'), ('few'), ('for'),
  ('from'), ('further'), ('get'), ('gets'), ('had'), ('hadn'), ('hadn''t'), ('has'), ('hasn'),
  ('hasn''t'), ('have'), ('haven'), ('haven''t'), ('having'), ('he'), ('her'), ('here'), ('hers'),
  ('herself'), ('him'), ('himself'), ('his'), ('how'), ('i'), ('if'), ('in'), ('into'), ('is'),
  ('isn'), ('isn''t'), ('it'), ('it''s'), ('its'), ('itself'), ('just'), ('ll'), ('ma'), ('me'),
  ('mightn'), ('mightn''t'), ('more'), ('most'), ('mustn'), ('mustn''t'), ('my'), ('myself'),
  ('need'), ('needn'), ('needn''t'), ('needs'), ('no'), ('nor'), ('not'), ('now'), ('of'), ('on'),
  ('once'), ('only'), ('or'), ('other'), ('our'), ('ours'), ('ourselves'), ('own'), ('please'),
  ('re'), ('same'), ('shan'), ('shan''t'), ('she'), ('she''s'), ('should'), ('should''ve'),
  ('shouldn'), ('shouldn''t'), ('so'), ('some'), ('such'), ('than'), ('that'), ('that''ll'),
  ('the'), ('their'), ('theirs'), ('them'), ('themselves'), ('then'), ('there'), ('these'),
  ('they'), ('this'), ('those'), ('through'), ('to'), ('too'), ('until'), ('use'), ('used'),
  ('using'), ('ve'), ('very'), ('via'), ('was'), ('wasn'), ('wasn''t'), ('we'), ('were'), ('weren'),
  ('weren''t'), ('what'), ('whats'), ('when'), ('where'), ('which'), ('while'), ('who'), ('whom'),
  ('why'), ('will'), ('with'), ('won'), ('won''t'), ('would'), ('wouldn'), ('wouldn''t'), ('you'),
  ('you''d'), ('you''ll'), ('you''re'), ('you''ve'), ('your'), ('yours'), ('yourself'),
  ('yourselves'),
  ('can''t'), ('he''d'), ('he''ll'), ('he''s'), ('here''s'), ('how''d'), ('how''s'), ('i''d'),
  ('i''ll'), ('i''m'), ('i''ve'), ('it''d'), ('it''ll'), ('she''d'), ('she''ll'), ('that''d'),
  ('that''s'), ('there''d'), ('there''ll'), ('there''s'), ('they''d'), ('they''ll'), ('they''re'),
  ('they''ve'), ('we''d'), ('we''ll'), ('we''re'), ('we''ve'), ('what''d'), ('what''ll'),
  ('what''re'), ('what''s'), ('when''s'), ('where''d'), ('where''s'), ('who''d'), ('who''ll'),
  ('who''re'), ('who''s'), ('why''s'),
  ('also'), ('actually'), ('really'), ('maybe'), ('perhaps'), ('anyway'), ('somehow'),
  ('may'), ('might'), ('must'), ('shall'),
  -- the prepositions NLTK's list lacks: "... without HTTP/2", "within a week", "inside my container"
  -- say how or where, not what; each weighed as a word and picked a short section that happens
  -- to say it (behind, around and over stay words: "behind a proxy", "work around", "fail over")
  ('without'), ('within'), ('onto'), ('upon'), ('among'), ('toward'), ('towards'), ('across'),
  ('along'), ('besides'), ('beyond'), ('despite'), ('per'), ('inside'), ('outside');
update mdfts_stopwords set page = 1 where word in (select file_words from documents);

-- Words that name the same thing in technical and ops writing; a search matches any word of a
-- group for any other (porter already matches plurals and verb forms, so those need no row).
-- Only true equivalents: words that are merely related (monitoring ~ alert, settings ~ config,
-- login ~ auth, version ~ deploy) made real questions match the wrong sections, so they are out.
create table mdfts_synonyms (
  grp  integer not null,
  word text not null,
  primary key (grp, word)
) without rowid;
insert into mdfts_synonyms (grp, word) values
  (1, 'env'), (1, 'environment'), (1, 'envvar'),
  (2, 'var'), (2, 'variable'),
  (3, 'config'), (3, 'configuration'), (3, 'configure'), (3, 'cfg'),
  (4, 'db'), (4, 'database'),
  (5, 'rollback'), (5, 'revert'), (5, 'undo'), (5, 'downgrade'),
  (6, 'oncall'), (6, 'pager'), (6, 'paging'), (6, 'escalation'), (6, 'escalate'),
  (7, 'permission'), (7, 'access'), (7, 'perms'), (7, 'acl'), (7, 'grant'),
  (8, 'deploy'), (8, 'deployment'), (8, 'release'), (8, 'rollout'), (8, 'ship'), (8, 'shipping'),
  (9, 'checklist'), (9, 'checks'), (9, 'preflight'),
  (10, 'migration'), (10, 'migrate'),
  (11, 'error'), (11, 'failure'), (11, 'err'),
  (12, 'alert'), (12, 'alerting'), (12, 'alarm'),
  (13, 'dashboard'), (13, 'graphs'),
  (14, 'retention'), (14, 'retain'), (14, 'ttl'), (14, 'expiry'),
  (15, 'secret'), (15, 'credential'), (15, 'creds'), (15, 'password'),
  (16, 'flag'), (16, 'toggle'),
  (17, 'log'), (17, 'logging'),
  (18, 'restart'), (18, 'reboot'), (18, 'bounce'),
  (19, 'latency'), (19, 'slow'), (19, 'slowness'),
  (20, 'outage'), (20, 'incident'), (20, 'downtime'),
  (21, 'backup'), (21, 'snapshot'),
  (22, 'restore'), (22, 'recover'), (22, 'recovery'),
  (23, 'auth'), (23, 'authentication'),
  (24, 'repo'), (24, 'repository'),
  (25, 'docs'), (25, 'documentation'),
  (26, 'prod'), (26, 'production'),
  (27, 'staging'), (27, 'preprod'),
  (28, 'k8s'), (28, 'kubernetes'), (28, 'kube'),
  (29, 'requirement'), (29, 'prerequisite'), (29, 'prereq'), (29, 'required'),
  (30, 'verify'), (30, 'verification'), (30, 'validate'), (30, 'validation'),
  (31, 'troubleshoot'), (31, 'debug'), (31, 'diagnose'),
  (32, 'owner'), (32, 'ownership'), (32, 'contact'), (32, 'maintainer'),
  (33, 'setup'), (33, 'install'), (33, 'installation'), (33, 'bootstrap'),
  (34, 'scale'), (34, 'scaling'), (34, 'autoscale'), (34, 'capacity'),
  (35, 'queue'), (35, 'backlog'),
  (36, 'cert'), (36, 'certificate'), (36, 'tls'), (36, 'ssl'),
  (37, 'cron'), (37, 'schedule'), (37, 'scheduled'),
  (38, 'delete'), (38, 'deletion'), (38, 'remove'), (38, 'purge'),
  (39, 'doc'), (39, 'runbook'), (39, 'playbook'), (39, 'sop'),
  (40, 'rotate'), (40, 'rotation'), (40, 'renew'), (40, 'renewal'), (40, 'rollover'),
  (41, 'local'), (41, 'locally'), (41, 'laptop'), (41, 'localhost'),
  (42, 'previous'), (42, 'prior'),
  (43, 'app'), (43, 'application'),
  (44, 'memory'), (44, 'ram'),
  (45, 'cpu'), (45, 'processor'),
  (46, 'allow'), (46, 'let');
create index mdfts_synonyms_word on mdfts_synonyms(word, grp);

-- A plain word a question uses for a term of the docs: machine for node, cap for limit, copies
-- for replicas, room for space, an allowance for a quota, drop for delete. The word also
-- searches the term; the term does not search the word (one way, unlike mdfts_synonyms): a
-- question that says "limit" asks about limits, and the docs' rare "cap" (Ceph's MDS caps are
-- capabilities) would only bring a high idf for another meaning. A term is a word the docs
-- write; porter matches its plural, and the query word matches as written, less or plus a final s.
create table mdfts_plain (
  word text not null,   -- a query word, lower-case
  term text not null,   -- a word of the docs it also searches
  primary key (word, term)
) without rowid;
insert into mdfts_plain (word, term) values
  ('machine', 'node'), ('host', 'node'), ('cap', 'limit'), ('copy', 'replica'), ('copies', 'replica'),
  ('room', 'space'), ('allowance', 'quota'), ('allowance', 'limit'), ('drop', 'delete'), ('drop', 'remove');

-- The acronyms the docs define, "virtual machine (VM)", "Persistent Volume Claims (PVCs)" or
-- "HPA (Horizontal Pod Autoscaler)" (mdfts.acronyms, called as mdfts_acronyms(), a function the
-- builder registers): a question writes either form, and the section it asks for may write the
-- other. Read from the docs themselves, so each index holds its own field's (OS is "operating
-- system" in one, and nothing in another), not a list that fits one set of docs. A query that
-- writes the acronym as the docs do also searches the long form as a phrase; one that writes
-- the long form's words in order also searches the acronym (see search.sql's syn).
create table mdfts_acronyms (
  short text not null,  -- as the docs write it, less a plural's s: VM, QoS, PVC
  long  text not null,  -- lower case, its last word singular: virtual machine, persistentvolumeclaim
  word  text not null,  -- a word of long, a row for each, and each part of a hyphenated one:
                        -- search.sql looks a query word up by it
  primary key (word, short, long)
) without rowid;
insert or ignore into mdfts_acronyms (short, long, word)
select p.short, p.long, w.value
from (select json_extract(j.value, '$[0]') as short, json_extract(j.value, '$[1]') as long
      from sections as s, json_each(mdfts_acronyms(s.body)) as j
      -- (only a body with a bracket reaches Python: 0.1 s a 100,000 sections of the bench's corpus)
      where instr(s.body, '(') > 0) as p,
  -- (long's words are letters, digits and hyphens, so each quotes as it is: "high-availability"
  -- and its parts, so that "high availability" finds it, and "multi-factor" its own row)
  json_each('["' || replace(p.long, ' ', '","') || '","' || replace(replace(p.long, '-', ' '), ' ', '","') || '"]') as w;
create index mdfts_acronyms_short on mdfts_acronyms(short);

-- Phrasal verbs: a verb and its particle that the docs usually write as one verb ("turn off"
-- where they say "disable", "get rid of" for "remove", "spin up" for "create"), the common ones
-- of software and ops writing, from general English usage (not from any query set). A query
-- that writes the verb and then the particle also searches the single verbs; a verb or a
-- particle alone does not ("the mons are up"). Where the pair is also written as one word
-- (rollback, setup, login) the compound rule in search.sql finds that; the verb's first
-- content word is the particle when the verb is a stop word ("get rid": of is not needed).
-- Each verb is stored in its regular forms (turn, turns, turned, turning; set, setting;
-- scale, scaled, scaling) and its irregular ones (spun, got, went, tore), so a search finds a
-- form by primary key; a few of the forms made by rule are no words (turnned): no query
-- writes them.
create table mdfts_phrasal (
  verb     text not null,   -- the query's verb, lower-case, in each of its regular forms
  particle text not null,   -- the word right after it
  word     text not null,   -- a single verb the docs write instead (matched by its stem)
  primary key (verb, particle, word)
) without rowid;
create temp table phrasal (verb text, particle text, word text);
insert into temp.phrasal (verb, particle, word) values
  ('turn', 'off', 'disable'), ('turn', 'off', 'deactivate'),
  ('turn', 'on', 'enable'), ('turn', 'on', 'activate'),
  ('switch', 'off', 'disable'), ('switch', 'off', 'deactivate'),
  ('switch', 'on', 'enable'), ('switch', 'on', 'activate'),
  ('shut', 'down', 'stop'), ('shut', 'down', 'halt'),
  ('shut', 'off', 'disable'), ('shut', 'off', 'stop'),
  ('power', 'off', 'shutdown'), ('power', 'off', 'stop'),
  ('power', 'on', 'boot'), ('power', 'on', 'start'),
  ('start', 'up', 'start'), ('start', 'up', 'boot'), ('start', 'up', 'launch'),
  ('boot', 'up', 'boot'), ('boot', 'up', 'start'),
  ('bring', 'up', 'start'), ('bring', 'up', 'launch'),
  ('bring', 'down', 'stop'), ('bring', 'down', 'shutdown'),
  ('spin', 'up', 'create'), ('spin', 'up', 'start'), ('spin', 'up', 'launch'), ('spin', 'up', 'provision'),
  ('spin', 'down', 'stop'), ('spin', 'down', 'terminate'),
  ('kick', 'off', 'start'), ('kick', 'off', 'trigger'), ('kick', 'off', 'launch'),
  ('stand', 'up', 'create'), ('stand', 'up', 'deploy'), ('stand', 'up', 'provision'),
  ('set', 'up', 'configure'), ('set', 'up', 'install'),
  ('tear', 'down', 'destroy'), ('tear', 'down', 'delete'), ('tear', 'down', 'remove'),
  ('take', 'down', 'stop'), ('take', 'down', 'disable'), ('take', 'down', 'remove'),
  ('take', 'out', 'remove'),
  ('get', 'rid', 'remove'), ('get', 'rid', 'delete'),
  ('clean', 'up', 'remove'), ('clean', 'up', 'delete'), ('clean', 'up', 'purge'),
  ('clear', 'out', 'remove'), ('clear', 'out', 'delete'), ('clear', 'out', 'purge'),
  ('wipe', 'out', 'erase'), ('wipe', 'out', 'delete'),
  ('phase', 'out', 'deprecate'), ('phase', 'out', 'retire'), ('phase', 'out', 'remove'),
  ('filter', 'out', 'exclude'), ('filter', 'out', 'remove'),
  ('leave', 'out', 'omit'), ('leave', 'out', 'exclude'),
  ('roll', 'back', 'revert'), ('roll', 'back', 'undo'), ('roll', 'back', 'downgrade'),
  ('back', 'out', 'revert'), ('back', 'out', 'undo'),
  ('roll', 'out', 'deploy'), ('roll', 'out', 'release'),
  ('roll', 'over', 'rotate'),
  ('look', 'up', 'find'), ('look', 'up', 'search'), ('look', 'up', 'query'),
  ('look', 'into', 'investigate'), ('look', 'into', 'troubleshoot'), ('look', 'into', 'debug'),
  ('look', 'at', 'inspect'), ('look', 'at', 'view'), ('look', 'at', 'examine'),
  ('track', 'down', 'find'), ('track', 'down', 'locate'), ('track', 'down', 'diagnose'),
  ('find', 'out', 'determine'), ('find', 'out', 'discover'),
  ('figure', 'out', 'determine'), ('figure', 'out', 'discover'),
  ('sort', 'out', 'resolve'), ('sort', 'out', 'fix'),
  ('log', 'in', 'authenticate'),
  ('log', 'into', 'login'), ('log', 'into', 'authenticate'),
  ('sign', 'in', 'login'), ('sign', 'in', 'authenticate'),
  ('sign', 'out', 'logout'),
  ('sign', 'up', 'register'),
  ('hook', 'up', 'connect'), ('hook', 'up', 'integrate'),
  ('plug', 'in', 'connect'), ('plug', 'in', 'install'),
  ('opt', 'out', 'disable'),
  ('opt', 'in', 'enable'),
  ('lock', 'down', 'restrict'), ('lock', 'down', 'harden'), ('lock', 'down', 'secure'),
  ('free', 'up', 'release'), ('free', 'up', 'reclaim'),
  ('scale', 'up', 'increase'),
  ('scale', 'down', 'reduce'), ('scale', 'down', 'decrease'),
  ('turn', 'up', 'increase'), ('turn', 'up', 'raise'),
  ('turn', 'down', 'reduce'), ('turn', 'down', 'decrease'), ('turn', 'down', 'lower'),
  ('speed', 'up', 'accelerate'), ('speed', 'up', 'optimize'),
  ('swap', 'out', 'replace'),
  ('fill', 'in', 'enter'), ('fill', 'in', 'provide'), ('fill', 'in', 'specify'),
  ('pass', 'in', 'provide'), ('pass', 'in', 'specify'), ('pass', 'in', 'supply'),
  ('bring', 'back', 'restore'), ('bring', 'back', 'recover'),
  ('get', 'back', 'restore'), ('get', 'back', 'recover'),
  ('carry', 'out', 'perform'), ('carry', 'out', 'execute'), ('carry', 'out', 'run'),
  ('run', 'into', 'encounter'),
  ('run', 'out', 'exhaust'),
  ('go', 'down', 'fail'), ('go', 'down', 'crash'),
  ('time', 'out', 'expire');
-- The forms no rule makes: the past and past participle of the irregular verbs above, and those
-- of a final y (carried, carries), every form the lexicon of lemminflect 0.2.3 (an English
-- inflection library) gives for a verb of the list that the rules below do not make.
create temp table phrasal_forms (verb text, form text);
insert into temp.phrasal_forms (verb, form) values
  ('bring', 'brought'), ('carry', 'carried'), ('carry', 'carries'), ('find', 'found'),
  ('get', 'got'), ('get', 'gotten'), ('go', 'gone'), ('go', 'went'), ('leave', 'left'),
  ('run', 'ran'), ('speed', 'sped'), ('spin', 'spun'), ('stand', 'stood'),
  ('take', 'taken'), ('take', 'took'), ('tear', 'tore'), ('tear', 'torn');
insert or ignore into mdfts_phrasal (verb, particle, word)
select form, particle, word from (
  select case r.k when 0 then p.verb when 1 then p.verb || 's' when 2 then p.verb || 'es'
                  when 3 then p.verb || 'ed' when 4 then p.verb || 'ing'
                  -- (a final consonant doubled: setting, logged; an e dropped: scaled, scaling)
                  when 5 then p.verb || substr(p.verb, -1) || 'ing'
                  when 6 then p.verb || substr(p.verb, -1) || 'ed'
                  when 7 then case when p.verb glob '*e' then p.verb || 'd' end
                  else case when p.verb glob '*e' then substr(p.verb, 1, length(p.verb) - 1) || 'ing' end
         end as form, p.particle, p.word
  from temp.phrasal as p,
       (select 0 as k union all select 1 union all select 2 union all select 3 union all select 4
        union all select 5 union all select 6 union all select 7 union all select 8) as r
  union all
  select f.form, p.particle, p.word
  from temp.phrasal as p join temp.phrasal_forms as f on f.verb = p.verb)
where form is not null;
drop table temp.phrasal;
drop table temp.phrasal_forms;

-- What a question asks for, by the section's role: a query holding a cue word ("how do I fix
-- X") prefers a section whose heading holds one of its role words (Mitigation, Solution). The
-- fix cues are the verbs a question asks what to do with: fix, resolve, solve, mitigate, and
-- deal ("how do I deal with it"), repair, remedy, remediate. The impact cues ask what a problem
-- does: happens, affects, consequences, worry, and break ("what could break?"; not "broken",
-- which describes the problem: "is something broken?" asks what it means), how serious or
-- severe, bad or risky it is, what can go wrong ("go wrong", "goes wrong"; not "went wrong",
-- which asks what did: a diagnosis) and what problems it causes ("what problems can it
-- cause?", "is it a problem if ...?"; "a problem" alone is not: "I have a problem with X" asks
-- how to fix it; nor lose: "how many degrees does it lose" asks a quantity). The meaning cues
-- ask what a thing is for or when it fires: mean, "what's the point of X?", "when does the
-- alert go off?", "how long can it run before the alert fires?" (a runbook's Meaning states
-- the alert's condition and its duration), "can X fire when ...", "what has to be down for X
-- to fire?", "... before the alert fires" (fire in a pair of words that asks when: not alone,
-- "fire the drill alert" is an act, nor "firing", which says that it does; so with trigger
-- and alert: "what triggers it?", "... before it alerts?"), what its name
-- stands for and what it is telling me (or us). What the asker loses or misses ("what do I
-- lose if the collector fails?", "what will we miss?") asks what a problem does, where what it
-- loses may be a quantity ("how many degrees does it lose"): "I lose", "we lose", "I miss" and
-- "we miss" are impact cues, lose alone is not. A cue
-- matches the query's word as written, so each is listed in the forms a question uses
-- (worried, impacted; the fix cues also as "what are the fixes?", "what resolves it?", "fixing
-- X", "remedies": not fixed, which says it is; nor "repairs", often what the problem is about:
-- "PG repairs take too long").
-- A cue of two words matches two neighbouring query words: "what stops working when ...", "do
-- my apps keep working?" ask what a problem does; "working" alone does not ("working from home").
-- The check cues (check, verify, investigate, debug, diagnose, troubleshoot) ask how to find out
-- what is wrong: a Diagnosis or an Investigation, and for the verbs of finding a fault (not
-- check or verify: "how do I verify the signature" asks no fault) a Troubleshooting section,
-- the heading most docs give it ("how do I debug X" → "X is unable to connect, how do I
-- troubleshoot it?"; the porter stem matches both). So do inspect, "look into", "find out",
-- "figure out" and "track down" ("how do I find out which container is failing?", "what should
-- I inspect?"), for a Diagnosis or Investigation; and confirm (a check), "work out" and
-- "narrow down" (as find out), "tell whether" and "tell if" ("how do I confirm the CPU usage
-- is really above 80%?", "how do I tell whether the client fails to pull or to send?").
-- The prevention cues (prevent, avoid, "in future", "in the future", "in the first place") ask how
-- to keep a problem from happening again: a Prevention section ("how can I stop VMs getting
-- stuck in the first place?"), not the Mitigation that ends it.
create table mdfts_roles (
  cue  text not null,   -- a query word, lower-case
  word text not null,   -- a heading word that answers it (matched by stem)
  primary key (cue, word)
) without rowid;
insert into mdfts_roles (cue, word) values
  ('fix', 'fix'), ('fix', 'mitigation'), ('fix', 'solution'), ('fix', 'resolution'),
  ('fix', 'workaround'), ('fix', 'resolve'), ('fix', 'remediation'),
  ('resolve', 'mitigation'), ('resolve', 'solution'), ('resolve', 'resolution'), ('resolve', 'workaround'),
  ('solve', 'mitigation'), ('solve', 'solution'), ('solve', 'resolution'), ('solve', 'workaround'),
  ('mitigate', 'mitigation'), ('mitigate', 'workaround'),
  ('deal', 'mitigation'), ('deal', 'solution'), ('deal', 'resolution'), ('deal', 'workaround'),
  ('repair', 'mitigation'), ('repair', 'solution'), ('repair', 'resolution'), ('repair', 'workaround'),
  ('remedy', 'mitigation'), ('remedy', 'solution'), ('remedy', 'resolution'), ('remedy', 'workaround'),
  ('remediate', 'mitigation'), ('remediate', 'remediation'), ('remediate', 'workaround'),
  ('mean', 'meaning'), ('mean', 'description'), ('means', 'meaning'), ('means', 'description'),
  ('point of', 'meaning'), ('point of', 'description'), ('go off', 'meaning'), ('go off', 'description'),
  ('goes off', 'meaning'), ('goes off', 'description'), ('how long', 'meaning'), ('how long', 'description'),
  ('fire when', 'meaning'), ('fire when', 'description'), ('fires when', 'meaning'), ('fires when', 'description'),
  ('fire if', 'meaning'), ('fire if', 'description'), ('fires if', 'meaning'), ('fires if', 'description'),
  ('to fire', 'meaning'), ('to fire', 'description'), ('alert fires', 'meaning'), ('alert fires', 'description'),
  ('alert fire', 'meaning'), ('alert fire', 'description'), ('alerts fire', 'meaning'), ('alerts fire', 'description'),
  ('why', 'cause'), ('why', 'causes'), ('why', 'reason'), ('why', 'investigation'),
  ('impact', 'impact'), ('happens', 'impact'), ('happen', 'impact'), ('affect', 'impact'),
  ('affects', 'impact'), ('affected', 'impact'), ('consequence', 'impact'), ('consequences', 'impact'),
  ('worry', 'impact'), ('worried', 'impact'), ('worries', 'impact'), ('worrying', 'impact'),
  ('impacts', 'impact'), ('impacted', 'impact'), ('affecting', 'impact'),
  ('break', 'impact'), ('breaks', 'impact'),
  ('risk', 'impact'), ('risks', 'impact'), ('harm', 'impact'), ('harms', 'impact'), ('harmful', 'impact'),
  ('hurt', 'impact'), ('hurts', 'impact'), ('suffer', 'impact'), ('fallout', 'impact'),
  ('danger', 'impact'), ('dangerous', 'impact'), ('serious', 'impact'), ('severe', 'impact'),
  ('go wrong', 'impact'), ('goes wrong', 'impact'),
  ('what problems', 'impact'), ('problems can', 'impact'), ('problem if', 'impact'),
  ('how bad', 'impact'), ('risky', 'impact'),
  ('stop working', 'impact'), ('stops working', 'impact'), ('keep working', 'impact'),
  ('keeps working', 'impact'), ('still work', 'impact'), ('still working', 'impact'),
  ('check', 'diagnosis'), ('check', 'investigation'), ('verify', 'diagnosis'), ('verify', 'investigation'),
  ('investigate', 'diagnosis'), ('investigate', 'investigation'), ('debug', 'diagnosis'),
  ('debug', 'investigation'), ('diagnose', 'diagnosis'), ('diagnose', 'investigation'),
  ('troubleshoot', 'diagnosis'), ('troubleshoot', 'investigation'),
  ('investigate', 'troubleshooting'), ('debug', 'troubleshooting'), ('diagnose', 'troubleshooting'),
  ('troubleshoot', 'troubleshooting'),
  ('inspect', 'diagnosis'), ('inspect', 'investigation'), ('look into', 'diagnosis'),
  ('look into', 'investigation'), ('find out', 'diagnosis'), ('find out', 'investigation'),
  ('figure out', 'diagnosis'), ('figure out', 'investigation'), ('track down', 'diagnosis'),
  ('track down', 'investigation'), ('narrow down', 'diagnosis'), ('narrow down', 'investigation'),
  ('work out', 'diagnosis'), ('work out', 'investigation'), ('confirm', 'diagnosis'),
  ('confirm', 'investigation'), ('tell whether', 'diagnosis'), ('tell whether', 'investigation'),
  ('tell if', 'diagnosis'), ('tell if', 'investigation'),
  ('symptom', 'symptoms'), ('symptoms', 'symptoms'),
  ('i lose', 'impact'), ('we lose', 'impact'), ('i miss', 'impact'), ('we miss', 'impact'),
  ('prevent', 'prevention'), ('prevents', 'prevention'), ('preventing', 'prevention'),
  ('avoid', 'prevention'), ('avoiding', 'prevention'), ('in future', 'prevention'),
  ('the future', 'prevention'), ('first place', 'prevention');
-- More meaning cues, each asking for both a Meaning and a Description.
insert into mdfts_roles (cue, word)
select c.column1, w.column1
from (values ('what triggers'), ('triggers it'), ('to trigger'), ('it trigger'), ('it triggers'),
             ('alert trigger'), ('alert triggers'), ('it fires'), ('it alerts'), ('stand for'),
             ('stands for'), ('telling me'), ('telling us')) as c,
     (values ('meaning'), ('description')) as w;
-- The fix cues in their other forms a question writes, each asking what its verb asks.
insert into mdfts_roles (cue, word)
select f.column2, r.word
from mdfts_roles as r
join (values ('fix', 'fixes'), ('fix', 'fixing'), ('resolve', 'resolves'), ('resolve', 'resolving'),
             ('solve', 'solves'), ('solve', 'solving'), ('mitigate', 'mitigates'), ('mitigate', 'mitigating'),
             ('deal', 'dealing'), ('repair', 'repairing'), ('remedy', 'remedies'),
             ('remediate', 'remediates'), ('remediate', 'remediating')) as f on f.column1 = r.cue;
