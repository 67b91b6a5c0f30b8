"""People's review of the golden set, and what the audit does with it.

verdicts   the verdict file as the page writes it (its format: goldenset.corpus.verdicts), undo
           through the file, and two labellers' agreement
pass_shares what the audit reports: the people's pass share, each labeller's, their agreement,
           and the judge against them
queue      the order to review in: a seeded random sample, then what the judge is least sure of
views      what one screen shows: a query in its document, and a retriever's miss beside another's
server     `goldenset review`: the page on 127.0.0.1 and the API it calls
"""
