"""What every stage shares: params.yaml validated (params), the one registry idiom every extension
point uses and its plugins (registry; registered: a params value naming an entry), the pipeline's
file names (paths), atomic writers and the JSON Lines reader (files), stored vectors (vectors),
Markdown table cells (markdown), errors that name the param to change (errors) and the stage
runner that prints them as one line (stage); text helpers shared by chunking and question writing
(spans: sentences, paragraphs, sections, windows; echo: content words and a question's overlap
with its document); the bootstrap and paired tests (stats); where a packaged model lives
(packaged_models)."""
