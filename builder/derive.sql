-- Tables derived from the rows at build time, for the shipped queries (see queries/search.sql).
-- idf uses mdfts_ln(), a function the builder registers, because ln() is a compile-time
-- option that many SQLite builds lack: queries read the precomputed values and need no math.

-- Document frequency and idf of every FTS term found in more than one section.
create virtual table temp.vocab using fts5vocab(main, 'sections_fts', 'row');
create table term_df (
  term text primary key,
  df   integer not null,   -- sections whose indexed columns contain the term
  idf  real not null       -- ln(1 + (N - df + 0.5) / (df + 0.5)), N = sections
) without rowid;
insert into term_df
select term, doc, round(mdfts_ln(1.0 + ((select count(*) from sections) - doc + 0.5) / (doc + 0.5)), 4)
from temp.vocab where doc > 1 order by term;
drop table temp.vocab;

-- The same for exact tokens (by lookup form) found in more than one section.
create table token_df (
  norm text primary key,
  df   integer not null,
  idf  real not null
) without rowid;
insert into token_df
select norm, count(distinct section_id) as df,
       round(mdfts_ln(1.0 + ((select count(*) from sections) - count(distinct section_id) + 0.5)
                      / (count(distinct section_id) + 0.5)), 4)
from tokens group by norm having count(distinct section_id) > 1 order by norm;

-- Words a search ignores unless the query has nothing else.
create table mdfts_stopwords (word text primary key) without rowid;
insert into mdfts_stopwords values
  ('a'), ('about'), ('after'), ('all'), ('am'), ('an'), ('and'), ('any'), ('are'), ('as'), ('at'),
  ('be'), ('been'), ('before'), ('being'), ('but'), ('by'), ('can'), ('could'), ('did'), ('do'),
  ('does'), ('doing'), ('done'), ('during'), ('each'), ('for'), ('from'), ('get'), ('gets'),
  ('had'), ('has'), ('have'), ('having'), ('he'), ('her'), ('here'), ('him'), ('his'), ('how'),
  ('i'), ('if'), ('in'), ('into'), ('is'), ('it'), ('its'), ('just'), ('me'),
  ('my'), ('need'), ('needs'), ('of'), ('on'), ('or'), ('our'), ('please'), ('should'), ('so'),
  ('some'), ('than'), ('that'), ('the'), ('their'), ('them'), ('then'), ('there'), ('these'),
  ('they'), ('this'), ('those'), ('to'), ('use'), ('used'), ('using'), ('via'), ('was'), ('we'),
  ('were'), ('what'), ('whats'), ('when'), ('where'), ('which'), ('while'), ('who'), ('whom'),
  ('why'), ('will'), ('with'), ('would'), ('you'), ('your');

-- Short forms and the words they stand for, general to technical writing (porter already
-- matches plurals and verb forms, so those need no row): a search matches any word of a
-- group for any other.
create table mdfts_synonyms (
  grp  integer not null,
  word text not null,
  primary key (grp, word)
) without rowid;
insert into mdfts_synonyms (grp, word) values
  (1, 'env'), (1, 'environment'),
  (2, 'config'), (2, 'configuration'),
  (3, 'db'), (3, 'database'),
  (4, 'repo'), (4, 'repository'),
  (5, 'auth'), (5, 'authentication'),
  (6, 'docs'), (6, 'documentation'),
  (7, 'prod'), (7, 'production'),
  (8, 'k8s'), (8, 'kubernetes'),
  (9, 'cert'), (9, 'certificate'),
  (10, 'var'), (10, 'variable'),
  (11, 'prereq'), (11, 'prerequisite');
create index mdfts_synonyms_word on mdfts_synonyms(word, grp);

-- What a question asks for, by the section's role: a query holding a cue word ("how do I fix
-- X") prefers a section whose heading holds one of its role words (Mitigation, Solution).
create table mdfts_roles (
  cue  text not null,   -- a query word, lower-case
  word text not null,   -- a heading word that answers it (matched by stem)
  primary key (cue, word)
) without rowid;
insert into mdfts_roles (cue, word) values
  ('fix', 'fix'), ('fix', 'mitigation'), ('fix', 'solution'), ('fix', 'resolution'),
  ('fix', 'workaround'), ('fix', 'resolve'),
  ('resolve', 'mitigation'), ('resolve', 'solution'), ('resolve', 'resolution'), ('resolve', 'workaround'),
  ('solve', 'mitigation'), ('solve', 'solution'), ('solve', 'resolution'), ('solve', 'workaround'),
  ('mitigate', 'mitigation'), ('mitigate', 'workaround'),
  ('mean', 'meaning'), ('mean', 'description'), ('means', 'meaning'), ('means', 'description'),
  ('why', 'cause'), ('why', 'causes'), ('why', 'reason'), ('why', 'investigation'),
  ('symptom', 'symptoms'), ('symptoms', 'symptoms');
