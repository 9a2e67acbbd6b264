-- section: one section by id, or by path and anchor.
-- params:  :id a section id; or :path (relative, as stored) and :anchor (the GitHub-style
--          slug, "" or NULL for the lead text before the first heading)
-- returns: id, path, title, level, heading, trail (JSON array), anchor, start_line, end_line,
--          parent_id, prev_id, next_id, chars, body; one row or none.
select s.id, s.path, s.title, s.level, s.heading, s.trail, s.anchor, s.start_line, s.end_line,
  s.parent_id, s.prev_id, s.next_id, s.chars, s.body
from sections_full as s
where s.id = (
  select coalesce(nullif(:id, ''), (
    select x.id from sections as x
    where x.document_id = (select id from documents where path = :path)
      and x.anchor = coalesce(:anchor, '')
    order by x.ordinal limit 1)))
limit 1;
