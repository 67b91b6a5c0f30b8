"""`goldenset calibrate`: configurations run through the chunk, embed and score stages' code in a
scratch copy (runs), and the golden set's ranking of them set against a reference query set's:
Kendall tau with a bootstrap interval and agreement on the pairs the reference separates
(agreement), over the whole grid and each close-call group (groups), against the reference's own
half-against-half noise ceiling (noise), with the retriever-family bias per chunking (bias);
figures gathers them per view, report renders the Markdown, the JSON and the plot's rows."""
