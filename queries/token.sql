-- token: sections that contain an exact token, case-sensitive matches first.
-- params:  :token (required) e.g. PAYMENTS_DB_URL, --force-with-lease, E1027;
--          :limit rows to return, default 20
-- returns: id, path, heading, anchor, start_line, end_line, token (as written in the
--          section), kind, source (heading, definition, code, fence or text), exact (1 when
--          the case matches too); exact matches first, then by path and line.
-- The token is looked up by its normal form (trimmed of quotes, brackets and trailing
-- punctuation, ASCII lower-case; mdfts.tokens.normalize), so `e1027` finds E1027 too. A slash
-- before a name of one part ('/www.example.org') is dropped, as the builder drops it: a path
-- has two parts at least, and the builder indexes the name alone (search.sql does the same).
with t0(raw) as (
  select rtrim(ltrim(trim(cast(coalesce(:token, '') as text)), '"''`([{<'), '"''`)]}>.,:;!?')
),
t(raw) as (
  select case when raw glob '/?*' and substr(raw, 2) not glob '*/*' then substr(raw, 2) else raw end from t0
)
select s.id, s.path, s.heading, s.anchor, s.start_line, s.end_line,
  tk.token, tk.kind, tk.source, tk.token = t.raw as exact
from t
join tokens as tk on tk.norm = lower(t.raw)
join sections as s on s.id = tk.section_id
order by exact desc, s.path, s.start_line, tk.token, tk.kind
limit coalesce(nullif(:limit, ''), 20);
