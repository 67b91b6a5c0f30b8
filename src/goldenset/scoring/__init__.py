"""The score stage's logic: one configuration scored from the pipeline's files (run), by
retrievers (the retrievers package, a module each, the exact ones over the top-k engine in topk)
whose ranked lists are judged per chunk, per document and per context budget (relevance, views),
measured (metrics: the measures declared in measures), set against chance (chance), and written as
metrics files (outputs), TREC and BEIR exports (exports) and the worst-misses report (reports).
querysets holds a query set with its judgments and turns ranked lists into scores; tokens counts
the context budget's tokens with one fixed tokenizer."""
