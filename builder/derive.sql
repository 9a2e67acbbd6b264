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
  ('i'), ('if'), ('in'), ('into'), ('is'), ('it'), ('its'), ('just'), ('me'), ('mean'), ('means'),
  ('my'), ('need'), ('needs'), ('of'), ('on'), ('or'), ('our'), ('please'), ('should'), ('so'),
  ('some'), ('than'), ('that'), ('the'), ('their'), ('them'), ('then'), ('there'), ('these'),
  ('they'), ('this'), ('those'), ('to'), ('use'), ('used'), ('using'), ('via'), ('was'), ('we'),
  ('were'), ('what'), ('whats'), ('when'), ('where'), ('which'), ('while'), ('who'), ('whom'),
  ('why'), ('will'), ('with'), ('would'), ('you'), ('your');

-- Words that name the same thing in ops docs; a search matches any word of a group for any
-- other (query words are compared by stem, so plurals and verb forms need no row).
create table mdfts_synonyms (
  grp  integer not null,
  word text not null,
  stem text not null default '',  -- filled below with search.sql's stemmer
  primary key (grp, word)
) without rowid;
insert into mdfts_synonyms (grp, word) values
  (1, 'env'), (1, 'environment'), (1, 'envvar'),
  (2, 'var'), (2, 'variable'),
  (3, 'config'), (3, 'configuration'), (3, 'configure'), (3, 'cfg'), (3, 'settings'),
  (4, 'db'), (4, 'database'),
  (5, 'rollback'), (5, 'revert'), (5, 'undo'), (5, 'downgrade'),
  (6, 'oncall'), (6, 'pager'), (6, 'page'), (6, 'paging'), (6, 'escalation'), (6, 'escalate'),
  (7, 'permission'), (7, 'access'), (7, 'perms'), (7, 'acl'), (7, 'grant'),
  (8, 'deploy'), (8, 'deployment'), (8, 'release'), (8, 'rollout'), (8, 'ship'), (8, 'shipping'),
  (8, 'version'),
  (9, 'checklist'), (9, 'checks'), (9, 'preflight'),
  (10, 'migration'), (10, 'migrate'), (10, 'schema'),
  (11, 'error'), (11, 'failure'), (11, 'err'),
  (12, 'alert'), (12, 'alerting'), (12, 'alarm'), (12, 'monitoring'), (12, 'threshold'),
  (13, 'dashboard'), (13, 'graphs'), (13, 'metrics'),
  (14, 'retention'), (14, 'retain'), (14, 'ttl'), (14, 'expiry'), (14, 'keep'),
  (15, 'secret'), (15, 'credential'), (15, 'creds'), (15, 'password'),
  (16, 'flag'), (16, 'toggle'),
  (17, 'log'), (17, 'logging'),
  (18, 'restart'), (18, 'reboot'), (18, 'bounce'),
  (19, 'latency'), (19, 'slow'), (19, 'slowness'),
  (20, 'outage'), (20, 'incident'), (20, 'downtime'),
  (21, 'backup'), (21, 'snapshot'),
  (22, 'restore'), (22, 'recover'), (22, 'recovery'),
  (23, 'auth'), (23, 'authentication'), (23, 'login'), (23, 'sso'),
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
  (38, 'night'), (38, 'weekend'), (38, 'overnight'), (38, 'afterhours'),
  (39, 'delete'), (39, 'deletion'), (39, 'remove'), (39, 'purge'),
  (40, 'doc'), (40, 'runbook'), (40, 'playbook'), (40, 'sop'),
  (41, 'rotate'), (41, 'rotation'), (41, 'renew'), (41, 'renewal'), (41, 'rollover'),
  (42, 'local'), (42, 'locally'), (42, 'laptop'), (42, 'localhost'),
  (43, 'previous'), (43, 'prior'), (43, 'last');
update mdfts_synonyms set stem = (select substr(case
    when length(w) > 5 and w like '%ies' then substr(w, 1, length(w) - 3)
    when length(w) > 5 and w like '%ing' then substr(w, 1, length(w) - 3)
    when length(w) > 4 and w like '%ed' then substr(w, 1, length(w) - 2)
    when length(w) > 4 and w like '%es' then substr(w, 1, length(w) - 2)
    when length(w) > 3 and w like '%s' and w not like '%ss' then substr(w, 1, length(w) - 1)
    else w end, 1, 5) from (select word as w));
create index mdfts_synonyms_stem on mdfts_synonyms(stem, grp);
