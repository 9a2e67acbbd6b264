-- diff_tokens: exact tokens (as written) found in only one of the indexes, with where they are.
-- params:  none; `old` and `new` are attached databases
-- returns: status, token, kind, path, anchor, heading, start_line; by status, token, path, line
-- A token in an unchanged document is in both indexes, so only changed documents are read.
select * from (
select 'added' as status, t.token, t.kind, s.path, s.anchor, s.heading, s.start_line
from new.tokens as t
join new.sections as s on s.id = t.section_id
join new.documents as d on d.id = s.document_id
where not exists (select 1 from old.documents as od where od.path = d.path and od.sha256 = d.sha256)
  and not exists (select 1 from old.tokens as o where o.norm = t.norm and o.token = t.token)
union all
select 'removed', t.token, t.kind, s.path, s.anchor, s.heading, s.start_line
from old.tokens as t
join old.sections as s on s.id = t.section_id
join old.documents as d on d.id = s.document_id
where not exists (select 1 from new.documents as nd where nd.path = d.path and nd.sha256 = d.sha256)
  and not exists (select 1 from new.tokens as n where n.norm = t.norm and n.token = t.token)
)
order by status, token, kind, path, start_line;
