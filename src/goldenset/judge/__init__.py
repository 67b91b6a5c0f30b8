"""The judge: how likely a person applying the strict rule is to accept a golden-set question.

features.py measures each question (pure functions over texts, vectors and the corpus's word
rarity); model.py holds one logistic model per criterion, fitted on the labels in `labels/` and
shipped as weights.json; validate.py refits them and reports their cross-validated ROC AUC, the
figure that says whether a criterion may be trusted.
"""
