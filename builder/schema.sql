-- mdfts index schema. A public contract, documented in docs/schema.md and docs/versioning.md: bump
-- SCHEMA_VERSION in artifact.py on any change a consumer could notice; additions keep it.

create table mdfts_meta (
  key   text primary key,
  value text not null
) without rowid;

create table documents (
  id           integer primary key,
  path         text not null unique,   -- relative to the source root, "/" separators
  title        text not null,          -- front matter title, else the first h1, else the file name
  front_matter text not null,          -- JSON object ({} when there is none)
  sha256       text generated always as (lower(hex(sha256_bytes))) virtual,  -- of the file's bytes, hex
  bytes        integer not null,
  lines        integer not null,
  sections     integer not null,
  last_commit  text,                   -- git: last commit that touched the file (when known)
  rows_sha256  blob not null,          -- sha256 of the document's rows, 32 bytes (build --previous checks it)
  file_words   text not null,          -- the file name's words for search (mdfts.words.file_words)
  sha256_bytes blob not null           -- the file's sha256, 32 bytes (what sha256 spells; hex cost tldr-common 0.06x)
);

create table sections (
  id           integer primary key,
  document_id  integer not null references documents(id),
  path         text not null,
  ordinal      integer not null,       -- position in the document, from 0
  level        integer not null,       -- 1-6 for headings; 0 for the lead text before the first
  heading      text not null,
  -- JSON array: the ancestor headings; NULL when none. Generated from ancestors_packed (stored
  -- as the kinds are: 0.01x the corpus bytes less).
  ancestors    text generated always as ('["' || replace(ancestors_packed, char(31), '", "') || '"]') virtual,
  -- Columns a row gives without storing them (generated on read, from the row's own columns):
  -- sections of a document have consecutive ids in document order, and most anchors are the
  -- heading in lower case with hyphens for spaces. Stored, they cost 0.07x the corpus bytes.
  anchor       text generated always as (   -- GitHub-compatible slug (-1, -2 for repeats)
    coalesce(other_anchor, lower(replace(heading, ' ', '-')))
  ) virtual,
  start_line   integer not null,       -- 1-based, inclusive, the heading's own line
  end_line     integer not null,       -- 1-based, inclusive
  parent_id    integer references sections(id),
  prev_id      integer references sections(id) generated always as (
    case when ordinal > 0 then id - 1 end
  ) virtual,
  next_id      integer references sections(id) generated always as (
    case when not is_last then id + 1 end
  ) virtual,
  body         text not null,          -- the section's markdown, heading line included; HTML comments
                                       -- in its HTML blocks left out, their line breaks kept
  chars        integer generated always as (length(body)) virtual,
  heading_parts text not null,         -- CamelCase parts of the heading's words, '' when none
  -- JSON arrays of exact tokens, one column per kind, NULL when the section has none of that
  -- kind; generated on read from the *_packed columns below (the same strings, JSON-quoted, one
  -- char(31) between them instead of '", "' and no brackets: 0.05x the corpus bytes less).
  env_vars     text generated always as ('["' || replace(env_vars_packed, char(31), '", "') || '"]') virtual,
  cli_flags    text generated always as ('["' || replace(cli_flags_packed, char(31), '", "') || '"]') virtual,
  error_codes  text generated always as ('["' || replace(error_codes_packed, char(31), '", "') || '"]') virtual,
  identifiers  text generated always as ('["' || replace(identifiers_packed, char(31), '", "') || '"]') virtual,
  names        text generated always as ('["' || replace(names_packed, char(31), '", "') || '"]') virtual,
  versions     text generated always as ('["' || replace(versions_packed, char(31), '", "') || '"]') virtual,
  dotted_names text generated always as ('["' || replace(dotted_names_packed, char(31), '", "') || '"]') virtual,
  file_paths   text generated always as ('["' || replace(file_paths_packed, char(31), '", "') || '"]') virtual,
  urls         text generated always as ('["' || replace(urls_packed, char(31), '", "') || '"]') virtual,
  hosts        text generated always as ('["' || replace(hosts_packed, char(31), '", "') || '"]') virtual,
  code_spans   text generated always as ('["' || replace(code_spans_packed, char(31), '", "') || '"]') virtual,
  -- Plain text, computed on read from body (emphasis and code markers removed) rather than
  -- stored a second time: the index stays near 2x the markdown instead of 3x.
  text         text generated always as (
    trim(replace(replace(replace(replace(body, '**', ''), '`', ''), '<br>', ' '), char(9), ' '))
  ) virtual,
  -- The heading with its CamelCase parts, as search matches it (sections_fts column head).
  head         text generated always as (trim(heading || ' ' || heading_parts)) virtual,
  other_anchor text,                   -- the anchor when it is not lower(heading), spaces as '-'
  is_last      integer not null,       -- 1 for the document's last section (next_id is NULL)
  -- Each kind's tokens, sorted, JSON-quoted without their quotes, joined by char(31); NULL when
  -- none (read the JSON columns above; sections_fts reads these, tokenized the same).
  env_vars_packed text,
  cli_flags_packed text,
  error_codes_packed text,
  identifiers_packed text,
  names_packed text,
  versions_packed text,
  dotted_names_packed text,
  file_paths_packed text,
  urls_packed text,
  hosts_packed text,
  code_spans_packed text,
  ancestors_packed text                -- the ancestor headings as the kinds are packed; NULL when none
);
create index sections_document on sections(document_id, ordinal);

-- The text of the files a section's include directives name (`{!errors.md!}`, `--8<--
-- "errors.md"`: what the docs site shows in their place, mdfts.includes), searched with the
-- section's own text; a row only for the few sections that have some (a column of `sections`,
-- NULL in nearly every row, cost its header byte in each: 0.006x the corpus bytes). Read it
-- as `sections_full.included`.
create table section_includes (
  section_id integer primary key references sections(id),
  text       text not null,
  files      text not null             -- JSON array: those files' paths as the index names
                                       -- documents, in the order read (nested ones too)
);

-- A section with what it shares with others, read rather than stored a second time: its
-- document's title and file name words, and its trail (ancestors and heading): copies in every
-- row cost 0.12x the corpus bytes. What the shipped queries read when they need those columns
-- (sections_fts reads sections_indexed below: the same text, the token kinds as stored).
create view sections_full (
  id,            -- 1, 2, ... in (document path, position) order
  document_id,   -- the document (file) this section belongs to
  path,          -- the document's path
  title,         -- the document's title
  ordinal,       -- position in the document, from 0
  level,         -- 1-6 for headings; 0 for the lead text before the first
  heading,       -- the heading's text, inline markup removed; '' for the lead
  trail,         -- JSON array: ancestor headings, then this heading ([] for the lead)
  anchor,        -- GitHub-compatible slug (-1, -2 for repeats)
  start_line,    -- 1-based, inclusive, the heading's own line
  end_line,      -- 1-based, inclusive
  parent_id,     -- the enclosing section (one level up), if any
  prev_id,       -- the previous section in the same file
  next_id,       -- the next section in the same file
  body,          -- the section's markdown, heading line included
  chars,         -- length of body
  file_words,    -- the file name's words for search (mdfts.words.file_words)
  heading_parts, -- CamelCase parts of the heading's words, '' when none
  env_vars,      -- JSON arrays of exact tokens, one column per kind;
  cli_flags,     -- NULL when the section has none of that kind
  error_codes,
  identifiers,
  names,
  versions,
  dotted_names,
  file_paths,
  urls,
  hosts,
  code_spans,
  text,          -- plain text, computed on read from body (emphasis and code markers removed)
  head,          -- the heading with its CamelCase parts, as search matches it
  included,      -- the text of the files its include directives name; NULL when none
  included_files -- JSON array: those files' paths, in the order read; NULL when none
) as select
  s.id, s.document_id, s.path, d.title, s.ordinal, s.level, s.heading,
  -- the trail: the same JSON text schema 3 stored (a lookup of the parents would cost every
  -- search a few percent: sections_fts reads every column of each row it highlights)
  case when s.level = 0 then '[]'
       when s.ancestors_packed is null then '[' || json_quote(s.heading) || ']'
       else '["' || replace(s.ancestors_packed, char(31), '", "') || '", ' || json_quote(s.heading) || ']' end,
  s.anchor, s.start_line, s.end_line, s.parent_id, s.prev_id, s.next_id, s.body, s.chars,
  d.file_words, s.heading_parts, s.env_vars, s.cli_flags, s.error_codes, s.identifiers, s.names,
  s.versions, s.dotted_names, s.file_paths, s.urls, s.hosts, s.code_spans, s.text, s.head, i.text, i.files
-- (left joins on the key: SQLite leaves each out of a query that reads none of its columns)
from sections as s left join documents as d on d.id = s.document_id
  left join section_includes as i on i.section_id = s.id;

-- What sections_fts indexes, a row per section: sections_full's columns, but each kind's
-- tokens as stored (sections.<kind>_packed): FTS5 reads every column of a row it highlights, and
-- the separators tokenize as the JSON's punctuation does, so the index is the same without
-- spelling out eleven JSON arrays a read (that cost a search 2% more CPU).
create view sections_indexed (
  id, text, file_words, title, head, trail, path,
  env_vars, cli_flags, error_codes, identifiers, names, versions, dotted_names,
  file_paths, urls, hosts, code_spans
) as select
  -- (text, then the included text as plain text, as sections.text makes it from body)
  s.id, case when i.text is null then s.text
             else s.text || char(10) || trim(replace(replace(replace(replace(i.text, '**', ''), '`', ''), '<br>', ' '), char(9), ' ')) end,
  d.file_words, d.title, s.head,
  case when s.level = 0 then '[]'
       when s.ancestors_packed is null then '[' || json_quote(s.heading) || ']'
       else '["' || replace(s.ancestors_packed, char(31), '", "') || '", ' || json_quote(s.heading) || ']' end,
  s.path, s.env_vars_packed, s.cli_flags_packed, s.error_codes_packed, s.identifiers_packed, s.names_packed,
  s.versions_packed, s.dotted_names_packed, s.file_paths_packed, s.urls_packed, s.hosts_packed, s.code_spans_packed
from sections as s left join documents as d on d.id = s.document_id
  left join section_includes as i on i.section_id = s.id;

-- The exact tokens' lookup forms, each once (schema 6): a token row holds its form's number,
-- not its text. The numbers follow the forms' sorted order, so token_rows' key order is the
-- (norm, section) order the rows had when they held the text (0.18x the corpus bytes less on
-- the bench corpus, where most forms are in many sections).
create table token_norms (
  norm text primary key,               -- lookup form: trimmed, ASCII lower-case
  id   integer not null                -- 1, 2, ... in norm order
) without rowid;

-- The exact tokens, compact: `written` is '' when the token as written is its lookup form and
-- '^' when it is that form in capitals (most are one or the other); kind and source are the
-- positions of their names in the view `tokens` below, in one integer (a column less in every
-- row's header, and one value byte: 0.02x the corpus bytes). Read them through that view.
create table token_rows (
  token_id    integer not null,        -- token_norms.id: the lookup form
  section_id  integer not null references sections(id),
  written     text not null,           -- the token as written: '' = norm, '^' = upper(norm), else itself
  kind_source integer not null,        -- kind * 5 + source; kind 0-10 in the order of the view
                                       -- tokens, source 0-4: heading, definition, code, fence, text
  primary key (token_id, section_id, written, kind_source)  -- (one source a token and kind: the strongest)
) without rowid;

-- Exact-token lookup (token → section): look up with `where norm = lower(:token)` (one seek in
-- token_norms, then the form's rows in token_rows, in section order).
create view tokens (
  norm,        -- lookup form: trimmed, ASCII lower-case
  section_id,  -- the section (sections.id)
  token,       -- as written
  kind,        -- env_var, cli_flag, error_code, identifier, name, ...
  source       -- strongest place seen: heading, definition, code, fence or text
) as select
  n.norm, r.section_id,
  case r.written when '' then n.norm when '^' then upper(n.norm) else r.written end,
  case r.kind_source / 5 when 0 then 'url' when 1 then 'host' when 2 then 'cli_flag' when 3 then 'file_path'
    when 4 then 'env_var' when 5 then 'error_code' when 6 then 'identifier' when 7 then 'name'
    when 8 then 'version' when 9 then 'dotted' when 10 then 'code' end,
  case r.kind_source % 5 when 0 then 'heading' when 1 then 'definition' when 2 then 'code' when 3 then 'fence'
    when 4 then 'text' end
from token_norms as n join token_rows as r on r.token_id = n.id;

-- porter: FTS5's built-in English stemmer over unicode61 words (rolling, rolled → roll), in
-- every FTS5 build. Exact identifiers are matched through `tokens`, not stems.
-- text is column 0 (path is column 5: both weigh 1.0 in search.sql's bm25): FTS5 marks every
-- other column in each of a term's rows (2 bytes), and most of a term's rows hold it in text
-- only, so that order keeps the index 0.19x the corpus bytes smaller than path first (schema 4).
create virtual table sections_fts using fts5(
  text, file_words, title, head, trail, path,
  env_vars, cli_flags, error_codes, identifiers, names, versions, dotted_names,
  file_paths, urls, hosts, code_spans,
  -- The rows of sections, read through sections_indexed (which adds title, trail, file_words).
  -- Datasette offers its search box on the table it finds named here as content="sections".
  content="sections_indexed", content_rowid="id",
  tokenize="porter unicode61 remove_diacritics 2"
);

create table mdfts_queries (
  name        text primary key,
  title       text not null,
  description text not null,
  params      text not null,           -- JSON array of parameter names, without the colon
  sql         text not null
) without rowid;
