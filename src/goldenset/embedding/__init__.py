"""The embed stage's logic: sentence-transformers encoding (encoder), the content-addressed vector
cache shared through a DVC remote (cache), and the same encoding on a Ray cluster (ray)."""
