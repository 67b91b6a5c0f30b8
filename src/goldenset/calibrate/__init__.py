"""`goldenset calibrate`: configurations run through the chunk, embed and score stages' code in a
scratch copy (runs), and the golden set's ranking of them set against a reference query set's:
Kendall tau with a bootstrap interval and agreement on the pairs the reference separates
(agreement)."""
