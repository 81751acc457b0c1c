-- Documents beyond HTML (issue 27 item 2): what kind of response each page is, why a document gave
-- no content, and the PDF pages each chunk comes from.
--
-- pages.source_type: 'html' (an HTML or XHTML page, fetched or rendered) or a document converter's
--   type ('pdf', 'markdown', 'text', 'docx'; extract/documents). Rows stored before this migration
--   were all HTML: the crawler took nothing else.
-- pages.document_failure: the named reason a document yielded no content ('pdf-encrypted',
--   'pdf-broken', 'pdf-no-text', 'pdf-timeout', 'docx-broken', 'not-text'); NULL otherwise. Such a
--   page is stored, not indexed, and its reason is in the fetch log (outcome = the reason).
-- chunks.page_first / page_last: 1-based PDF pages the chunk's text spans; NULL for other types.
ALTER TABLE pages ADD COLUMN source_type text NOT NULL DEFAULT 'html';
ALTER TABLE pages ADD COLUMN document_failure text;
ALTER TABLE chunks ADD COLUMN page_first integer;
ALTER TABLE chunks ADD COLUMN page_last integer;
