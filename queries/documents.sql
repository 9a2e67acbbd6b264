-- documents: the indexed documents, optionally only those whose path matches a GLOB.
-- params:  :glob a GLOB pattern on the path, e.g. 'runbooks/*', default every document;
--          :limit rows to return, default 1000
-- returns: id, path, title, lines, sections, sha256; by path.
select d.id, d.path, d.title, d.lines, d.sections, d.sha256
from documents as d
-- (An empty pattern means every document; one over 4096 characters matches nothing: SQLite
-- refuses very long GLOB patterns.)
where case when coalesce(:glob, '') = '' then 1 when length(:glob) > 4096 then 0 else d.path glob :glob end
order by d.path
limit coalesce(nullif(:limit, ''), 1000);
