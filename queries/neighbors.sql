-- neighbors: a section with its parent, previous and next sections and its children.
-- params:  :id (required) a section id
-- returns: relation (self, parent, previous, next, child), id, path, level, heading, anchor,
--          start_line, end_line, chars, body; in the order self, parent, previous, next, then
--          children by line.
with me as (select * from sections where id = :id)
select relation, s.id, s.path, s.level, s.heading, s.anchor, s.start_line, s.end_line, s.chars, s.body
from (
  select 'self' as relation, 0 as ord, id from me
  union all select 'parent', 1, parent_id from me where parent_id is not null
  union all select 'previous', 2, prev_id from me where prev_id is not null
  union all select 'next', 3, next_id from me where next_id is not null
  union all select 'child', 4, c.id from me join sections as c
    on c.document_id = me.document_id and c.parent_id = me.id
) as r
join sections as s on s.id = r.id
order by r.ord, s.start_line;
