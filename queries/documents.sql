-- documents: the indexed documents, optionally only those whose path matches a GLOB.
-- params:  :glob a GLOB pattern on the path, e.g. 'runbooks/*', default every document;
--          :limit rows to return, default 1000
-- returns: id, path, title, lines, sections, sha256; by path.
select d.id, d.path, d.title, d.lines, d.sections, d.sha256
from documents as d
where d.path glob coalesce(nullif(:glob, ''), '*')
order by d.path
limit coalesce(nullif(:limit, ''), 1000);
