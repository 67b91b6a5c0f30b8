"""Judging runs: a run (goldenset.retrieval.run.Run) meets its qrels here and nowhere else.

- qrels: which items answer which query (Qrels), the run's peer;
- projection: a run read as the items of one view of a query set (RunItems);
- measures: every metric declared once (MEASURES), computed like trec_eval over ranked index
  arrays (ranking, ranking_measures), in views that favour no chunk size (views: documents
  ranked by their best chunk; context: a token budget), from judgments built out of evidence
  spans or document qrels (relevance), beside what a random ranking reaches (chance);
  approximation: an approximate search against the exact one;
- evaluator: one run on one query set, scored (metrics, chance levels, result rows);
- public: ``goldenset.evaluate(qrels, run, metrics)``, on ``{qid: {doc_id: score}}`` dicts.

Pure functions over arrays and tables: no file is read here.
"""
