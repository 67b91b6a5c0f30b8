"""Test support, not pipeline code: loopback servers (LLM APIs, the batch API, S3) and a project
copy driven by the real git and dvc CLIs, shared by the tests and the benchmarks.

Nothing in the pipeline imports this package, and importing goldenset does not import it.
`dvc_project` copies this repository's own pipeline, so it works from a source checkout only;
`s3_server` needs the test extra (moto), imported when a server starts.
"""
