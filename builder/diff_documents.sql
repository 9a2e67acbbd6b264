-- diff_documents: documents added, removed or changed (bytes differ) from index `old` to `new`.
-- params:  none; `old` and `new` are attached databases
-- returns: status, path, old_sections, new_sections; by path
select 'added' as status, n.path, null as old_sections, n.sections as new_sections
from new.documents as n
where not exists (select 1 from old.documents as o where o.path = n.path)
union all
select 'removed', o.path, o.sections, null
from old.documents as o
where not exists (select 1 from new.documents as n where n.path = o.path)
union all
select 'changed', n.path, o.sections, n.sections
from new.documents as n join old.documents as o on o.path = n.path
where o.sha256 <> n.sha256
order by path, status;
