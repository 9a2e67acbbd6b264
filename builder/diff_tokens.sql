-- diff_tokens: exact tokens (as written) that a changed document gained or lost, with where they
-- are and how many other documents hold them (a renamed ENV var still used elsewhere shows here).
-- params:  none; `old` and `new` are attached databases
-- returns: status, token, kind, path, anchor, heading, start_line, other_documents (added: documents
--          of the old index that had it, 0 when new to the index; removed: documents of the new
--          index that still have it); by status, token, kind, path, line
-- A token in an unchanged document is in both indexes, so only changed documents are read.
select * from (
select 'added' as status, t.token, t.kind, s.path, s.anchor, s.heading, s.start_line,
       (select count(distinct os.document_id) from old.tokens as o join old.sections as os on os.id = o.section_id
        where o.norm = t.norm and o.token = t.token) as other_documents
from new.tokens as t
join new.sections as s on s.id = t.section_id
join new.documents as d on d.id = s.document_id
where not exists (select 1 from old.documents as od where od.path = d.path and od.sha256 = d.sha256)
  and not exists (select 1 from old.tokens as o join old.sections as os on os.id = o.section_id
                  where o.norm = t.norm and o.token = t.token and os.path = s.path)
union all
select 'removed', t.token, t.kind, s.path, s.anchor, s.heading, s.start_line,
       (select count(distinct ns.document_id) from new.tokens as n join new.sections as ns on ns.id = n.section_id
        where n.norm = t.norm and n.token = t.token)
from old.tokens as t
join old.sections as s on s.id = t.section_id
join old.documents as d on d.id = s.document_id
where not exists (select 1 from new.documents as nd where nd.path = d.path and nd.sha256 = d.sha256)
  and not exists (select 1 from new.tokens as n join new.sections as ns on ns.id = n.section_id
                  where n.norm = t.norm and n.token = t.token and ns.path = s.path)
)
order by status, token, kind, path, start_line;
