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
  sha256       text not null,          -- of the file's bytes
  bytes        integer not null,
  lines        integer not null,
  sections     integer not null,
  last_commit  text,                   -- git: last commit that touched the file (when known)
  rows_sha256  text not null           -- sha256 of the document's rows (build --previous checks it)
);

create table sections (
  id           integer primary key,
  document_id  integer not null references documents(id),
  path         text not null,
  title        text not null,          -- the document's title (repeated here for search)
  ordinal      integer not null,       -- position in the document, from 0
  level        integer not null,       -- 1-6 for headings; 0 for the lead text before the first
  heading      text not null,
  trail        text not null,          -- JSON array: ancestor headings, then this heading
  anchor       text not null,          -- GitHub-compatible slug (-1, -2 for repeats)
  start_line   integer not null,       -- 1-based, inclusive, the heading's own line
  end_line     integer not null,       -- 1-based, inclusive
  parent_id    integer references sections(id),
  prev_id      integer references sections(id),
  next_id      integer references sections(id),
  body         text not null,          -- the section's markdown, heading line included
  chars        integer not null,       -- length of body
  file_words   text not null,          -- the file name's words for search (mdfts.words.file_words)
  heading_parts text not null,         -- CamelCase parts of the heading's words, '' when none
  env_vars     text,                   -- JSON arrays of exact tokens, one column per kind;
  cli_flags    text,                   -- NULL when the section has none of that kind
  error_codes  text,
  identifiers  text,
  names        text,
  versions     text,
  dotted_names text,
  file_paths   text,
  urls         text,
  hosts        text,
  code_spans   text,
  -- Plain text, computed on read from body (emphasis and code markers removed) rather than
  -- stored a second time: the index stays near 2x the markdown instead of 3x.
  text         text generated always as (
    trim(replace(replace(replace(replace(body, '**', ''), '`', ''), '<br>', ' '), char(9), ' '))
  ) virtual,
  -- The heading with its CamelCase parts, as search matches it (sections_fts column head).
  head         text generated always as (trim(heading || ' ' || heading_parts)) virtual
);
create index sections_document on sections(document_id, ordinal);

create table tokens (
  norm       text not null,            -- lookup form: trimmed, ASCII lower-case
  section_id integer not null references sections(id),
  token      text not null,            -- as written
  kind       text not null,            -- env_var, cli_flag, error_code, identifier, name, ...
  source     text not null,            -- strongest place seen: heading, code, fence or text
  primary key (norm, section_id, token, kind)
) without rowid;

-- porter: FTS5's built-in English stemmer over unicode61 words (rolling, rolled → roll), in
-- every FTS5 build. Exact identifiers are matched through `tokens`, not stems.
create virtual table sections_fts using fts5(
  path, file_words, title, head, trail, text,
  env_vars, cli_flags, error_codes, identifiers, names, versions, dotted_names,
  file_paths, urls, hosts, code_spans,
  content="sections", content_rowid="id",
  tokenize="porter unicode61 remove_diacritics 2"
);

create table mdfts_queries (
  name        text primary key,
  title       text not null,
  description text not null,
  params      text not null,           -- JSON array of parameter names, without the colon
  sql         text not null
) without rowid;
