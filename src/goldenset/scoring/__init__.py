"""The wiring of the score stage, used alike by the stage, `goldenset calibrate` and the
benchmarks: reading a project, making each chunking's runs (goldenset.retrieval) and judging them
(goldenset.evaluation), writing the outputs. Read top down:

- configuration: the three edges, read the pipeline's files, score them in memory, write the
  outputs;
- inputs: what scoring reads (ScoreInputs) and what a run's items are cut from (Chunking);
- prepared: each query set projected onto a chunking (its qrels over the items, its views);
- one_chunking: every retriever's run over one chunking, on every query set, evaluated;
- store_chunking: a store's passages placed in their documents, the chunking it is scored over;
- outputs: each chunking's scores gathered into the stage's files; reviewed: people's verdicts
  applied to the golden set; exports and reports: the BEIR export and the worst-misses report;
- tokens counts the context budget's tokens; params is the params.yaml section `score:`.
"""
