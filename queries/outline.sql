-- outline: the headings of one document, as a table of contents.
-- params:  :path (required) the document's path, as stored
-- returns: id, level, heading, anchor, start_line, end_line, chars; in document order.
select s.id, s.level, s.heading, s.anchor, s.start_line, s.end_line, s.chars
from sections as s
where s.document_id = (select id from documents where path = :path)
order by s.ordinal;
