"""The pipeline's stages, one module each, run in a project folder as
`python -m goldenset.stages.<name>`."""
