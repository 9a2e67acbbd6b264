-- neighbors: a section with its parent, previous and next sections, its children and what it
-- includes.
-- params:  :id (required) a section id
-- returns: relation (self, parent, previous, next, child, included), id, path, level, heading,
--          anchor, start_line, end_line, chars, body; in the order self, parent, previous, next,
--          children by line, then the sections of the files its include directives name
--          (`{!x.md!}`, `--8<-- "x.md"`: section_includes.files) that the index holds, a file at a
--          time in the order they were read, each by line.
with me as (select * from sections where id = :id)
select relation, s.id, s.path, s.level, s.heading, s.anchor, s.start_line, s.end_line, s.chars, s.body
from (
  select 'self' as relation, 0 as ord, id from me
  union all select 'parent', 1, parent_id from me where parent_id is not null
  union all select 'previous', 2, prev_id from me where prev_id is not null
  union all select 'next', 3, next_id from me where next_id is not null
  union all select 'child', 4, c.id from me join sections as c
    on c.document_id = me.document_id and c.parent_id = me.id
  union all select 'included', 5 + f.key, s.id
    from me join section_includes as i on i.section_id = me.id, json_each(i.files) as f
         join documents as d on d.path = f.value join sections as s on s.document_id = d.id
) as r
join sections as s on s.id = r.id
order by r.ord, s.start_line;
