-- diff_sections: sections added, removed or changed (body differs), keyed by path and anchor (and
-- whether it is the lead text, whose anchor is '' as a heading's of only punctuation is).
-- params:  none; `old` and `new` are attached databases
-- returns: status, path, anchor, heading, level, old_start, old_end, new_start, new_end, included;
--          by path, then line (new, else old), then anchor
-- Only documents whose bytes changed (or that came or went) are compared: the rest are equal,
-- but for the text of the files their include directives name (section_includes): a section of
-- such a document whose included text changed is `changed` with `included` 1 (only sections
-- with include rows are read).
with o as (
  select s.path, s.anchor, s.heading, s.level, s.start_line, s.end_line, s.body
  from old.sections as s join old.documents as d on d.id = s.document_id
  where not exists (select 1 from new.documents as n where n.path = d.path and n.sha256 = d.sha256)
),
n as (
  select s.path, s.anchor, s.heading, s.level, s.start_line, s.end_line, s.body
  from new.sections as s join new.documents as d on d.id = s.document_id
  where not exists (select 1 from old.documents as o where o.path = d.path and o.sha256 = d.sha256)
),
inc as (
  select d.path, s.ordinal from new.section_includes as i join new.sections as s on s.id = i.section_id
    join new.documents as d on d.id = s.document_id
  union
  select d.path, s.ordinal from old.section_includes as i join old.sections as s on s.id = i.section_id
    join old.documents as d on d.id = s.document_id
)
select * from (
select 'added' as status, n.path, n.anchor, n.heading, n.level,
       null as old_start, null as old_end, n.start_line as new_start, n.end_line as new_end, 0 as included
from n left join o on o.path = n.path and o.anchor = n.anchor and (o.level = 0) = (n.level = 0)
where o.path is null
union all
select 'removed', o.path, o.anchor, o.heading, o.level, o.start_line, o.end_line, null, null, 0
from o left join n on n.path = o.path and n.anchor = o.anchor and (n.level = 0) = (o.level = 0)
where n.path is null
union all
select 'changed', n.path, n.anchor, n.heading, n.level, o.start_line, o.end_line, n.start_line, n.end_line, 0
from n join o on o.path = n.path and o.anchor = n.anchor and (o.level = 0) = (n.level = 0)
where o.body <> n.body
union all
-- (the same bytes give the same sections: matched by ordinal)
select 'changed', nd.path, ns.anchor, ns.heading, ns.level, os.start_line, os.end_line, ns.start_line, ns.end_line, 1
from inc
join new.documents as nd on nd.path = inc.path
join old.documents as od on od.path = inc.path and od.sha256 = nd.sha256
join new.sections as ns on ns.document_id = nd.id and ns.ordinal = inc.ordinal
join old.sections as os on os.document_id = od.id and os.ordinal = inc.ordinal
where coalesce((select text from new.section_includes where section_id = ns.id), '')
   <> coalesce((select text from old.section_includes where section_id = os.id), '')
)
order by path, coalesce(new_start, old_start), anchor, status;
