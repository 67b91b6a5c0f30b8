"""The metrics, and how a ranking is judged: each measure declared once (measures: the registry
MEASURES), computed like trec_eval over ranked index arrays (ranking, ranking_measures), in views
that favour no chunk size (views: documents ranked by their best chunk, a context budget), from
judgments built out of evidence spans or document qrels (relevance), beside the level a random
ranking already reaches (chance). Pure functions over arrays and tables: no file is read here."""
