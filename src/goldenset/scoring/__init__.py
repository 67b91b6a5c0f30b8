"""The score stage's logic, read top down:

- configuration: the three edges, read the pipeline's files, score them in memory, write the
  outputs;
- inputs: what scoring reads (ScoreInputs) and what a run's items are cut from (Chunking);
- prepared: each query set projected onto a chunking (its judgments over the items, its views);
- evaluation: every retriever's run over one chunking, on every query set, evaluated;
- ranked: the one evaluator (a run against a set's judgments: metrics, chance levels, rows);
- outputs: each chunking's scores gathered into the stage's files;
- retrievers: the interface, the registry and a module per built-in retriever; topk, the exact
  top-k engine they share;
- stores: the adapters that ask a team's store; locate and foreign place a store's passages in
  their documents and make the chunking it is scored over;
- team_code: the one door for a team's own module:function; query_cache keeps its answers;
- exports and reports: the TREC runs, the BEIR export and the worst-misses report; tokens
  counts the context budget's tokens; params and retriever_params are the params.yaml sections
  `score:` and `retrievers:`.
"""
